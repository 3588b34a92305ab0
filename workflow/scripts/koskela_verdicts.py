"""Rule koskela_verdicts: one verdict per published curve of Koskela et al.'s Figures 1-3."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.koskela import curve_verdicts, known_differences
from shuffledp.joblog import setup_job_log
from shuffledp.reference import load_reference
from shuffledp.tables import write_table

setup_job_log(snakemake)
ours = pd.concat([pd.read_csv(path) for path in snakemake.input], ignore_index=True)
published = load_reference("koskela_figures")
verdicts = curve_verdicts(
    ours,
    published,
    tolerance=snakemake.params.tolerance,
    smallest_delta=snakemake.params.smallest_delta,
    notes=known_differences(ours, published),
)
write_table(
    verdicts,
    csv=snakemake.output.csv,
    markdown=snakemake.output.md,
    caption="Koskela et al. Figures 1-3: one verdict per published curve",
)
logging.info("%s", verdicts[["figure", "curve", "compositions", "verdict"]].to_string())
