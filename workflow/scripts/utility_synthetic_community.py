"""Rule utility_synthetic_community_<setting>: community TV of every mechanism on the synthetic data, for
each n of the setting (table5 or fig2; one CSV and one log per n, all n in one job)."""

import logging

from shuffledp.experiments.utility import synthetic_community_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log

setup_job_log(snakemake)
utility, tag = snakemake.params.utility, snakemake.params.tag
for n_users, output in item_logs(zip(snakemake.params.sizes, snakemake.output), snakemake.log):
    rows = synthetic_community_job(utility, utility[tag], int(n_users), seed=snakemake.params.seed, tag=tag)
    logging.info("%s", rows.groupby(["calibration", "mechanism"])["tv"].mean().to_string())
    atomic_write_text(output, rows.to_csv(index=False))
