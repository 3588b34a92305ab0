# Utility stage (paper Section V): synthetic Table V, text TVs and Figure 2; Gowalla Figures 4-7 and
# Table VI; beyond the paper, the (eps0, eps) crossover sweep. Library: shuffledp.experiments.
from shuffledp.experiments.utility import check_utility_config

try:
    check_utility_config(config)
except ConfigError as error:
    raise WorkflowError(str(error)) from None

UTILITY = config.get("utility")
U = "results/utility"


def _caption(name, fallback):
    return (
        f"../report/{name}.rst"
        if (REPO / "workflow" / "report" / f"{name}.rst").exists()
        else f"../report/{fallback}.rst"
    )


if UTILITY is not None:
    UTILITY_REGIONS = UTILITY["gowalla"]["regions"]
    TABLE5_N = UTILITY["table5"]["n_users"]
    FIG2_N = UTILITY["fig2"]["n_users"]

    # Synthetic data (Table V, Figure 2): each item is ~0.3-1 s of work, less than a job's start-up with
    # diffprivlib's import, so one job makes them all: Table V's individual utility at each n, the community
    # TVs of each setting (table5, fig2) at each n; one CSV and one log file per item as before, one
    # benchmark file for the job.
    SYNTHETIC_ITEMS = [("individual", "table5", n) for n in TABLE5_N] + [
        ("community", tag, n) for tag, sizes in (("table5", TABLE5_N), ("fig2", FIG2_N)) for n in sizes
    ]

    def _synthetic_name(kind, tag, n):
        return f"individual_n{n}" if kind == "individual" else f"community_{tag}_n{n}"

    rule utility_synthetic:
        output:
            [f"{U}/synthetic/{_synthetic_name(*item)}.csv" for item in SYNTHETIC_ITEMS],
        log:
            [f"logs/utility/synthetic_{_synthetic_name(*item)}.log" for item in SYNTHETIC_ITEMS],
        benchmark:
            "results/benchmarks/utility/synthetic.tsv"
        params:
            utility=UTILITY,
            seed=config["seed"],
            synthetic=SYNTHETIC_ITEMS,
        script:
            "../scripts/utility_synthetic.py"

    rule utility_table5:
        input:
            individual=expand(f"{U}/synthetic/individual_n{{n}}.csv", n=TABLE5_N),
            community=expand(f"{U}/synthetic/community_table5_n{{n}}.csv", n=TABLE5_N),
        output:
            csv=report(f"{U}/table5.csv", caption="../report/table5.rst", category="Utility"),
            latex=f"{U}/table5.tex",
            markdown=f"{U}/table5.md",
            comparison=f"{U}/table5_comparison.csv",
            text=f"{U}/text_tv.csv",
        log:
            "logs/utility/table5.log",
        benchmark:
            "results/benchmarks/utility/table5.tsv"
        script:
            "../scripts/utility_table5.py"

    rule utility_fig2:
        input:
            expand(f"{U}/synthetic/community_fig2_n{{n}}.csv", n=FIG2_N),
        output:
            png=report(f"{U}/fig2.png", caption="../report/fig2.rst", category="Utility"),
            csv=f"{U}/fig2.csv",
            floor=f"{U}/delta_floor_fig2.csv",
        log:
            "logs/utility/fig2.log",
        benchmark:
            "results/benchmarks/utility/fig2.tsv"
        params:
            grid_profile=config.get("grid_profile", "default"),
            utility=UTILITY,
        script:
            "../scripts/utility_fig2.py"

    # Figures 6/7 data: one job for every region (each region is ~1-2 s of work, as much as a job's start-up
    # with diffprivlib's import); one CSV and one log file per region as before, one benchmark file.
    rule utility_gowalla_community:
        input:
            cells=[f"results/data/{region}/cell_counts.csv" for region in UTILITY_REGIONS],
        output:
            [f"{U}/gowalla/{region}/community.csv" for region in UTILITY_REGIONS],
        log:
            [f"logs/utility/gowalla_community_{region}.log" for region in UTILITY_REGIONS],
        benchmark:
            "results/benchmarks/utility/gowalla_community.tsv"
        priority: 40  # scheduling only: see the note in common.smk
        params:
            utility=UTILITY,
            seed=config["seed"],
            regions=list(UTILITY_REGIONS),
        script:
            "../scripts/utility_gowalla_community.py"

    # Table VI: one job for every region (Paris is ~1 s of work beside ~2 s of start-up with
    # diffprivlib's import); one CSV and one log file per region as before, one benchmark file. The largest
    # region (San Francisco) goes first in the job, which starts early (priority), so that Table VI does not
    # wait for it at the end of the run.
    INDIVIDUAL_REGIONS = sorted(UTILITY_REGIONS, key=lambda region: region != "san_francisco")

    rule utility_gowalla_individual:
        input:
            cells=[f"results/data/{region}/cell_counts.csv" for region in INDIVIDUAL_REGIONS],
        output:
            [f"{U}/gowalla/{region}/individual.csv" for region in INDIVIDUAL_REGIONS],
        log:
            [f"logs/utility/gowalla_individual_{region}.log" for region in INDIVIDUAL_REGIONS],
        benchmark:
            "results/benchmarks/utility/gowalla_individual.tsv"
        priority: 90  # scheduling only: see the note in common.smk
        params:
            utility=UTILITY,
            seed=config["seed"],
            regions=INDIVIDUAL_REGIONS,
            labels=[config["regions"][region]["label"] for region in INDIVIDUAL_REGIONS],
        script:
            "../scripts/utility_gowalla_individual.py"

    rule utility_table6:
        input:
            individual=expand(f"{U}/gowalla/{{region}}/individual.csv", region=list(UTILITY_REGIONS)),
            label=SOURCE_LABEL,
        output:
            csv=report(f"{U}/table6.csv", caption="../report/table6.rst", category="Utility"),
            latex=f"{U}/table6.tex",
            markdown=f"{U}/table6.md",
            comparison=f"{U}/table6_comparison.csv",
        log:
            "logs/utility/table6.log",
        benchmark:
            "results/benchmarks/utility/table6.tsv"
        script:
            "../scripts/utility_table6.py"

    # Figures 4/5 (heat maps) and 6/7 (box plots): one job each for every region (each region is ~0.5-1 s of
    # work beside ~1-2 s of start-up with matplotlib and diffprivlib); one figure, CSV and log file per region
    # as before, one benchmark file per job.
    rule utility_heatmap:
        input:
            cells=[f"results/data/{region}/cell_counts.csv" for region in UTILITY_REGIONS],
            label=SOURCE_LABEL,
        output:
            png=[
                report(
                    f"{U}/{entry['heatmap_figure']}.png",
                    caption=_caption(entry["heatmap_figure"], "utility_heatmap"),
                    category="Utility",
                )
                for entry in UTILITY_REGIONS.values()
            ],
            cells=[f"{U}/gowalla/{region}/heatmap_cells.csv" for region in UTILITY_REGIONS],
            summary=[f"{U}/gowalla/{region}/heatmap_summary.csv" for region in UTILITY_REGIONS],
        log:
            [f"logs/utility/heatmap_{region}.log" for region in UTILITY_REGIONS],
        benchmark:
            "results/benchmarks/utility/heatmap.tsv"
        priority: 40  # scheduling only: see the note in common.smk
        params:
            grid_profile=config.get("grid_profile", "default"),
            utility=UTILITY,
            seed=config["seed"],
            regions=list(UTILITY_REGIONS),
            grids=[config["regions"][region]["grid"] for region in UTILITY_REGIONS],
            labels=[config["regions"][region]["label"] for region in UTILITY_REGIONS],
        script:
            "../scripts/utility_heatmap.py"

    rule utility_boxplot:
        input:
            community=[f"{U}/gowalla/{region}/community.csv" for region in UTILITY_REGIONS],
            label=SOURCE_LABEL,
        output:
            png=[
                report(
                    f"{U}/{entry['boxplot_figure']}.png",
                    caption=_caption(entry["boxplot_figure"], "utility_boxplot"),
                    category="Utility",
                )
                for entry in UTILITY_REGIONS.values()
            ],
            floor=[f"{U}/gowalla/{region}/delta_floor.csv" for region in UTILITY_REGIONS],
        log:
            [f"logs/utility/boxplot_{region}.log" for region in UTILITY_REGIONS],
        benchmark:
            "results/benchmarks/utility/boxplot.tsv"
        params:
            grid_profile=config.get("grid_profile", "default"),
            regions=list(UTILITY_REGIONS),
            labels=[config["regions"][region]["label"] for region in UTILITY_REGIONS],
            utility=UTILITY,
            grids=[config["regions"][region]["grid"] for region in UTILITY_REGIONS],
        script:
            "../scripts/utility_boxplot.py"

    rule utility_crossover:
        output:
            csv=f"{U}/crossover.csv",
            png=report(f"{U}/crossover.png", caption="../report/crossover.rst", category="Utility"),
        log:
            "logs/utility/crossover.log",
        benchmark:
            "results/benchmarks/utility/crossover.tsv"
        priority: 40  # scheduling only: see the note in common.smk
        params:
            grid_profile=config.get("grid_profile", "default"),
            utility=UTILITY,
            seed=config["seed"],
        script:
            "../scripts/utility_crossover.py"

    # Table assembly only reads the replicate files: run it where Snakemake runs.
    localrules:
        utility_table5,
        utility_table6,

    ALL_TARGETS.extend(
        [
            f"{U}/table5.csv",
            f"{U}/table5.tex",
            f"{U}/table5.md",
            f"{U}/table5_comparison.csv",
            f"{U}/text_tv.csv",
            f"{U}/fig2.png",
            f"{U}/fig2.csv",
            f"{U}/table6.csv",
            f"{U}/table6.tex",
            f"{U}/table6.md",
            f"{U}/table6_comparison.csv",
            *[f"{U}/{e['heatmap_figure']}.png" for e in UTILITY_REGIONS.values()],
            *[f"{U}/{e['boxplot_figure']}.png" for e in UTILITY_REGIONS.values()],
            f"{U}/delta_floor_fig2.csv",
            *[f"{U}/gowalla/{r}/delta_floor.csv" for r in UTILITY_REGIONS],
            f"{U}/crossover.csv",
            f"{U}/crossover.png",
        ]
    )


