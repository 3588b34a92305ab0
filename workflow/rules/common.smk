# Shared set-up: configuration validation, target registry, small input functions.
# Included first by the Snakefile; every other rule file may use what is defined here.
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import update_config

from shuffledp import _warm
from shuffledp._bytecode import compile_package
from shuffledp.config import ConfigError, load_schema, retype_overrides, validate_config

REPO = Path(workflow.basedir)
SCHEMA = REPO / "config" / "schema" / "config.schema.yaml"

# Nested --config values arrive as strings ('utility={"delta_floor": 1e-12}' gives "1e-12"): type
# them as Snakemake types top-level values, then validate.
update_config(config, retype_overrides(workflow.config_settings.config or {}))
try:
    _checked = validate_config(config, load_schema(SCHEMA))
except ConfigError as error:
    raise WorkflowError(str(error)) from None
config.clear()
config.update(_checked)

# Scheduling: with 2 cores the run lasts about as long as its CPU seconds over two, plus
# whatever one long job runs alone at the end. The long jobs and what they wait for get a `priority`, so
# they start first and the short ones fill the gaps: the data stage (100, before the Gowalla jobs), Koskela's
# figures (95: ~22 CPU s, the quick profile's longest job by far), Gowalla individual utility (90: Table VI
# waits for it), the equal-guarantee chain (80: calibration,
# jobs, combine, then the phase diagram, its grid shards included, the composed phase diagram's baselines and
# (k, T) grid jobs, and the which-randomizer grid jobs), the bracket's shards (70), Balle's references (60), the
# epsilon comparison and the paper's accounting tables (50: Table II's hypotheses job and the report wait for
# them), and the longest figure jobs, the Gowalla heatmaps and the crossover, with the Gowalla community
# utility that the box plot waits for, and Figure 3, which the data stage's manifest and so the report wait for
# (40, so that shorter jobs end the run). Priorities order jobs; they change no output.


onstart:
    # The run's jobs are 60 to 90 Python processes importing the library: compile it once here, not once per
    # job where PYTHONDONTWRITEBYTECODE is set (shuffledp._bytecode; docs/decisions/workflow.md).
    compile_package()
    # ... and import it once more, in one warm interpreter that forks each job: a job's own imports (numpy,
    # pandas, scipy, the library, matplotlib) cost about a second of CPU (shuffledp._warm; the same page).
    # The server ends with this process (it waits on a pipe only this process holds), however the run ends.
    _warm.start(
        sorted((REPO / "workflow" / "scripts").glob("*.py")), REPO / "workflow" / "warm_server.py"
    )


# Each rule file appends the final outputs of its stage; `rule all` requests them all.
ALL_TARGETS = []

REGIONS = sorted(config["regions"])


wildcard_constraints:
    region="|".join(REGIONS),
