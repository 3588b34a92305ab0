"""Rule accounting_epsilon_comparison: epsilon at a fixed delta against n and eps0 -> CSV and figure."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shuffledp.experiments.guarantees import epsilon_comparison_frame
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.accounting import figure_epsilon_comparison

setup_job_log(snakemake)
log = logging.getLogger("accounting_epsilon_comparison")

frame = epsilon_comparison_frame(snakemake.params.comparison)
atomic_write_text(snakemake.output.data, frame.to_csv(index=False))
figure = figure_epsilon_comparison(frame)
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=150)
plt.close(figure)
for (accountant, status), group in frame.groupby(["accountant", "status"], sort=False):
    log.info("%s: %d point(s) %s", accountant, len(group), status)
