"""Rule accounting_bracket_figure: bracket.csv -> the bracket figure (ratio upper / lower - 1 against n, per k)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.io import atomic_output
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.bracket import figure_bracket

setup_job_log(snakemake)
log = logging.getLogger("accounting_bracket_figure")

frame = pd.read_csv(snakemake.input.csv)
figure = figure_bracket(frame)
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=150)
plt.close(figure)
log.info(
    "bracket figure: %d rows, k = %s, eps0 = %s",
    len(frame),
    sorted(frame["k"].unique().tolist()),
    sorted(frame["epsilon_local"].unique().tolist()),
)
