"""Rule utility_crossover: beyond the paper -- Gaussian vs shuffle+INV over (eps0, eps < eps0)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shuffledp.experiments.crossover import crossover_sweep
from shuffledp.experiments.utility import synthetic_dataset
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.mechanisms import sensitivity_for
from shuffledp.plotting.style import run_label
from shuffledp.plotting.utility import figure_crossover

setup_job_log(snakemake)
utility, seed = snakemake.params.utility, snakemake.params.seed
sweep = utility["crossover"]
counts = synthetic_dataset(utility, sweep["n_users"], seed)
rows = crossover_sweep(
    counts,
    epsilon_locals=sweep["epsilon_local"],
    epsilons=sweep["epsilon"],
    accountants=sweep["accountants"],
    neighbouring_sensitivity=sensitivity_for(utility["neighbouring"]),
    delta_floor=utility["delta_floor"],
    estimator=utility["estimator"],
    replicates=sweep["replicates"],
    seed=seed,
    identity=("crossover",),
)
atomic_write_text(snakemake.output.csv, rows.to_csv(index=False))
figure = figure_crossover(
    rows,
    data_label=run_label(snakemake.params.grid_profile, "Data: synthetic (the paper's discretised normal)"),
)
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
logging.info(
    "%s",
    rows.pivot_table(
        index=["accountant", "epsilon_local"], columns="epsilon", values="gaussian_better"
    ).to_string(),
)
