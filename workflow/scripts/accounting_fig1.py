"""Rule accounting_fig1: Figure 1, delta over (epsilon, epsilon_0), one panel per accountant."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from shuffledp._joblog import setup_job_log  # noqa: E402
from shuffledp.data.io import atomic_output  # noqa: E402
from shuffledp.experiments_accounting import ACCOUNTANT_LABELS, fig1_frame, fig1_grid  # noqa: E402
from shuffledp.plotting.accounting import plot_delta_surface  # noqa: E402
from shuffledp.tables import atomic_write_text  # noqa: E402

setup_job_log(snakemake)
log = logging.getLogger("accounting_fig1")

settings = snakemake.params.fig1
frame = fig1_frame(settings)
atomic_write_text(snakemake.output.data, frame.to_csv(index=False))
names = list(settings["accountants"])
grids = [fig1_grid(frame, name) for name in names]
finite = np.concatenate([grid[np.isfinite(grid)] for _, _, grid in grids] + [np.array([0.0])])
figure, axes = plt.subplots(1, len(names), figsize=(6.0 * len(names), 5.0), squeeze=False)
n_x0 = int(frame["n_x0"].iloc[0])
for ax, name, (epsilons, epsilon_locals, grid) in zip(axes[0], names, grids):
    title = f"{ACCOUNTANT_LABELS.get(name, name)}\nn = {settings['n_users']}, k = {settings['k']}, n_x0 = {n_x0}"
    plot_delta_surface(epsilons, epsilon_locals, grid, ax=ax, title=title, vmin=float(finite.min()), vmax=0.0)
    log.info("%s: %d of %d grid points have delta = 0", name, int(np.isneginf(grid).sum()), grid.size)
figure.tight_layout()
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=150)
plt.close(figure)
