"""Rule accounting_sweep: one config delta sweep (an entry of accounting.sweeps) -- its CSV and figure."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shuffledp.experiments.accounting_grids import sweep_frame
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.accounting import figure_sweep

setup_job_log(snakemake)
name, settings = snakemake.wildcards.sweep, snakemake.params.sweep
frame = sweep_frame(name, settings)
atomic_write_text(snakemake.output.data, frame.to_csv(index=False))
figure = figure_sweep(frame, x=settings["x"], name=name)
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=150)
plt.close(figure)
logging.info(
    "sweep %s: %d rows, %d with delta = 0 exactly",
    name,
    len(frame),
    int((frame["log10_delta"] == float("-inf")).sum()),
)
