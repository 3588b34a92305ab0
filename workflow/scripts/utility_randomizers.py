"""Rule utility_randomizers: every shuffled randomizer at its tightest certified eps0 beside the curators, at
every (dataset, n, target) of utility.randomizers (one job: exact errors, nothing simulated); the tidy CSV, the
verdicts CSV and the figure."""

import json
import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.experiments.equal_guarantee import dataset_counts
from shuffledp.experiments.randomizer_grid import combine, grid_job, verdicts
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.maps import add_data_label
from shuffledp.plotting.randomizers import figure_randomizers

setup_job_log(snakemake)
utility = snakemake.params.utility
grid = utility["randomizers"]
frames = []
for dataset in grid["datasets"]:
    cell_counts = None
    if dataset in snakemake.params.cells:
        cells = pd.read_csv(snakemake.params.cells[dataset]).sort_values("cell")
        cell_counts = cells["count"].to_numpy()
    for n_users in grid["n_users"]:
        counts = dataset_counts(
            dataset, int(n_users), utility=utility, seed=snakemake.params.seed, cell_counts=cell_counts
        )
        frames.append(grid_job(counts, dataset=dataset, grid=grid, neighbouring=utility["neighbouring"]))
        logging.info("%s n = %d: %d rows", dataset, n_users, len(frames[-1]))
frame = combine(frames)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
atomic_write_text(snakemake.output.verdicts, verdicts(frame).to_csv(index=False))
figure = figure_randomizers(frame)
for label in snakemake.input.label:  # the Gowalla data, when a region is among the datasets
    add_data_label(figure, json.loads(Path(label).read_text(encoding="utf-8"))["label"])
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
