# Shared set-up: configuration validation, target registry, small input functions.
# Included first by the Snakefile; every other rule file may use what is defined here.
from pathlib import Path

from snakemake.exceptions import WorkflowError

from shuffledp.config import ConfigError, load_schema, validate_config

REPO = Path(workflow.basedir)
SCHEMA = REPO / "config" / "schema" / "config.schema.yaml"

try:
    _checked = validate_config(config, load_schema(SCHEMA))
except ConfigError as error:
    raise WorkflowError(str(error)) from None
config.clear()
config.update(_checked)

# Each rule file appends the final outputs of its stage; `rule all` requests them all.
ALL_TARGETS = []

REGIONS = sorted(config["regions"])

wildcard_constraints:
    region="|".join(REGIONS),
