"""Rule utility_synthetic: every synthetic-data job of the utility stage in one process -- Table V's
individual-specific utility for each n of utility.table5, and the community TV of every mechanism for each n
of utility.table5 and utility.fig2 (one CSV and one log per item, as when each was its own job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

from shuffledp.experiments.utility import individual_job, synthetic_community_job, synthetic_dataset
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log

setup_job_log(snakemake)
utility, seed = snakemake.params.utility, snakemake.params.seed
for (kind, tag, n_users), output in item_logs(
    zip(snakemake.params.synthetic, snakemake.output), snakemake.log
):
    n_users = int(n_users)
    if kind == "individual":
        setting = utility["table5"]
        counts = synthetic_dataset(utility, n_users, seed)
        logging.info("synthetic dataset n=%d counts=%s", n_users, counts.tolist())
        labels = setting["x0"]
        rows = individual_job(
            counts,
            [label - 1 for label in labels],
            labels,
            utility=utility,
            setting=setting,
            seed=seed,
            identity=("table5", n_users),
        )
        logging.info(
            "delta floored in %d of %d Gaussian rows",
            int(rows["delta_floored"].fillna(False).astype(bool).sum()),
            int((rows["mechanism"] == "gaussian").sum()),
        )
    else:
        rows = synthetic_community_job(utility, utility[tag], n_users, seed=seed, tag=tag)
        logging.info("%s", rows.groupby(["calibration", "mechanism"])["l1_half"].mean().to_string())
    atomic_write_text(output, rows.to_csv(index=False))
