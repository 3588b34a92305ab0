"""Rule balle_references: the reference points two or more Balle panels need, computed once (CSV)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

from shuffledp.experiments.balle import shared_references
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
frame = shared_references(snakemake.params.panels)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
logging.info("%s", frame.groupby(["accountant", "k"], sort=False)["seconds"].sum().to_string())
