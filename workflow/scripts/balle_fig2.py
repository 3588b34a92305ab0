"""Rule balle_fig2: Balle et al.'s Figure 2 -- the Laplace randomizer's output, blanket and data-dependent
densities (CSV) and the figure."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from shuffledp.experiments.balle import blanket_densities
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.balle import figure_blanket

setup_job_log(snakemake)
section = snakemake.params.section
y = np.linspace(float(section["y"]["start"]), float(section["y"]["stop"]), int(section["y"]["num"]))
frame = blanket_densities(section["epsilon_local"], section["inputs"], y)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
logging.info("gamma = %.6f; %d rows", frame["gamma"].iloc[0], len(frame))
figure = figure_blanket(frame)
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
