# Accountants' stage: Table II, Table IV, Figure 1, config-driven delta sweeps, and beyond the paper the
# epsilon comparison of guarantees and the worst-case bracket table.
# Library: shuffledp.experiments.accounting, .accounting_grids and .guarantees (frames),
# shuffledp.plotting.accounting and shuffledp.plotting.bracket (drawing),
# shuffledp.accounting (the accountants, by registry name), shuffledp.reference (paper values).
import re

from shuffledp.experiments.accounting import check_accounting_config
from shuffledp.experiments.guarantees import bracket_shards, check_worst_case_config

ACCOUNTING = config.get("accounting")
if ACCOUNTING is None:
    raise WorkflowError(
        "config: the top level is missing required key `accounting` (Tables II, IV, Figure 1, sweeps); "
        "copy the section from config/config.yaml."
    )
try:
    check_accounting_config(ACCOUNTING)
    check_worst_case_config(ACCOUNTING)
except ConfigError as error:
    raise WorkflowError(str(error)) from None

SWEEPS = list(ACCOUNTING["sweeps"])


# Tables II and IV and Figure 1: each is 0.1-0.6 s of work, less than a job's start-up (numpy, pandas, scipy,
# matplotlib: ~0.7-1 s CPU), so one job makes them all; every output keeps its path and each item its own
# log file, one benchmark file for the job. The sweeps are NOT in it: a sweep is the
# user's own addition, so each runs as its own job (rule accounting_sweep) and editing one sweep's config
# re-runs that sweep only (Snakemake's params trigger), never the paper's tables.
rule accounting_paper:
    output:
        table2_csv=report(
            "results/accounting/table2.csv", caption="../report/table2.rst", category="Accounting"
        ),
        table2_latex="results/accounting/table2.tex",
        table2_markdown="results/accounting/table2.md",
        table2_comparison="results/accounting/table2_comparison.csv",
        table4_csv=report(
            "results/accounting/table4.csv", caption="../report/table4.rst", category="Accounting"
        ),
        table4_latex="results/accounting/table4.tex",
        table4_markdown="results/accounting/table4.md",
        table4_comparison="results/accounting/table4_comparison.csv",
        fig1_figure=report("results/accounting/fig1.png", caption="../report/fig1.rst", category="Accounting"),
        fig1_data="results/accounting/fig1_data.csv",
    log:
        ["logs/accounting/table2.log", "logs/accounting/table4.log", "logs/accounting/fig1.log"],
    benchmark:
        "results/benchmarks/accounting/paper.tsv"
    priority: 50  # scheduling only: see the note in common.smk
    params:
        accounting={key: ACCOUNTING[key] for key in ("table2", "table4", "fig1")},
    script:
        "../scripts/accounting_paper.py"


# One job per entry of accounting.sweeps (its params are that entry only: changing it re-runs it alone).
rule accounting_sweep:
    output:
        data="results/accounting/sweeps/{sweep}.csv",
        figure=report(
            "results/accounting/sweeps/{sweep}.png",
            caption="../report/accounting_sweep.rst",
            category="Accounting",
            subcategory="delta sweeps",
        ),
    log:
        "logs/accounting/sweeps/{sweep}.log",
    benchmark:
        "results/benchmarks/accounting/sweeps/{sweep}.tsv"
    wildcard_constraints:
        sweep="|".join(re.escape(name) for name in SWEEPS) if SWEEPS else "(?!)",
    params:
        sweep=lambda wildcards: ACCOUNTING["sweeps"][wildcards.sweep],
    script:
        "../scripts/accounting_sweep.py"


rule accounting_epsilon_comparison:
    output:
        figure=report(
            "results/accounting/epsilon_comparison.png",
            caption="../report/epsilon_comparison.rst",
            category="Accounting",
            subcategory="beyond the paper",
        ),
        data="results/accounting/epsilon_comparison.csv",
    log:
        "logs/accounting/epsilon_comparison.log",
    benchmark:
        "results/benchmarks/accounting/epsilon_comparison.tsv"
    priority: 50  # scheduling only: see the note in common.smk
    params:
        comparison=ACCOUNTING["epsilon_comparison"],
    script:
        "../scripts/accounting_epsilon_comparison.py"


# The bracket: `shards` jobs (shares of its settings, longest processing time first on a cost estimate)
# so both cores work on it, then one job puts the rows back in order and writes the CSV and Markdown; the
# values are those of one job.
BRACKET_SHARDS = bracket_shards(ACCOUNTING["bracket"])


rule accounting_bracket_shard:
    output:
        f"results/accounting/bracket/shard{{shard}}of{BRACKET_SHARDS}.csv",
    log:
        f"logs/accounting/bracket_shard{{shard}}of{BRACKET_SHARDS}.log",
    benchmark:
        f"results/benchmarks/accounting/bracket_shard{{shard}}of{BRACKET_SHARDS}.tsv"
    wildcard_constraints:
        shard=r"\d+",
    priority: 70  # scheduling only: see the note in common.smk
    params:
        bracket=ACCOUNTING["bracket"],
    script:
        "../scripts/accounting_bracket_shard.py"


rule accounting_bracket:
    input:
        shards=expand(
            f"results/accounting/bracket/shard{{shard}}of{BRACKET_SHARDS}.csv", shard=range(BRACKET_SHARDS)
        ),
    output:
        csv=report(
            "results/accounting/bracket.csv",
            caption="../report/bracket.rst",
            category="Accounting",
            subcategory="beyond the paper",
        ),
        markdown="results/accounting/bracket.md",
    log:
        "logs/accounting/bracket.log",
    benchmark:
        "results/benchmarks/accounting/bracket.tsv"
    priority: 70  # scheduling only: see the note in common.smk
    params:
        bracket=ACCOUNTING["bracket"],
    script:
        "../scripts/accounting_bracket.py"


# The bracket figure: drawn from bracket.csv alone, so redrawing never recomputes the bracket.
rule accounting_bracket_figure:
    input:
        csv="results/accounting/bracket.csv",
    output:
        figure=report(
            "results/accounting/bracket.png",
            caption="../report/bracket_figure.rst",
            category="Accounting",
            subcategory="beyond the paper",
        ),
    log:
        "logs/accounting/bracket_figure.log",
    benchmark:
        "results/benchmarks/accounting/bracket_figure.tsv"
    script:
        "../scripts/accounting_bracket_figure.py"


ALL_TARGETS.extend(
    [
        *expand("results/accounting/table2.{ext}", ext=["csv", "tex", "md"]),
        "results/accounting/table2_comparison.csv",
        *expand("results/accounting/table4.{ext}", ext=["csv", "tex", "md"]),
        "results/accounting/table4_comparison.csv",
        "results/accounting/fig1.png",
        "results/accounting/fig1_data.csv",
        *expand("results/accounting/sweeps/{sweep}.{ext}", sweep=SWEEPS, ext=["csv", "png"]),
        "results/accounting/epsilon_comparison.png",
        "results/accounting/epsilon_comparison.csv",
        "results/accounting/bracket.csv",
        "results/accounting/bracket.md",
        "results/accounting/bracket.png",
    ]
)
