"""Rule utility_randomizers_grid: every shuffled randomizer at its tightest certified eps0 beside the curators, at
every target of utility.randomizers on one (dataset, n) (exact errors, nothing simulated); one Parquet file
(exact dtypes and values for the combine job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging
import time

import pandas as pd

from shuffledp.experiments.equal_guarantee import dataset_counts
from shuffledp.experiments.randomizer_grid import grid_job
from shuffledp.io import atomic_output
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
utility = snakemake.params.utility
dataset, n_users = snakemake.wildcards.dataset, int(snakemake.wildcards.n)
cell_counts = None
if snakemake.input.cells:
    cells = pd.read_csv(snakemake.input.cells[0]).sort_values("cell")
    cell_counts = cells["count"].to_numpy()
started = time.process_time()
counts = dataset_counts(
    dataset, n_users, utility=utility, seed=snakemake.params.seed, cell_counts=cell_counts
)
frame = grid_job(counts, dataset=dataset, grid=utility["randomizers"], neighbouring=utility["neighbouring"])
logging.info("%s n = %d: %d rows, %.2f CPU s", dataset, n_users, len(frame), time.process_time() - started)
with atomic_output(snakemake.output[0]) as temporary:
    frame.to_parquet(temporary, index=False)
