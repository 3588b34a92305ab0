"""Rule accounting_fig1: Figure 1, delta over (epsilon, epsilon_0), one panel per accountant."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from shuffledp.experiments.accounting import fig1_frame, fig1_grid  # noqa: E402
from shuffledp.io import atomic_output, atomic_write_text  # noqa: E402
from shuffledp.joblog import setup_job_log  # noqa: E402
from shuffledp.plotting.accounting import figure_delta_surfaces  # noqa: E402

setup_job_log(snakemake)
log = logging.getLogger("accounting_fig1")

settings = snakemake.params.fig1
frame = fig1_frame(settings)
atomic_write_text(snakemake.output.data, frame.to_csv(index=False))
names = list(settings["accountants"])
figure = figure_delta_surfaces(frame, accountants=names, grid_of=fig1_grid)
for name in names:
    grid = fig1_grid(frame, name)[2]
    log.info("%s: %d of %d grid points have delta = 0", name, int(np.isneginf(grid).sum()), grid.size)
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=150)
plt.close(figure)
