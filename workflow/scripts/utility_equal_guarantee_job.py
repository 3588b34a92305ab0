"""Rule utility_equal_guarantee_jobs: every mechanism at every target (eps, delta) on each dataset, for
each n of utility.equal_guarantee (one CSV and one log per (dataset, n), all of them in one job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.equal_guarantee import dataset_counts, utility_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log

setup_job_log(snakemake)
utility = snakemake.params.utility
jobs = zip(snakemake.params.jobs, snakemake.input.calibrations, snakemake.output)
for (dataset, n_users), calibration_csv, output in item_logs(jobs, snakemake.log):
    n_users = int(n_users)
    cell_counts = None
    if dataset in snakemake.params.cells:
        cells = pd.read_csv(snakemake.params.cells[dataset]).sort_values("cell")
        cell_counts = cells["count"].to_numpy()
        logging.info(
            "%s: %d cells, %d check-ins; n = %d drawn with replacement",
            dataset,
            len(cells),
            cell_counts.sum(),
            n_users,
        )
    counts = dataset_counts(
        dataset, n_users, utility=utility, seed=snakemake.params.seed, cell_counts=cell_counts
    )
    calibration = pd.read_csv(calibration_csv)
    rows = utility_job(
        counts,
        calibration,
        dataset=dataset,
        equal=utility["equal_guarantee"],
        neighbouring=utility["neighbouring"],
        seed=snakemake.params.seed,
    )
    logging.info(
        "%s",
        rows.pivot_table(
            index=["epsilon", "delta_rule"], columns=["mechanism"], values="l1_half_mean"
        ).to_string(),
    )
    atomic_write_text(output, rows.to_csv(index=False))
