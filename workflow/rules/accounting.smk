# Accountants' stage: Table II, Table IV, Figure 1, config-driven delta sweeps, and beyond the paper the
# epsilon comparison of guarantees and the worst-case bracket table (issue 8).
# Library: shuffledp.experiments.accounting and shuffledp.experiments.guarantees (frames),
# shuffledp.plotting.accounting (drawing),
# shuffledp.accounting (the accountants, by registry name), shuffledp.reference (paper values).
from shuffledp.experiments.accounting import check_accounting_config
from shuffledp.experiments.guarantees import check_worst_case_config

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


wildcard_constraints:
    sweep="|".join(SWEEPS) if SWEEPS else "a^",


rule accounting_table2:
    output:
        csv=report("results/accounting/table2.csv", caption="../report/table2.rst", category="Accounting"),
        latex="results/accounting/table2.tex",
        markdown="results/accounting/table2.md",
        comparison="results/accounting/table2_comparison.csv",
    params:
        table2=ACCOUNTING["table2"],
    log:
        "logs/accounting/table2.log",
    benchmark:
        "results/benchmarks/accounting/table2.tsv"
    script:
        "../scripts/accounting_table2.py"


rule accounting_table4:
    output:
        csv=report("results/accounting/table4.csv", caption="../report/table4.rst", category="Accounting"),
        latex="results/accounting/table4.tex",
        markdown="results/accounting/table4.md",
        comparison="results/accounting/table4_comparison.csv",
    params:
        table4=ACCOUNTING["table4"],
    log:
        "logs/accounting/table4.log",
    benchmark:
        "results/benchmarks/accounting/table4.tsv"
    script:
        "../scripts/accounting_table4.py"


rule accounting_fig1:
    output:
        figure=report("results/accounting/fig1.png", caption="../report/fig1.rst", category="Accounting"),
        data="results/accounting/fig1_data.csv",
    params:
        fig1=ACCOUNTING["fig1"],
    log:
        "logs/accounting/fig1.log",
    benchmark:
        "results/benchmarks/accounting/fig1.tsv"
    script:
        "../scripts/accounting_fig1.py"


rule accounting_sweep:
    output:
        data="results/accounting/sweeps/{sweep}.csv",
        figure=report(
            "results/accounting/sweeps/{sweep}.png",
            caption="../report/accounting_sweep.rst",
            category="Accounting",
            subcategory="delta sweeps",
        ),
    params:
        name=lambda wildcards: wildcards.sweep,
        sweep=lambda wildcards: ACCOUNTING["sweeps"][wildcards.sweep],
    log:
        "logs/accounting/sweeps/{sweep}.log",
    benchmark:
        "results/benchmarks/accounting/sweeps/{sweep}.tsv"
    script:
        "../scripts/accounting_sweep.py"


rule accounting_epsilon_comparison:
    priority: 50  # scheduling only (issue 24): see the note in common.smk
    output:
        figure=report(
            "results/accounting/epsilon_comparison.png",
            caption="../report/epsilon_comparison.rst",
            category="Accounting",
            subcategory="beyond the paper",
        ),
        data="results/accounting/epsilon_comparison.csv",
    params:
        comparison=ACCOUNTING["epsilon_comparison"],
    log:
        "logs/accounting/epsilon_comparison.log",
    benchmark:
        "results/benchmarks/accounting/epsilon_comparison.tsv"
    script:
        "../scripts/accounting_epsilon_comparison.py"


rule accounting_bracket:
    priority: 70  # scheduling only (issue 24): see the note in common.smk
    output:
        csv=report(
            "results/accounting/bracket.csv",
            caption="../report/bracket.rst",
            category="Accounting",
            subcategory="beyond the paper",
        ),
        markdown="results/accounting/bracket.md",
    params:
        bracket=ACCOUNTING["bracket"],
    log:
        "logs/accounting/bracket.log",
    benchmark:
        "results/benchmarks/accounting/bracket.tsv"
    script:
        "../scripts/accounting_bracket.py"


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
    ]
)
