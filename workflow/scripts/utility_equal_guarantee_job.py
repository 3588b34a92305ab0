"""Rule utility_equal_guarantee_job: every mechanism at every target (eps, delta) on one dataset of n users."""

import logging

import pandas as pd

from shuffledp.experiments.equal_guarantee import dataset_counts, utility_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
dataset, n_users = snakemake.wildcards.dataset, int(snakemake.wildcards.n)
utility = snakemake.params.utility
cell_counts = None
if "cells" in snakemake.input.keys():
    cells = pd.read_csv(snakemake.input.cells).sort_values("cell")
    cell_counts = cells["count"].to_numpy()
    logging.info("%s: %d cells, %d check-ins; n = %d drawn with replacement", dataset, len(cells), cell_counts.sum(), n_users)
counts = dataset_counts(dataset, n_users, utility=utility, seed=snakemake.params.seed, cell_counts=cell_counts)
calibration = pd.read_csv(snakemake.input.calibration)
rows = utility_job(counts, calibration, dataset=dataset, equal=utility["equal_guarantee"],
                   neighbouring=utility["neighbouring"], seed=snakemake.params.seed)
logging.info("%s", rows.pivot_table(index=["epsilon", "delta_rule"], columns=["mechanism"], values="tv_mean").to_string())
atomic_write_text(snakemake.output[0], rows.to_csv(index=False))
