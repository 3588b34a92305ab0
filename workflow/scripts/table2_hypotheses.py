"""Rule table2_hypotheses: every fixed hypothesis for Table II's n = 1,000 "Our δ" cells, evaluated at every
cell (shuffledp.report.hypotheses); the report shows them all and which came closest."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.report.hypotheses import closest_hypotheses, table2_hypotheses

setup_job_log(snakemake)
log = logging.getLogger("table2_hypotheses")

paper = pd.read_csv(snakemake.input.comparison, dtype=str)
frame = table2_hypotheses(snakemake.params.table2, paper)
for row in closest_hypotheses(frame).itertuples():
    log.info(
        "%s: median %.1f, largest %.1f orders of magnitude from the printed cells",
        row.hypothesis,
        row.median_orders,
        row.largest_orders,
    )
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
