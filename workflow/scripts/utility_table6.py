"""Rule utility_table6: Table VI (Gowalla individual-specific utility), paper values beside ours."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.data.source import read_source_record
from shuffledp.experiments.utility_tables import individual_tables
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.reference import load_reference
from shuffledp.tables import write_table

setup_job_log(snakemake)
individual = pd.concat([pd.read_csv(path) for path in snakemake.input.individual], ignore_index=True)
data_line = read_source_record(snakemake.input.label)["label"]
wide, comparison = individual_tables(
    individual, load_reference("table6"), table="VI", block_of=lambda row: row["label"]
)
write_table(
    wide,
    csv=snakemake.output.csv,
    latex=snakemake.output.latex,
    markdown=snakemake.output.markdown,
    caption="Table VI: individual-specific utility |pi_hat_x0 - pi_x0| per grid cell x0 (mean of Monte-Carlo draws), "
    "Gowalla; delta floored per calibration; x0 note: cells without any check-in under our numbering. "
    + data_line,
)
atomic_write_text(snakemake.output.comparison, comparison.to_csv(index=False))
logging.info("verdicts: %s", comparison["verdict"].value_counts().to_dict())
