# Girgis stage: Girgis, Data, Diggavi, Kairouz & Suresh (CCS 2021), Section 4's comparison (their
# Fig. 2): RDP upper bounds (Thm 3.1, 3.3) against the lower bound (Thm 3.4), one verdict per curve and per
# checkable claim. Library: shuffledp.experiments.girgis, shuffledp.plotting.girgis.
GIRGIS = config.get("girgis")
G = "results/girgis"

if GIRGIS is not None:

    rule girgis_figure:
        output:
            csv=f"{G}/girgis_fig2.csv",
            png=report(f"{G}/girgis_fig2.png", caption="../report/girgis.rst", category="Girgis et al."),
        log:
            "logs/girgis/fig2.log",
        benchmark:
            "results/benchmarks/girgis/fig2.tsv"
        params:
            section=GIRGIS["fig2"],
        script:
            "../scripts/girgis_figure.py"

    rule girgis_verdicts:
        input:
            f"{G}/girgis_fig2.csv",
        output:
            csv=f"{G}/girgis_verdicts.csv",
            md=f"{G}/girgis_verdicts.md",
        log:
            "logs/girgis/verdicts.log",
        benchmark:
            "results/benchmarks/girgis/verdicts.tsv"
        params:
            section=GIRGIS["fig2"],
        script:
            "../scripts/girgis_verdicts.py"

    # The verdict table only reads the curve file: run it where Snakemake runs.
    localrules:
        girgis_verdicts,

    ALL_TARGETS.extend(
        [
            f"{G}/girgis_fig2.csv",
            f"{G}/girgis_fig2.png",
            f"{G}/girgis_verdicts.csv",
            f"{G}/girgis_verdicts.md",
        ]
    )
