"""Rule utility_heatmap: Figures 4/5 -- original, Gaussian and shuffle+INV distributions over cells, for each
region (one figure, two CSVs and one log per region, all regions in one job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.data.source import read_source_record, region_label
from shuffledp.experiments.utility import heatmap_job
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log
from shuffledp.plotting.style import add_data_label, run_label
from shuffledp.plotting.utility import figure_heatmaps

setup_job_log(snakemake)
params, out = snakemake.params, snakemake.output
data = read_source_record(snakemake.input.label)
jobs = zip(
    params.regions, params.grids, params.labels, snakemake.input.cells, out.png, out.cells, out.summary
)
for region, grid, label, cells_csv, png, cells_out, summary_out in item_logs(jobs, snakemake.log):
    cells = pd.read_csv(cells_csv).sort_values("cell")
    estimates, summary = heatmap_job(
        cells["count"].to_numpy(), utility=params.utility, seed=params.seed, region=region
    )
    atomic_write_text(cells_out, estimates.to_csv(index=False))
    atomic_write_text(summary_out, summary.to_csv(index=False))
    figure = figure_heatmaps(estimates, summary, n_lon=grid["n_lon"], n_lat=grid["n_lat"], label=label)
    add_data_label(figure, run_label(params.grid_profile, region_label(data, data["regions"][region])))
    with atomic_output(png) as temporary:
        figure.savefig(temporary, dpi=120)
    plt.close(figure)
    logging.info("%s", summary.to_string())
