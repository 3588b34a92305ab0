"""Rule utility_fig2: Figure 2 -- TV distance vs n on synthetic data, one row per calibration of the Gaussian,
and the delta at which the Gaussian would match shuffle+INV (how much the delta floor decides)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.experiments.utility_tables import floor_break_even
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.mechanisms import sensitivity_for
from shuffledp.plotting.style import add_data_label, run_label
from shuffledp.plotting.utility import figure_tv_vs_n

setup_job_log(snakemake)
frame = pd.concat([pd.read_csv(path) for path in snakemake.input], ignore_index=True)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
utility = snakemake.params.utility
floor = floor_break_even(
    frame, k=utility["synthetic"]["k"], sensitivity=sensitivity_for(utility["neighbouring"])
)
atomic_write_text(snakemake.output.floor, floor.to_csv(index=False))
figure = figure_tv_vs_n(frame, k=snakemake.params.utility["synthetic"]["k"])
add_data_label(
    figure,
    run_label(
        snakemake.params.grid_profile, "Data: synthetic (the paper's discretised normal, no Gowalla data)"
    ),
)
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
