# Koskela stage: Koskela, Heikkila & Honkela's Figures 1-3 -- composed and subsampled
# shuffled k-RR through privacy loss distributions -- beside the curves of their public code, and one
# verdict per published curve. Library: shuffledp.experiments.koskela, shuffledp.plotting.koskela.
KOSKELA = config.get("koskela")
K = "results/koskela"

if KOSKELA is not None:

    # One job draws the three figures (each job imported matplotlib, pandas, scipy and dp_accounting: ~1.7 s
    # CPU, as much as Fig. 2's work); one CSV, PNG and log file per figure as before, one benchmark file.
    KOSKELA_FIGURES = [1, 2, 3]

    rule koskela_figure:
        output:
            csv=[f"{K}/koskela_fig{number}.csv" for number in KOSKELA_FIGURES],
            png=[
                report(
                    f"{K}/koskela_fig{number}.png",
                    caption="../report/koskela.rst",
                    category="Koskela et al.",
                )
                for number in KOSKELA_FIGURES
            ],
        log:
            [f"logs/koskela/fig{number}.log" for number in KOSKELA_FIGURES],
        benchmark:
            "results/benchmarks/koskela/figures.tsv"
        priority: 95  # scheduling only: see the note in common.smk
        params:
            numbers=KOSKELA_FIGURES,
            sections=[KOSKELA[f"fig{number}"] for number in KOSKELA_FIGURES],
            smallest_delta=KOSKELA["smallest_delta"],
        script:
            "../scripts/koskela_figure.py"

    rule koskela_verdicts:
        input:
            [f"{K}/koskela_fig{number}.csv" for number in KOSKELA_FIGURES],
        output:
            csv=f"{K}/koskela_verdicts.csv",
            md=f"{K}/koskela_verdicts.md",
        log:
            "logs/koskela/verdicts.log",
        benchmark:
            "results/benchmarks/koskela/verdicts.tsv"
        params:
            tolerance=KOSKELA["tolerance"],
            smallest_delta=KOSKELA["smallest_delta"],
        script:
            "../scripts/koskela_verdicts.py"

    # The verdict table only reads the three curve files: run it where Snakemake runs.
    localrules:
        koskela_verdicts,

    ALL_TARGETS.extend(
        [
            *expand(f"{K}/koskela_fig{{number}}.{{ext}}", number=[1, 2, 3], ext=["csv", "png"]),
            f"{K}/koskela_verdicts.csv",
            f"{K}/koskela_verdicts.md",
        ]
    )


# Koskela et al.'s Fig. 4: delta(eps) of shuffled Gaussian noise by Monte Carlo
# integration of the d-dimensional hockey-stick divergence, with confidence bands and exact values at
# d <= 2. Library: shuffledp.experiments.shuffled_gaussian, shuffledp.plotting.koskela_fig4.
if KOSKELA is not None and "fig4" in KOSKELA:

    rule koskela_fig4:
        output:
            csv=f"{K}/koskela_fig4.csv",
            png=report(
                f"{K}/koskela_fig4.png", caption="../report/koskela_fig4.rst", category="Koskela et al."
            ),
            verdicts_csv=f"{K}/koskela_fig4_verdicts.csv",
            verdicts_md=f"{K}/koskela_fig4_verdicts.md",
        log:
            "logs/koskela/fig4.log",
        benchmark:
            "results/benchmarks/koskela/fig4.tsv"
        params:
            section=KOSKELA["fig4"],
            seed=config["seed"],
            smallest_delta=KOSKELA["smallest_delta"],
        script:
            "../scripts/koskela_fig4.py"

    ALL_TARGETS.extend(
        [f"{K}/koskela_fig4.{ext}" for ext in ("csv", "png")]
        + [f"{K}/koskela_fig4_verdicts.{ext}" for ext in ("csv", "md")]
    )
