"""Rule utility_synthetic_individual: Table V rows (individual-specific utility), for each n of
utility.table5 (one CSV and one log per n, all n in one job)."""

import logging

from shuffledp.experiments.utility import individual_job, synthetic_dataset
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log

setup_job_log(snakemake)
utility, seed = snakemake.params.utility, snakemake.params.seed
setting = utility["table5"]
for n_users, output in item_logs(zip(snakemake.params.sizes, snakemake.output), snakemake.log):
    n_users = int(n_users)
    counts = synthetic_dataset(utility, n_users, seed)
    logging.info("synthetic dataset n=%d counts=%s", n_users, counts.tolist())
    labels = setting["x0"]
    rows = individual_job(counts, [label - 1 for label in labels], labels, utility=utility, setting=setting,
                          seed=seed, identity=("table5", n_users))
    logging.info("delta floored in %d of %d Gaussian rows", int(rows["delta_floored"].fillna(False).astype(bool).sum()),
                 int((rows["mechanism"] == "gaussian").sum()))
    atomic_write_text(output, rows.to_csv(index=False))
