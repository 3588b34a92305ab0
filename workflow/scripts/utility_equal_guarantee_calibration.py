"""Rule utility_equal_guarantee_calibration: the largest eps0 meeting every target (eps, delta) at each
(k, n), under weak-adversary and worst-case-lower (cached: one CSV and one log per (k, n), read by the
utility jobs; all (k, n) in one job, so one interpreter start instead of one per (k, n))."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

from shuffledp.experiments.equal_guarantee import calibration_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log

setup_job_log(snakemake)
cases = list(zip(snakemake.params.cases, snakemake.output))
for (k, n_users), output in item_logs(cases, snakemake.log):
    rows = calibration_job(snakemake.params.equal, k=int(k), n_users=int(n_users))
    logging.info(
        "k = %d, n = %d: %d calibrations, %d accountant evaluations, %.2f s",
        k,
        n_users,
        len(rows),
        rows["evaluations"].sum(),
        rows["seconds"].sum(),
    )
    atomic_write_text(output, rows.to_csv(index=False))
