"""Rule accounting_table4: Table IV (paper values, eq. 6 as printed, exact single-bin delta)."""

import logging

from shuffledp.experiments.accounting import table4_frames, verdict_counts
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.reference import load_reference
from shuffledp.tables import write_table

setup_job_log(snakemake)
log = logging.getLogger("accounting_table4")

table, comparison = table4_frames(snakemake.params.table4, load_reference("table4"))
write_table(
    table,
    csv=snakemake.output.csv,
    latex=snakemake.output.latex,
    markdown=snakemake.output.markdown,
    caption="Table IV: tight delta for various epsilon, as printed (eq. 6) and exact",
)
atomic_write_text(snakemake.output.comparison, comparison.to_csv(index=False))
log.info("Table IV: %d cells; verdicts %s", len(table), verdict_counts(comparison))
