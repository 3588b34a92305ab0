"""Rule girgis_figure: Girgis et al.'s Section 4 comparison -- RDP curves (CSV) and the figure."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shuffledp.experiments.girgis import figure_frame
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.girgis import figure_girgis

setup_job_log(snakemake)
frame = figure_frame(snakemake.params.section)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
logging.info("%s", frame.groupby(["curve", "epsilon_local"])["seconds"].sum().to_string())
figure = figure_girgis(frame, n_users=int(snakemake.params.section["n_users"]))
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
