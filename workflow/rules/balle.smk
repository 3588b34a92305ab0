# Balle stage: Balle, Bell, Gascon & Nissim's Figure 3 (CRYPTO 2019), four panels of
# privacy-blanket bounds, beside the values of their public code, with tight references, and one verdict
# per published curve; their Figure 2 (the Laplace blanket) and the two Sec. 6 claims the corrected Bennett code
# overturns. Library: shuffledp.experiments.balle, shuffledp.plotting.balle.
BALLE = config.get("balle")
B = "results/balle"

if BALLE is not None:
    from shuffledp.experiments.balle import shared_reference_panels

    # panels with reference points another panel also needs (ii and iii: the same three reference curves
    # at the same (eps, delta, n)) read them from one job instead of computing them twice
    BALLE_SHARED = shared_reference_panels(BALLE["panels"])

    rule balle_references:
        output:
            csv=f"{B}/balle_shared_references.csv",
        log:
            "logs/balle/references.log",
        benchmark:
            "results/benchmarks/balle/references.tsv"
        priority: 60  # scheduling only: see the note in common.smk
        params:
            panels=BALLE["panels"],
        script:
            "../scripts/balle_references.py"

    # One job makes the four panels (each was ~1 CPU s of interpreter and import start-up beside 0.3-1 s of
    # work): one CSV and one log file per panel as before, one benchmark file. It waits for
    # the shared references (panels ii and iii read them), which start first (priority 60).
    BALLE_PANELS = ["i", "ii", "iii", "iv"]

    rule balle_panel:
        input:
            [f"{B}/balle_shared_references.csv"] if BALLE_SHARED else [],
        output:
            csv=[f"{B}/balle_fig3_{panel}.csv" for panel in BALLE_PANELS],
        log:
            [f"logs/balle/panel_{panel}.log" for panel in BALLE_PANELS],
        benchmark:
            "results/benchmarks/balle/panels.tsv"
        priority: 60  # scheduling only: see the note in common.smk
        params:
            panels=BALLE_PANELS,
            sections=[BALLE["panels"][panel] for panel in BALLE_PANELS],
            shared=sorted(BALLE_SHARED),
        script:
            "../scripts/balle_figure.py"

    rule balle_verdicts:
        input:
            [f"{B}/balle_fig3_{panel}.csv" for panel in BALLE_PANELS],
        output:
            csv=f"{B}/balle_fig3.csv",
            png=report(f"{B}/balle_fig3.png", caption="../report/balle.rst", category="Balle et al."),
            verdicts_csv=f"{B}/balle_verdicts.csv",
            verdicts_md=f"{B}/balle_verdicts.md",
        log:
            "logs/balle/verdicts.log",
        benchmark:
            "results/benchmarks/balle/verdicts.tsv"
        params:
            panels=BALLE["panels"],
            tolerance=BALLE["verdict_tolerance"],
        script:
            "../scripts/balle_verdicts.py"

    rule balle_claims:
        input:
            f"{B}/balle_fig3.csv",
        output:
            csv=f"{B}/balle_claims.csv",
            md=f"{B}/balle_claims.md",
        log:
            "logs/balle/claims.log",
        benchmark:
            "results/benchmarks/balle/claims.tsv"
        script:
            "../scripts/balle_claims.py"

    # The verdict table, the figure and the claim counts only read small files: run them where Snakemake runs.
    localrules:
        balle_verdicts,
        balle_claims,

    ALL_TARGETS.extend(
        [
            f"{B}/balle_fig3.csv",
            f"{B}/balle_fig3.png",
            f"{B}/balle_verdicts.csv",
            f"{B}/balle_verdicts.md",
            f"{B}/balle_claims.csv",
            f"{B}/balle_claims.md",
        ]
    )


if BALLE is not None and "fig2" in BALLE:

    rule balle_fig2:
        output:
            csv=f"{B}/balle_fig2.csv",
            png=report(f"{B}/balle_fig2.png", caption="../report/balle_fig2.rst", category="Balle et al."),
        log:
            "logs/balle/fig2.log",
        benchmark:
            "results/benchmarks/balle/fig2.tsv"
        params:
            section=BALLE["fig2"],
        script:
            "../scripts/balle_fig2.py"

    # closed-form densities, computed in milliseconds
    localrules:
        balle_fig2,

    ALL_TARGETS.extend([f"{B}/balle_fig2.csv", f"{B}/balle_fig2.png"])
