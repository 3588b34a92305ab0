"""Rule girgis_verdicts: one verdict per curve of Girgis et al.'s comparison and per claim our curves check."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.girgis import verdicts
from shuffledp.joblog import setup_job_log
from shuffledp.tables import write_table

setup_job_log(snakemake)
table = verdicts(pd.read_csv(snakemake.input[0]), snakemake.params.section)
write_table(
    table,
    csv=snakemake.output.csv,
    markdown=snakemake.output.md,
    caption="Girgis et al. (CCS 2021) Section 4 comparison: one verdict per curve and per checkable claim",
)
logging.info("%s", table[["curve", "verdict", "note"]].to_string())
