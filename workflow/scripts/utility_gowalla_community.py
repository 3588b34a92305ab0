"""Rule utility_gowalla_community: Figures 6/7 data -- TV vs n over runs, for each privacy setting, for each
region (one CSV and one log per region, all regions in one job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.utility import calibration_accountants, community_sweep
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log
from shuffledp.mechanisms import sensitivity_for

setup_job_log(snakemake)
utility = snakemake.params.utility
gowalla = utility["gowalla"]
accountants = [
    (kind, name) for kind, name in calibration_accountants(utility) if kind in gowalla["calibrations"]
]
jobs = zip(snakemake.params.regions, snakemake.input.cells, snakemake.output)
for region, cells_csv, output in item_logs(jobs, snakemake.log):
    cells = pd.read_csv(cells_csv).sort_values("cell")
    logging.info("%s: %d cells, %d check-ins", region, len(cells), int(cells["count"].sum()))
    rows = community_sweep(
        cells["count"].to_numpy(),
        n_users_grid=gowalla["regions"][region]["n_users"],
        settings=gowalla["settings"],
        runs=gowalla["runs"],
        replace=gowalla["sampling"] == "with-replacement",
        accountants=accountants,
        neighbouring_sensitivity=sensitivity_for(utility["neighbouring"]),
        delta_floor=utility["delta_floor"],
        estimator=utility["estimator"],
        seed=snakemake.params.seed,
        identity=("gowalla-community", region),
    )
    rows.insert(0, "region", region)
    logging.info("%s", rows.groupby(["epsilon", "mechanism"])["l1_half"].median().to_string())
    atomic_write_text(output, rows.to_csv(index=False))
