"""Rule accounting_sweep: one config sweep group -> tidy delta CSV and its figure."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from shuffledp._joblog import setup_job_log  # noqa: E402
from shuffledp.data.io import atomic_output  # noqa: E402
from shuffledp.experiments_accounting import sweep_frame, sweep_series  # noqa: E402
from shuffledp.plotting.accounting import plot_delta_curves  # noqa: E402
from shuffledp.tables import atomic_write_text  # noqa: E402

setup_job_log(snakemake)
log = logging.getLogger("accounting_sweep")

name, sweep = snakemake.params.name, snakemake.params.sweep
frame = sweep_frame(name, sweep)
atomic_write_text(snakemake.output.data, frame.to_csv(index=False))
x = sweep["x"]
labels = {"n_users": "n (number of users)", "k": "k (domain size)", "epsilon_local": "ε0 (local)",
          "epsilon": "ε (central)", "n_x0_fraction": "n_x0 / n"}
figure, ax = plt.subplots(figsize=(8.0, 5.5))
plot_delta_curves(sweep_series(frame, x), ax=ax, xlabel=labels[x], title=f"delta sweep: {name}",
                  log_x=(x == "n_users"))
figure.tight_layout()
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=150)
plt.close(figure)
log.info("sweep %s: %d rows, %d with delta = 0 exactly", name, len(frame), int((frame["log10_delta"] == float("-inf")).sum()))
