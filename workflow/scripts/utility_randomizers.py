"""Rule utility_randomizers: the grid jobs' rows (one Parquet file per (dataset, n), read in the configuration's
order) combined into the tidy CSV, the verdicts CSV and the figure."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import json
import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.experiments.randomizer_grid import combine, verdicts
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.maps import add_data_label
from shuffledp.plotting.randomizers import figure_randomizers

setup_job_log(snakemake)
frames = [pd.read_parquet(path) for path in snakemake.input.grids]
frame = combine(frames)
logging.info("%d grid files, %d rows", len(frames), len(frame))
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
atomic_write_text(snakemake.output.verdicts, verdicts(frame).to_csv(index=False))
figure = figure_randomizers(frame)
for label in snakemake.input.label:  # the Gowalla data, when a region is among the datasets
    add_data_label(figure, json.loads(Path(label).read_text(encoding="utf-8"))["label"])
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
