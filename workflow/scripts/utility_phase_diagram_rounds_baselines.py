"""Rule utility_phase_diagram_rounds_baselines: the composed phase diagram's per-round calibrations that depend
on neither n nor k (the Gaussian's sigma, the geometric's epsilon), once per (T, q, epsilon) -> JSON read by
every grid job (floats written as their shortest repr: read back bit for bit)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import json
import logging
import time

from shuffledp.experiments.compare_rounds import rounds_baselines
from shuffledp.experiments.phase_diagram import grid_axes
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
rounds = snakemake.params.rounds
n_axis = rounds.get("n") or grid_axes(snakemake.params.phase)[0]
started = time.process_time()
rows = rounds_baselines(rounds, n_axis, ks=rounds["k"], neighbouring=snakemake.params.neighbouring)
logging.info("%d (T, q, epsilon) calibrations, %.2f CPU s", len(rows), time.process_time() - started)
atomic_write_text(snakemake.output[0], json.dumps(rows, indent=1) + "\n")
