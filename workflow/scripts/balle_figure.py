"""Rule balle_panel: one panel of Balle et al.'s Figure 3 -- our curves and references (CSV)."""

import logging

import pandas as pd

from shuffledp.experiments.balle import panel_frame, shared_values
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
# reference points shared with another panel: computed once by rule balle_references (exact floats)
known = {}
for path in snakemake.input:
    known.update(shared_values(pd.read_csv(path, float_precision="round_trip")))
frame = panel_frame(snakemake.wildcards.panel, snakemake.params.section, known=known)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
logging.info("%s", frame.groupby(["role", "curve"], sort=False)["seconds"].sum().to_string())