# Equal-guarantee experiment: at each target (eps, delta), the largest eps0 the shuffled
# k-RR may use (weak-adversary: valid; worst-case-lower: the best any analysis could justify), then
# every mechanism at that guarantee. Calibrations are cached per (k, n); one utility job per
# (dataset, n); one job combines and draws. Library: shuffledp.experiments.equal_guarantee.
from shuffledp.experiments.equal_guarantee import check_equal_guarantee_config, dataset_k

try:
    check_equal_guarantee_config(config)
except ConfigError as error:
    raise WorkflowError(str(error)) from None

EQUAL = (UTILITY or {}).get("equal_guarantee")
EG = f"{U}/equal_guarantee"

if EQUAL is not None:
    EQUAL_DATASETS = list(EQUAL["datasets"])
    EQUAL_K = {dataset: dataset_k(config, dataset) for dataset in EQUAL_DATASETS}

    # One job makes every (k, n) calibration (each is ~1 s of work, as much as a job's start-up): one
    # CSV and one log file per (k, n) as before, one benchmark file for the job.
    EQUAL_CALIBRATIONS = sorted({(k, n) for k in EQUAL_K.values() for n in EQUAL["n_users"]})

    rule utility_equal_guarantee_calibration:
        output:
            [f"{EG}/calibration_k{k}_n{n}.csv" for k, n in EQUAL_CALIBRATIONS],
        log:
            [f"logs/utility/equal_guarantee_calibration_k{k}_n{n}.log" for k, n in EQUAL_CALIBRATIONS],
        benchmark:
            "results/benchmarks/utility/equal_guarantee_calibration.tsv"
        priority: 80  # scheduling only: see the note in common.smk
        params:
            equal=EQUAL,
            cases=EQUAL_CALIBRATIONS,
        script:
            "../scripts/utility_equal_guarantee_calibration.py"

    # One job runs every mechanism at every (dataset, n) (each is ~0.5-1 s of work, less than a job's
    # start-up with diffprivlib's import): one CSV and one log file per (dataset, n) as before, one
    # benchmark file for the job.
    EQUAL_JOBS = [(dataset, n) for dataset in EQUAL_DATASETS for n in EQUAL["n_users"]]

    rule utility_equal_guarantee_jobs:
        input:
            calibrations=[f"{EG}/calibration_k{EQUAL_K[dataset]}_n{n}.csv" for dataset, n in EQUAL_JOBS],
            cells=[
                f"results/data/{dataset}/cell_counts.csv"
                for dataset in EQUAL_DATASETS
                if dataset != "synthetic"
            ],
        output:
            [f"{EG}/{dataset}_n{n}.csv" for dataset, n in EQUAL_JOBS],
        log:
            [f"logs/utility/equal_guarantee_{dataset}_n{n}.log" for dataset, n in EQUAL_JOBS],
        benchmark:
            "results/benchmarks/utility/equal_guarantee_jobs.tsv"
        priority: 80  # scheduling only: see the note in common.smk
        params:
            utility=UTILITY,
            seed=config["seed"],
            jobs=EQUAL_JOBS,
            cells={
                dataset: f"results/data/{dataset}/cell_counts.csv"
                for dataset in EQUAL_DATASETS
                if dataset != "synthetic"
            },
        script:
            "../scripts/utility_equal_guarantee_job.py"

    rule utility_equal_guarantee:
        input:
            jobs=expand(f"{EG}/{{dataset}}_n{{n}}.csv", dataset=EQUAL_DATASETS, n=EQUAL["n_users"]),
            calibrations=sorted(f"{EG}/calibration_k{k}_n{n}.csv" for k, n in EQUAL_CALIBRATIONS),
            # the Gowalla regions among the datasets: the figures name the data they come from
            label=[SOURCE_LABEL] if set(EQUAL_DATASETS) & set(config["regions"]) else [],
        output:
            csv=report(
                f"{U}/equal_guarantee.csv", caption="../report/equal_guarantee.rst", category="Utility"
            ),
            calibration=f"{U}/equal_guarantee_calibration.csv",
            ratio=f"{U}/equal_guarantee_ratio.csv",
            tv=report(
                f"{U}/equal_guarantee_tv.png", caption="../report/equal_guarantee_tv.rst", category="Utility"
            ),
            ratio_png=report(
                f"{U}/equal_guarantee_ratio.png",
                caption="../report/equal_guarantee_ratio.rst",
                category="Utility",
            ),
        log:
            "logs/utility/equal_guarantee.log",
        benchmark:
            "results/benchmarks/utility/equal_guarantee.tsv"
        priority: 80  # scheduling only: see the note in common.smk
        params:
            grid_profile=config.get("grid_profile", "default"),
        script:
            "../scripts/utility_equal_guarantee_combine.py"

    ALL_TARGETS.extend(
        [
            f"{U}/equal_guarantee.csv",
            f"{U}/equal_guarantee_calibration.csv",
            f"{U}/equal_guarantee_ratio.csv",
            f"{U}/equal_guarantee_tv.png",
            f"{U}/equal_guarantee_ratio.png",
        ]
    )


