# Which randomizer to shuffle (beyond the paper): the equal-guarantee comparison redrawn with every shuffled
# randomizer (k-RR, OUE, SUE, OLH, Hadamard response, subset selection), each at an eps0 certified by its
# tightest valid upper bound (the largest for k-RR; for the others the search's crossing), beside the Gaussian and geometric curators; exact errors only. One grid job per
# (dataset, n) (their calibrations are independent: each is its own job so both cores share the stage, the
# longest of the run when it was one job), one job combines them, counts the verdicts and draws.
# Library: shuffledp.experiments.randomizer_grid, shuffledp.plotting.randomizers. Optional: the rules exist
# only when utility.randomizers is set.
from shuffledp.experiments.randomizer_grid import check_randomizer_grid_config

try:
    check_randomizer_grid_config(config)
except ConfigError as error:
    raise WorkflowError(str(error)) from None

RANDOMIZER_GRID = (UTILITY or {}).get("randomizers")

if RANDOMIZER_GRID is not None:
    RANDOMIZER_REGIONS = [d for d in RANDOMIZER_GRID["datasets"] if d != "synthetic"]
    # (dataset, n) in the configuration's order: the combine job reads the grid files in this order
    RANDOMIZER_JOBS = [(d, int(n)) for d in RANDOMIZER_GRID["datasets"] for n in RANDOMIZER_GRID["n_users"]]

    def _randomizer_cells(wildcards):
        region = wildcards.dataset
        return [] if region == "synthetic" else [f"results/data/{region}/cell_counts.csv"]

    rule utility_randomizers_grid:
        input:
            cells=_randomizer_cells,
        output:
            f"{U}/randomizers/grid_{{dataset}}_n{{n}}.parquet",
        log:
            "logs/utility/randomizers_{dataset}_n{n}.log",
        benchmark:
            "results/benchmarks/utility/randomizers_grid_{dataset}_n{n}.tsv"
        wildcard_constraints:
            dataset="|".join(RANDOMIZER_GRID["datasets"]),
            n=r"\d+",
        priority: 80  # scheduling only: see the note in common.smk
        params:
            utility=UTILITY,
            seed=config["seed"],
        script:
            "../scripts/utility_randomizers_grid.py"

    rule utility_randomizers:
        input:
            grids=[f"{U}/randomizers/grid_{d}_n{n}.parquet" for d, n in RANDOMIZER_JOBS],
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
        script:
            "../scripts/utility_randomizers.py"

    ALL_TARGETS.extend([f"{U}/randomizers.csv", f"{U}/randomizers_verdicts.csv", f"{U}/randomizers.png"])
