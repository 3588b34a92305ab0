"""Rule accounting_bracket_shard: one shard of the worst-case bracket's settings (longest processing time
first on the cost model, ``bracket_assignment``) -> CSV (floats as their shortest repr, read back bit for bit
by rule accounting_bracket). The log lists every setting's CPU seconds beside the model's estimate."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging
import time

from shuffledp.experiments.guarantees import bracket_cost, bracket_frame
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
log = logging.getLogger("accounting_bracket_shard")
section = snakemake.params.bracket
deltas = [float(d) for d in section["delta"]]
upper = str(section.get("upper") or "worst-case-upper")
estimated = 0.0


def _logged(point, seconds):
    global estimated
    estimate = bracket_cost(*point, deltas, upper)
    estimated += estimate
    log.info("n=%d k=%d eps0=%g: %.2f CPU s (estimate %.2f)", *point, seconds, estimate)


started = time.process_time()
frame = bracket_frame(section, shard=int(snakemake.wildcards.shard), on_setting=_logged)
atomic_write_text(snakemake.output[0], frame.to_csv(index=False))
log.info(
    "shard %s: %d rows, %.2f CPU s (estimate %.2f)",
    snakemake.wildcards.shard,
    len(frame),
    time.process_time() - started,
    estimated,
)