# Phase diagram: over a log-spaced (n, epsilon) grid, the exact expected TV of shuffle+INV and of
# the Gaussian at every delta rule of utility.equal_guarantee; one grid job per k, one job combines, finds
# the equal-error boundary and draws one figure per delta rule with the equal-guarantee verdicts on top.
# Each k's grid is split into `shards` jobs (interleaved slices of its points), so a cluster
# (profiles/slurm) spreads a publication-density grid (config/phase_publication.yaml); utility_phase_diagram
# combines the shards. Library: shuffledp.experiments.phase_diagram, shuffledp.plotting.phase_diagram.
from shuffledp.experiments.phase_diagram import delta_rules, grid_shards, rule_slug

PHASE = (UTILITY or {}).get("phase_diagram")

if PHASE is not None and EQUAL is not None:
    PHASE_FIGURES = [f"{U}/phase_diagram_{rule_slug(name)}.png" for name, _, _ in delta_rules(EQUAL)]
    PHASE_SHARDS = grid_shards(PHASE)

    rule utility_phase_diagram_grid:
        output:
            f"{U}/phase_diagram/grid_k{{k}}_shard{{shard}}of{PHASE_SHARDS}.csv",
        log:
            f"logs/utility/phase_diagram_grid_k{{k}}_shard{{shard}}of{PHASE_SHARDS}.log",
        benchmark:
            f"results/benchmarks/utility/phase_diagram_grid_k{{k}}_shard{{shard}}of{PHASE_SHARDS}.tsv"
        wildcard_constraints:
            k=r"\d+",
            shard=r"\d+",
        priority: 80  # scheduling only: see the note in common.smk
        params:
            phase=PHASE,
            equal=EQUAL,
            neighbouring=UTILITY["neighbouring"],
        script:
            "../scripts/utility_phase_diagram_grid.py"

    rule utility_phase_diagram:
        input:
            grids=expand(
                f"{U}/phase_diagram/grid_k{{k}}_shard{{shard}}of{PHASE_SHARDS}.csv",
                k=PHASE["k"],
                shard=range(PHASE_SHARDS),
            ),
            equal_guarantee=f"{U}/equal_guarantee.csv",
        output:
            grid=f"{U}/phase_diagram.csv",
            boundary=f"{U}/phase_diagram_boundary.csv",
            verdicts=f"{U}/phase_diagram_monte_carlo.csv",
            figures=[
                report(path, caption="../report/phase_diagram.rst", category="Utility")
                for path in PHASE_FIGURES
            ],
        log:
            "logs/utility/phase_diagram.log",
        benchmark:
            "results/benchmarks/utility/phase_diagram.tsv"
        priority: 80  # scheduling only: see the note in common.smk
        params:
            phase=PHASE,
            equal=EQUAL,
            grid_profile=config.get("grid_profile", "default"),
        script:
            "../scripts/utility_phase_diagram.py"

    ALL_TARGETS.extend(
        [
            f"{U}/phase_diagram.csv",
            f"{U}/phase_diagram_boundary.csv",
            f"{U}/phase_diagram_monte_carlo.csv",
            *PHASE_FIGURES,
        ]
    )


