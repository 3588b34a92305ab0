"""Rule utility_gowalla_individual: Table VI rows (individual-specific utility per cell) for each region (one
CSV and one log per region, all regions in one job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.utility import individual_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log

setup_job_log(snakemake)
utility, params = snakemake.params.utility, snakemake.params
jobs = zip(params.regions, params.labels, snakemake.input.cells, snakemake.output)
for region, label, cells_csv, output in item_logs(jobs, snakemake.log):
    cells = pd.read_csv(cells_csv).sort_values("cell")
    counts = cells["count"].to_numpy()
    x0 = utility["gowalla"]["regions"][region]["x0"]
    rows = individual_job(
        counts,
        x0,
        x0,
        utility=utility,
        setting=utility["gowalla"]["table6"],
        seed=params.seed,
        identity=("table6", region),
    )
    rows.insert(0, "region", region)
    rows.insert(1, "label", label)
    logging.info("%s: n=%d, x0 counts %s", region, int(counts.sum()), counts[x0].tolist())
    atomic_write_text(output, rows.to_csv(index=False))
