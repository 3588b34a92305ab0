"""Rule utility_phase_diagram_rounds: the composed phase diagram's grid, its verdicts by T and the figure."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.experiments.compare_rounds import SHUFFLE_ACCOUNTANT, rounds_verdicts
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.compare_rounds import figure_rounds
from shuffledp.plotting.style import run_label

setup_job_log(snakemake)
grid = pd.concat(
    [pd.read_csv(path, dtype={"skipped": str}) for path in snakemake.input.grids], ignore_index=True
)
grid["skipped"] = grid["skipped"].fillna("")
grid = grid.sort_values(["k", "subsample", "n_users", "epsilon", "compositions"], kind="stable").reset_index(
    drop=True
)
verdicts = pd.DataFrame(rounds_verdicts(grid))
atomic_write_text(snakemake.output.grid, grid.to_csv(index=False))
atomic_write_text(snakemake.output.verdicts, verdicts.to_csv(index=False))
data = str(snakemake.config["utility"]["phase_diagram_rounds"].get("data", "uniform"))
figure = figure_rounds(
    grid,
    data=data,
    data_label=run_label(snakemake.params.grid_profile, f"Data: {data} histogram"),
    shuffle_accountant=SHUFFLE_ACCOUNTANT,
)
with atomic_output(snakemake.output.figure) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
logging.info("%d points, %d verdict lines", len(grid), len(verdicts))
