"""Rule utility_boxplot: Figures 6/7 -- box plots of TV vs n, one panel per privacy setting, and the delta at
which the Gaussian would match shuffle+INV (how much the delta floor decides), for each region (one figure,
CSV and log per region, all regions in one job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.data.source import read_source_record, region_label
from shuffledp.experiments.utility_tables import floor_break_even
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log
from shuffledp.mechanisms import sensitivity_for
from shuffledp.plotting.style import add_data_label, run_label
from shuffledp.plotting.utility import figure_tv_boxplots

setup_job_log(snakemake)
params = snakemake.params
data = read_source_record(snakemake.input.label)
jobs = zip(
    params.regions,
    snakemake.input.community,
    params.grids,
    params.labels,
    snakemake.output.png,
    snakemake.output.floor,
)
for region, community_csv, grid, label, png, floor_csv in item_logs(jobs, snakemake.log):
    frame = pd.read_csv(community_csv)
    k = grid["n_lat"] * grid["n_lon"]
    floor = floor_break_even(frame, k=k, sensitivity=sensitivity_for(params.utility["neighbouring"]))
    atomic_write_text(floor_csv, floor.to_csv(index=False))
    # the box plots show one calibration: `configured` (the tightest valid upper bound) when it was run,
    # else the first one listed; the CSV holds every calibration, judged side by side in the report
    shown = "configured" if (frame["calibration"] == "configured").any() else frame["calibration"].iloc[0]
    frame = frame[frame["calibration"] == shown]
    figure = figure_tv_boxplots(frame, label=label)
    add_data_label(figure, run_label(params.grid_profile, region_label(data, data["regions"][region])))
    with atomic_output(png) as temporary:
        figure.savefig(temporary, dpi=120)
    plt.close(figure)
