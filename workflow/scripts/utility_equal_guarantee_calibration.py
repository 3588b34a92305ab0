"""Rule utility_equal_guarantee_calibration: the largest eps0 meeting every target (eps, delta) at one
(k, n), under weak-adversary and worst-case-lower (cached: one CSV per (k, n), read by the utility jobs)."""

import logging

from shuffledp.experiments.equal_guarantee import calibration_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
k, n_users = int(snakemake.wildcards.k), int(snakemake.wildcards.n)
rows = calibration_job(snakemake.params.equal, k=k, n_users=n_users)
logging.info("k = %d, n = %d: %d calibrations, %d accountant evaluations, %.2f s", k, n_users, len(rows),
             rows["evaluations"].sum(), rows["seconds"].sum())
atomic_write_text(snakemake.output[0], rows.to_csv(index=False))
