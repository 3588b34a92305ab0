"""Rule utility_synthetic_community: community TV of every mechanism on the synthetic data for one n."""

import logging

from shuffledp.experiments.utility import synthetic_community_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
utility, tag = snakemake.params.utility, snakemake.wildcards.tag
rows = synthetic_community_job(utility, utility[tag], int(snakemake.wildcards.n), seed=snakemake.params.seed, tag=tag)
logging.info("%s", rows.groupby(["calibration", "mechanism"])["tv"].mean().to_string())
atomic_write_text(snakemake.output[0], rows.to_csv(index=False))
