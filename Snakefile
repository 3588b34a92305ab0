# Shuffle model of differential privacy with k-randomized response: reproduction workflow.
# Run: snakemake --cores N        (see README.md; the default profile lives in profiles/default)
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/accounting.smk"
include: "workflow/rules/utility.smk"
include: "workflow/rules/randomizers.smk"
include: "workflow/rules/koskela.smk"
include: "workflow/rules/girgis.smk"
include: "workflow/rules/balle.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        ALL_TARGETS,
