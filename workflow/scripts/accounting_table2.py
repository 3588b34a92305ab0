"""Rule accounting_table2: Table II (paper values, rates as printed, eq. 6, exact and genuine bounds)."""

import logging

from shuffledp.experiments.accounting import table2_frames, verdict_counts
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.reference import load_reference
from shuffledp.tables import write_table

setup_job_log(snakemake)
log = logging.getLogger("accounting_table2")

table, comparison = table2_frames(snakemake.params.table2, load_reference("table2"))
write_table(
    table,
    csv=snakemake.output.csv,
    latex=snakemake.output.latex,
    markdown=snakemake.output.markdown,
    caption="Table II: delta of the paper's columns, our evaluation of them, and genuine bounds",
)
atomic_write_text(snakemake.output.comparison, comparison.to_csv(index=False))
log.info("Table II: %d rows; verdicts %s", len(table), verdict_counts(comparison))
