"""Rule utility_phase_diagram: the grid, its equal-error boundary, the equal-guarantee verdicts on the same
pair, and one figure per delta rule."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.experiments.phase_diagram import boundary, delta_rules, monte_carlo_verdicts, rule_slug
from shuffledp.io import (
    atomic_output,
    atomic_write_text,
)
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.phase_diagram import figure_phase_diagram
from shuffledp.plotting.style import run_label

setup_job_log(snakemake)
grid = pd.concat([pd.read_csv(path) for path in snakemake.input.grids], ignore_index=True)
grid = grid.sort_values(["delta_rule", "k", "n_users", "epsilon"], kind="stable").reset_index(drop=True)
crossings = boundary(grid)
verdicts = monte_carlo_verdicts(pd.read_csv(snakemake.input.equal_guarantee))
atomic_write_text(snakemake.output.grid, grid.to_csv(index=False))
atomic_write_text(snakemake.output.boundary, crossings.to_csv(index=False))
atomic_write_text(snakemake.output.verdicts, verdicts.to_csv(index=False))
figures = dict(
    zip([rule_slug(name) for name, _, _ in delta_rules(snakemake.params.equal)], snakemake.output.figures)
)
for name, _, _ in delta_rules(snakemake.params.equal):
    figure = figure_phase_diagram(
        grid,
        verdicts,
        delta_rule=name,
        data=str(snakemake.params.phase["data"]),
        crossings=crossings,
        data_label=run_label(
            snakemake.params.grid_profile, f"Data: {snakemake.params.phase['data']} histogram (cells)"
        ),
    )
    with atomic_output(figures[rule_slug(name)]) as temporary:
        figure.savefig(temporary, dpi=120)
    plt.close(figure)
logging.info(
    "%d grid points, %d crossings, %d Monte-Carlo verdicts", len(grid), len(crossings), len(verdicts)
)
