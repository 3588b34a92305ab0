# Which randomizer to shuffle (beyond the paper): the equal-guarantee comparison redrawn with every shuffled
# randomizer (k-RR, OUE, SUE, OLH, Hadamard response, subset selection), each at the largest eps0 of its
# tightest valid upper bound, beside the Gaussian and geometric curators; exact errors only, one job.
# Library: shuffledp.experiments.randomizer_grid, shuffledp.plotting.randomizers. Optional: the rule exists
# only when utility.randomizers is set.
from shuffledp.experiments.randomizer_grid import check_randomizer_grid_config

try:
    check_randomizer_grid_config(config)
except ConfigError as error:
    raise WorkflowError(str(error)) from None

RANDOMIZER_GRID = (UTILITY or {}).get("randomizers")

if RANDOMIZER_GRID is not None:
    RANDOMIZER_REGIONS = [d for d in RANDOMIZER_GRID["datasets"] if d != "synthetic"]

    rule utility_randomizers:
        input:
            cells=[f"results/data/{region}/cell_counts.csv" for region in RANDOMIZER_REGIONS],
            label=[SOURCE_LABEL] if RANDOMIZER_REGIONS else [],
        output:
            csv=report(f"{U}/randomizers.csv", caption="../report/randomizers.rst", category="Utility"),
            verdicts=f"{U}/randomizers_verdicts.csv",
            figure=report(f"{U}/randomizers.png", caption="../report/randomizers.rst", category="Utility"),
        log:
            "logs/utility/randomizers.log",
        benchmark:
            "results/benchmarks/utility/randomizers.tsv"
        priority: 80  # scheduling only: see the note in common.smk
        params:
            utility=UTILITY,
            seed=config["seed"],
            cells={region: f"results/data/{region}/cell_counts.csv" for region in RANDOMIZER_REGIONS},
        script:
            "../scripts/utility_randomizers.py"

    ALL_TARGETS.extend([f"{U}/randomizers.csv", f"{U}/randomizers_verdicts.csv", f"{U}/randomizers.png"])
