"""Rule data_summary: collect per-source and per-region counts into one table (CSV + Markdown)."""

import logging

import pandas as pd

from shuffledp.data.summary import combine_summaries
from shuffledp.joblog import setup_job_log
from shuffledp.tables import write_table

setup_job_log(snakemake)
log = logging.getLogger("data_summary")

summary = combine_summaries(
    pd.read_csv(path) for path in [*snakemake.input.sources, *snakemake.input.regions]
)
log.info("\n%s", summary.to_string(index=False))
# Markdown shows missing counts as blanks rather than <NA>.
shown = summary.astype(object).where(summary.notna(), "")
write_table(summary, csv=snakemake.output.csv)
write_table(
    shown,
    markdown=snakemake.output.markdown,
    caption="Gowalla check-ins: rows read, malformed rows by reason, exact duplicate rows, kept; crop counts next to the paper's.",
)
