"""Rule utility_synthetic_community: community TV of every mechanism on the synthetic data for one n."""

import logging

from shuffledp._joblog import setup_job_log
from shuffledp.experiments.utility import synthetic_community_job
from shuffledp.tables import atomic_write_text

setup_job_log(snakemake)
utility, tag = snakemake.params.utility, snakemake.wildcards.tag
rows = synthetic_community_job(utility, utility[tag], int(snakemake.wildcards.n), seed=snakemake.params.seed, tag=tag)
logging.info("%s", rows.groupby(["calibration", "mechanism"])["tv"].mean().to_string())
atomic_write_text(snakemake.output[0], rows.to_csv(index=False))
