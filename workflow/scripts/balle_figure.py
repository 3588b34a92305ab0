"""Rule balle_panel: one panel of Balle et al.'s Figure 3 -- our curves and references (CSV)."""

import logging

from shuffledp.experiments.balle import panel_frame
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
frame = panel_frame(snakemake.wildcards.panel, snakemake.params.section)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
logging.info("%s", frame.groupby(["role", "curve"], sort=False)["seconds"].sum().to_string())
