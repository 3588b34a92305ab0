"""Rule data_summary: collect per-source and per-region counts into one table (CSV + Markdown), and the
one-line data label every figure, table and the report carry (results/data/source_label.json)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import json
import logging

import pandas as pd

from shuffledp.data.source import data_label, read_source_record
from shuffledp.data.summary import combine_summaries
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.tables import write_table

setup_job_log(snakemake)
log = logging.getLogger("data_summary")

summary = combine_summaries(
    pd.read_csv(path) for path in [*snakemake.input.sources, *snakemake.input.regions]
)
record = read_source_record(snakemake.input.record)
regions = {
    row["name"]: {
        "label": row["label"],
        "kept": int(row["kept"]),
        "paper_count": None if pd.isna(row["paper_count"]) else int(row["paper_count"]),
    }
    for _, row in summary[summary["level"] == "region"].iterrows()
}
label = {**record, "regions": regions, "label": data_label(record, regions)}
log.info("%s", label["label"])
atomic_write_text(snakemake.output.label, json.dumps(label, indent=2) + "\n")
log.info("\n%s", summary.to_string(index=False))
# Markdown shows missing counts as blanks rather than <NA>.
shown = summary.astype(object).where(summary.notna(), "")
write_table(summary, csv=snakemake.output.csv)
write_table(
    shown,
    markdown=snakemake.output.markdown,
    caption="Gowalla check-ins: rows read, malformed rows by reason, exact duplicate rows, kept; crop counts next to the paper's. "
    + label["label"],
)