# Composed phase diagram: shuffle or curator for T rounds of q n users against one total
# (epsilon, delta), each mechanism calibrated through its composed PLD; one grid job per (k, T) (each point
# its own stream from the root seed), one job combines, finds how the verdict moves with T and draws the figure.
# The Gaussian's and the geometric's per-round calibrations depend on neither n nor k: one job makes them
# once per (T, q, epsilon) and every grid job reads them (docs/decisions/workflow.md).
# Library: shuffledp.experiments.compare_rounds, shuffledp.plotting.compare_rounds.
ROUNDS = (UTILITY or {}).get("phase_diagram_rounds")

if ROUNDS is not None and PHASE is not None:
    ROUNDS_T = [int(T) for T in ROUNDS["compositions"]]

    rule utility_phase_diagram_rounds_baselines:
        output:
            f"{U}/phase_diagram_rounds/baselines.json",
        log:
            "logs/utility/phase_diagram_rounds_baselines.log",
        benchmark:
            "results/benchmarks/utility/phase_diagram_rounds_baselines.tsv"
        priority: 80  # scheduling only: see the note in common.smk
        params:
            rounds=ROUNDS,
            phase=PHASE,
            neighbouring=UTILITY["neighbouring"],
        script:
            "../scripts/utility_phase_diagram_rounds_baselines.py"

    rule utility_phase_diagram_rounds_grid:
        input:
            baselines=f"{U}/phase_diagram_rounds/baselines.json",
        output:
            f"{U}/phase_diagram_rounds/grid_k{{k}}_T{{T}}.csv",
        log:
            "logs/utility/phase_diagram_rounds_grid_k{k}_T{T}.log",
        benchmark:
            "results/benchmarks/utility/phase_diagram_rounds_grid_k{k}_T{T}.tsv"
        wildcard_constraints:
            k=r"\d+",
            T=r"\d+",
        priority: 80  # scheduling only: see the note in common.smk
        params:
            rounds=ROUNDS,
            phase=PHASE,
            seed=config["seed"],
            neighbouring=UTILITY["neighbouring"],
        script:
            "../scripts/utility_phase_diagram_rounds_grid.py"

    rule utility_phase_diagram_rounds:
        input:
            grids=expand(f"{U}/phase_diagram_rounds/grid_k{{k}}_T{{T}}.csv", k=ROUNDS["k"], T=ROUNDS_T),
        output:
            grid=f"{U}/phase_diagram_rounds.csv",
            verdicts=f"{U}/phase_diagram_rounds_verdicts.csv",
            figure=f"{U}/phase_diagram_rounds.png",
        log:
            "logs/utility/phase_diagram_rounds.log",
        params:
            grid_profile=config.get("grid_profile", "default"),
        script:
            "../scripts/utility_phase_diagram_rounds.py"

    ALL_TARGETS.extend(
        [
            f"{U}/phase_diagram_rounds.csv",
            f"{U}/phase_diagram_rounds_verdicts.csv",
            f"{U}/phase_diagram_rounds.png",
        ]
    )
