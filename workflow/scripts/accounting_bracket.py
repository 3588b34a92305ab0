"""Rule accounting_bracket: the worst-case bracket (lower vs valid upper epsilon) from its shards, in the
grid's order -> CSV and Markdown."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.guarantees import bracket_combine, bracket_markdown
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
log = logging.getLogger("accounting_bracket")

frame = bracket_combine(
    snakemake.params.bracket,
    [pd.read_csv(path) for path in snakemake.input.shards],
)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
atomic_write_text(snakemake.output.markdown, bracket_markdown(frame))
log.info(
    "bracket: %d rows; ratio min %.6g, median %.6g, max %.6g",
    len(frame),
    frame["ratio"].min(),
    frame["ratio"].median(),
    frame["ratio"].max(),
)
