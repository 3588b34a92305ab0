"""Rule utility_heatmap_<region>: Figures 4/5 -- original, Gaussian and shuffle+INV distributions over cells."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp.experiments.utility import heatmap_job  # noqa: E402
from shuffledp.io import atomic_output, atomic_write_text  # noqa: E402
from shuffledp.joblog import setup_job_log  # noqa: E402
from shuffledp.plotting.utility import figure_heatmaps  # noqa: E402

setup_job_log(snakemake)
params = snakemake.params
cells = pd.read_csv(snakemake.input.cells).sort_values("cell")
estimates, summary = heatmap_job(cells["count"].to_numpy(), utility=params.utility, seed=params.seed, region=params.region)
atomic_write_text(snakemake.output.cells, estimates.to_csv(index=False))
atomic_write_text(snakemake.output.summary, summary.to_csv(index=False))
figure = figure_heatmaps(estimates, summary, n_lon=params.grid["n_lon"], n_lat=params.grid["n_lat"], label=params.label)
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
logging.info("%s", summary.to_string())
