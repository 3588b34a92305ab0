"""Rule utility_phase_diagram_rounds_grid: the composed phase diagram at one (k, T): every (q, n, epsilon) of
utility.phase_diagram_rounds calibrated to the total and its exact errors (one CSV per (k, T)); the Gaussian's
and the geometric's calibrations are read from the baselines job."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import json
import logging
import time

import pandas as pd

from shuffledp.experiments.compare_rounds import rounds_grid_job
from shuffledp.experiments.phase_diagram import grid_axes
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
k = int(snakemake.wildcards.k)
compositions = int(snakemake.wildcards.T)
rounds = snakemake.params.rounds
n_axis = rounds.get("n") or grid_axes(snakemake.params.phase)[0]
with open(snakemake.input.baselines, encoding="utf-8") as handle:
    baselines = json.load(handle)
started = time.process_time()
rows = pd.DataFrame(
    rounds_grid_job(
        rounds,
        n_axis,
        k=k,
        seed=int(snakemake.params.seed),
        neighbouring=snakemake.params.neighbouring,
        compositions=[compositions],
        baselines=baselines,
    )
)
logging.info(
    "k = %d, T = %d: %d points (%d skipped), %.2f CPU s",
    k,
    compositions,
    len(rows),
    int((rows["skipped"] != "").sum()),
    time.process_time() - started,
)
atomic_write_text(snakemake.output[0], rows.to_csv(index=False))
