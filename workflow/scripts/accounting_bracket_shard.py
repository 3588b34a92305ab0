"""Rule accounting_bracket_shard: one interleaved slice of the worst-case bracket's settings -> CSV (floats as
their shortest repr, read back bit for bit by rule accounting_bracket)."""

import logging
import time

from shuffledp.experiments.guarantees import bracket_frame
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
started = time.process_time()
frame = bracket_frame(snakemake.params.bracket, shard=int(snakemake.wildcards.shard))
atomic_write_text(snakemake.output[0], frame.to_csv(index=False))
logging.getLogger("accounting_bracket_shard").info(
    "shard %s: %d rows, %.2f CPU s", snakemake.wildcards.shard, len(frame), time.process_time() - started
)
