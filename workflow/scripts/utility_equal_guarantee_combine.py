"""Rule utility_equal_guarantee: the tidy result, the calibration table, the ratio table and both figures."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import json
import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.experiments.equal_guarantee import combine, ratio_table
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.equal_guarantee import figure_ratio, figure_tv
from shuffledp.plotting.style import add_data_label, run_label

setup_job_log(snakemake)
frame = combine([pd.read_csv(path) for path in snakemake.input.jobs])
calibration = pd.concat([pd.read_csv(path) for path in snakemake.input.calibrations], ignore_index=True)
calibration = calibration.sort_values(["k", "n_users", "epsilon", "delta_rule", "accountant"]).reset_index(
    drop=True
)
ratio = ratio_table(frame)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
atomic_write_text(snakemake.output.calibration, calibration.to_csv(index=False))
atomic_write_text(snakemake.output.ratio, ratio.to_csv(index=False))
for figure, path in (
    (figure_tv(frame), snakemake.output.tv),
    (figure_ratio(ratio), snakemake.output.ratio_png),
):
    labels = [json.loads(Path(label).read_text(encoding="utf-8"))["label"] for label in snakemake.input.label]
    # the Gowalla data when a region is among the datasets (else synthetic only), and the grid profile
    add_data_label(figure, run_label(snakemake.params.grid_profile, "; ".join(labels) or "Data: synthetic"))
    with atomic_output(path) as temporary:
        figure.savefig(temporary, dpi=120)
    plt.close(figure)
logging.info(
    "%d rows; calibrations %.1f s in all; certain verdicts %d of %d",
    len(frame),
    calibration["seconds"].sum(),
    int(ratio["certain"].sum()),
    len(ratio),
)
