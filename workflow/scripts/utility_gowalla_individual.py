"""Rule utility_gowalla_individual: Table VI rows (individual-specific utility per cell) for one region."""

import logging

import pandas as pd

from shuffledp.experiments.utility import individual_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
utility, region = snakemake.params.utility, snakemake.wildcards.region
cells = pd.read_csv(snakemake.input.cells).sort_values("cell")
counts = cells["count"].to_numpy()
x0 = utility["gowalla"]["regions"][region]["x0"]
rows = individual_job(counts, x0, x0, utility=utility, setting=utility["gowalla"]["table6"],
                      seed=snakemake.params.seed, identity=("table6", region))
rows.insert(0, "region", region)
rows.insert(1, "label", snakemake.params.label)
logging.info("%s: n=%d, x0 counts %s", region, int(counts.sum()), counts[x0].tolist())
atomic_write_text(snakemake.output[0], rows.to_csv(index=False))
