"""Rule utility_phase_diagram_grid: the exact TV of shuffle+INV and of the Gaussian over one shard of the
(n, epsilon) grid at one k, for every delta rule of utility.equal_guarantee (one CSV per k and shard)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging
import time

from shuffledp.experiments.phase_diagram import grid_job
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
k, shard = int(snakemake.wildcards.k), int(snakemake.wildcards.shard)
started = time.perf_counter()
rows = grid_job(
    snakemake.params.phase,
    snakemake.params.equal,
    k=k,
    neighbouring=snakemake.params.neighbouring,
    shard=shard,
)
logging.info(
    "k = %d, shard %d: %d grid points (%s), %.2f s",
    k,
    shard,
    len(rows),
    ", ".join(rows["accountant"].unique()),
    time.perf_counter() - started,
)
atomic_write_text(snakemake.output[0], rows.to_csv(index=False))
