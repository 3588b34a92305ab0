"""Tables II and IV, built from the ``accounting`` config section (Figure 1's grid and the delta sweeps:
:mod:`shuffledp.experiments.accounting_grids`).

Every delta here comes from the accountant registry (:func:`shuffledp.accounting.get_accountant`);
this module only chooses the settings (from the config slices), evaluates the accountants on all
epsilons at once, and lays the results out as tidy frames next to the paper's values transcribed
in :mod:`shuffledp.reference`. Verdicts use :func:`shuffledp.tables.printed_precision_verdict`.

Deltas are carried in log space (``log10_delta``) as well as linear: the exact single-bin delta of
Table II falls below the smallest double (about 1e-308) for n = 1,000, and such a value is shown as
its base-10 logarithm, never as a false zero.

Room: the library side of ``workflow/rules/accounting.smk`` for the paper's own tables and figure
(Tables II, IV; the settings and log-space deltas Fig. 1 and the sweeps share). Imports accountants, :mod:`shuffledp.tables` and
:mod:`shuffledp.reference`; nothing from the utility side, the report or plotting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from shuffledp import accounting
from shuffledp.accounting import Accountant, Direction, get_accountant, list_accountants
from shuffledp.tables import (
    COMPARISON_COLUMNS,
    NOT_REPRODUCIBLE,
    REPRODUCED,
    parse_printed,
    printed_precision_verdict,
)

__all__ = [
    "ACCOUNTANT_LABELS",
    "n_x0_from_rule",
    "n_x0_from_fraction",
    "check_accounting_config",
    "log_delta",
    "format_delta",
    "table2_frames",
    "table4_frames",
    "verdict_counts",
    "truncates_to_printed",
    "TABLE2_RATE_COLUMNS",
]

_LOG10_E = 1.0 / math.log(10.0)
#: a delta whose natural log is below this is not representable as a double (shown as 10^x)
_LOG_SMALLEST_DOUBLE = math.log(2.2250738585072014e-308)

#: column label of each accountant's delta in the tables (honest about what it is)
ACCOUNTANT_LABELS: Mapping[str, str] = accounting.labels()  # read from the classes (live)

#: Table II's reference columns: paper column -> (rate accountant as the paper computed it, genuine bound)
TABLE2_RATE_COLUMNS = {
    "[11]": ("rate-erlingsson", "erlingsson"),
    "[10]": ("rate-balle", "balle-blanket"),
    "[12]": ("rate-feldman", "feldman-closed"),
}
TABLE2_OURS_COLUMN = "Our delta"

#: accountants whose cost grows as n^3 (computed only up to ``table2.full_histogram_max_users``)
HISTOGRAM_ACCOUNTANTS = frozenset({"histogram-exact", "histogram-pair-lower"})

AccountantFactory = Callable[..., Accountant]


# --------------------------------------------------------------------------------------------------
# settings
# --------------------------------------------------------------------------------------------------
def n_x0_from_fraction(fraction: float, n_users: int) -> int:
    """n_x0 = round(fraction * n), capped at n - 1 (the other users); ``fraction`` in [0, 1]."""
    if not 0.0 <= float(fraction) <= 1.0:
        raise ValueError(f"`n_x0_fraction` must be in [0, 1]; got {fraction!r}.")
    return int(min(int(np.floor(float(fraction) * int(n_users) + 0.5)), int(n_users) - 1))


def n_x0_from_rule(rule: Mapping, n_users: int) -> int:
    """Apply an ``n_x0`` rule ``{rule: fixed|fraction, value: ...}`` for ``n_users`` users."""
    kind, value = rule["rule"], rule["value"]
    if kind == "fraction":
        return n_x0_from_fraction(value, n_users)
    if kind == "fixed":
        if float(value) != int(value) or not 0 <= int(value) <= n_users - 1:
            raise ValueError(
                f"`n_x0` must be an integer in [0, {n_users - 1}] for n = {n_users}; got {value!r}."
            )
        return int(value)
    raise ValueError(f"`n_x0.rule` must be one of 'fixed', 'fraction'; got {kind!r}.")


def _table4_rows(block: Mapping) -> list[dict]:
    """One setting per row of a Table IV block (the varied parameter replaced by each value)."""
    rows = []
    for value in block["values"]:
        setting: dict[str, Any] = {
            "epsilon_local": float(block["epsilon_local"]),
            "n_users": int(block["n_users"]),
            "k": int(block["k"]),
        }
        setting[block["vary"]] = float(value) if block["vary"] == "epsilon_local" else int(value)
        setting["n_x0"] = n_x0_from_rule(block["n_x0"], setting["n_users"])
        rows.append(setting)
    return rows


def check_accounting_config(section: Mapping, *, available: Sequence[str] | None = None) -> None:
    """Cross-key checks of the ``accounting`` section a JSON schema cannot state.

    Raises :class:`shuffledp.config.ConfigError` with one message naming the key, the accepted values
    and the value received. ``available`` (default: the registry) are the accountant names accepted.
    """
    from shuffledp.config import ConfigError

    names = set(list_accountants() if available is None else available)

    def check_names(key: str, values) -> None:
        for value in values:
            if value not in names:
                raise ConfigError(
                    f"config: `{key}` must name registered accountants ({', '.join(sorted(names))}); got {value!r}."
                )

    table2 = section["table2"]
    check_names("accounting.table2.bounds", table2["bounds"])
    check_names("accounting.table4.bounds", section["table4"].get("bounds", []))
    for index, block in enumerate(section["table4"]["blocks"]):
        key = f"accounting.table4.blocks[{index}]"
        if block["vary"] in ("n_users", "k"):
            low = 2
            for value in block["values"]:
                if float(value) != int(value) or value < low:
                    raise ConfigError(
                        f"config: `{key}.values` must be integers >= {low} when varying {block['vary']}; got {value!r}."
                    )
        rule = block["n_x0"]
        if rule["rule"] == "fraction" and rule["value"] > 1:
            raise ConfigError(
                f"config: `{key}.n_x0.value` must be in [0, 1] for rule 'fraction'; got {rule['value']!r}."
            )
        for setting in _table4_rows({**block, "n_x0": {"rule": "fraction", "value": 0.0}}):
            if rule["rule"] == "fixed" and (
                float(rule["value"]) != int(rule["value"]) or rule["value"] > setting["n_users"] - 1
            ):
                raise ConfigError(
                    f"config: `{key}.n_x0.value` must be an integer in [0, {setting['n_users'] - 1}] "
                    f"(n - 1 for n = {setting['n_users']}); got {rule['value']!r}. "
                    "Use rule 'fraction' for a block that varies n."
                )
    fig1 = section["fig1"]
    for axis in ("epsilon", "epsilon_local"):
        if not fig1[axis]["start"] < fig1[axis]["stop"]:
            raise ConfigError(
                f"config: `accounting.fig1.{axis}.stop` must be greater than `start` ({fig1[axis]['start']}); "
                f"got {fig1[axis]['stop']}."
            )
    rule = fig1["n_x0"]
    if rule["rule"] == "fraction" and rule["value"] > 1:
        raise ConfigError(
            f"config: `accounting.fig1.n_x0.value` must be in [0, 1] for rule 'fraction'; got {rule['value']!r}."
        )
    if rule["rule"] == "fixed" and (
        float(rule["value"]) != int(rule["value"]) or rule["value"] > fig1["n_users"] - 1
    ):
        raise ConfigError(
            f"config: `accounting.fig1.n_x0.value` must be an integer in [0, {fig1['n_users'] - 1}] "
            f"(n - 1); got {rule['value']!r}."
        )
    check_names("accounting.fig1.accountants", fig1["accountants"])
    for name, sweep in section["sweeps"].items():
        check_names(f"accounting.sweeps.{name}.accountants", sweep["accountants"])


# --------------------------------------------------------------------------------------------------
# evaluation
# --------------------------------------------------------------------------------------------------
def log_delta(
    name: str,
    epsilons,
    *,
    epsilon_local: float,
    n_users: int,
    k: int,
    n_x0: int | None,
    factory: AccountantFactory = get_accountant,
) -> np.ndarray:
    """Natural log of delta of accountant ``name`` at every epsilon (``-inf`` for delta = 0).

    ``"biswas-exact-both"`` is ``biswas-exact`` with ``direction=Direction.BOTH``.
    """
    options = {}
    if name == "biswas-exact-both":
        name, options = "biswas-exact", {"direction": Direction.BOTH}
    accountant = factory(name, epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0, **options)
    return np.asarray(accountant.log_delta_for_epsilon(np.asarray(epsilons, dtype=float)), dtype=float)


def format_delta(log_value: float) -> str:
    """A delta from its natural log, 4 significant digits; also below the double range ("1.234e-400")."""
    if log_value == -math.inf:
        return "0"
    if math.isnan(log_value):
        return ""
    log10 = log_value * _LOG10_E
    exponent = math.floor(log10)
    mantissa = 10.0 ** (log10 - exponent)
    if mantissa >= 9.9995:
        mantissa, exponent = 1.0, exponent + 1
    return f"{mantissa:.3f}e{exponent:+03d}"


def _relative_difference(log_ours: float, paper_text: str) -> float:
    paper = float(parse_printed(paper_text))
    if paper == 0.0:
        return 0.0 if log_ours == -math.inf else math.inf
    if log_ours == -math.inf:
        return -1.0
    return math.expm1(log_ours - math.log(paper))


def truncates_to_printed(paper_text: str, log_ours: float) -> bool:
    """Whether ``exp(log_ours)`` *truncated* (not rounded) to the printed digits gives ``paper_text``."""
    paper = parse_printed(paper_text)
    if paper <= 0 or not math.isfinite(log_ours):
        return False
    exponent = paper.as_tuple().exponent  # the last printed digit is worth 10^exponent
    if not isinstance(exponent, int):  # "Infinity" or "NaN" printed: no last digit
        return False
    digits = int(paper.scaleb(-exponent))
    scaled = math.exp(log_ours - int(exponent) * math.log(10.0))
    return math.floor(scaled * (1 + 1e-12)) == digits


def _verdict(paper_text: str, log_ours: float) -> tuple[str, str]:
    """Printed-precision verdict, also when our value is below the double range.

    A cell that is not reproduced by rounding but is by truncation says so in the note (the verdict
    stays "not reproduced": the printed value is not our value rounded).
    """
    if math.isnan(log_ours):
        return NOT_REPRODUCIBLE, "no value computed"
    paper = float(parse_printed(paper_text))
    if log_ours < _LOG_SMALLEST_DOUBLE and log_ours != -math.inf and paper > 0.0:
        verdict, note = (
            printed_precision_verdict(paper_text, 0.0)[0],
            (f"ours {format_delta(log_ours)} (below the double range) vs printed {paper_text}"),
        )
    else:
        verdict, note = printed_precision_verdict(paper_text, float(math.exp(log_ours)))
    if verdict != REPRODUCED and truncates_to_printed(paper_text, log_ours):
        note += "; equals the printed value if truncated instead of rounded"
    return verdict, note


def _comparison_row(table, block, row, column, paper, log_printed, log_exact, verdict, note) -> dict:
    return dict(
        zip(
            COMPARISON_COLUMNS,
            [
                table,
                block,
                row,
                column,
                paper,
                float(math.exp(log_printed)) if not math.isnan(log_printed) else math.nan,
                float(math.exp(log_exact)) if not math.isnan(log_exact) else math.nan,
                _relative_difference(log_printed, paper) if not math.isnan(log_printed) else math.nan,
                verdict,
                note,
            ],
        )
    )


def _reference_cells(reference: pd.DataFrame, block: str, row: str) -> pd.DataFrame:
    cells = reference[(reference["block"] == block) & (reference["row"] == row)]
    return cells.reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# Table II
# --------------------------------------------------------------------------------------------------
def table2_frames(
    table2: Mapping,
    reference: pd.DataFrame,
    *,
    factory: AccountantFactory = get_accountant,
    available: Sequence[str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, comparison) for Table II from the ``accounting.table2`` config slice.

    ``table``: one row per (block, epsilon): the paper's four columns (as printed), the rate columns as
    the paper computed them, eq. (6) as printed, the exact single-bin delta (forward and both
    directions), the full-histogram delta where n <= ``full_histogram_max_users`` and the accountant is
    registered, the configured genuine bounds (the full-histogram ones under the same size limit),
    and a verdict column. ``comparison``: tidy rows with
    :data:`shuffledp.tables.COMPARISON_COLUMNS`.
    """
    names = set(list_accountants() if available is None else available)
    epsilons = np.asarray(table2["epsilon"], dtype=float)
    rows: list[dict] = []
    comparison: list[dict] = []
    for block in table2["blocks"]:
        setting = _table2_setting(table2, block)
        logs, skipped = _table2_logs(table2, setting, epsilons, names, factory)
        for i, eps in enumerate(epsilons):
            row_label = f"eps={eps:g}"
            cells = _reference_cells(reference, block["label"], row_label)
            paper = dict(zip(cells["column"], cells["value"]))
            record = _table2_record(setting, float(eps))
            verdicts = _table2_rate_cells(record, comparison, setting, row_label, paper, logs, i)
            verdicts += _table2_eq6_cells(record, comparison, setting, row_label, paper, logs, i)
            for name in ["histogram-exact", *table2["bounds"]]:
                label = ACCOUNTANT_LABELS.get(name, name)
                record[label] = format_delta(float(logs[name][i])) if name in logs else skipped[name]
            record["reproduced (printed precision)"] = "; ".join(verdicts)
            rows.append(record)
    return pd.DataFrame(rows), pd.DataFrame(comparison, columns=COMPARISON_COLUMNS)


def _table2_setting(table2: Mapping, block: Mapping) -> dict:
    """One block's setting: label, n, k, n_x0, the caption's eps0 and the rate columns' eps0."""
    n_users = int(block["n_users"])
    return dict(
        label=block["label"],
        n_users=n_users,
        k=int(table2["k"]),
        n_x0=n_x0_from_fraction(table2["n_x0_fraction"], n_users),
        eps0=float(block["epsilon_local"]),
        rate_eps0=float(block["rate_epsilon_local"]),
    )


def _table2_logs(table2, setting, epsilons, names, factory) -> tuple[dict, dict]:
    """(log delta per accountant, reason per accountant not computed) of one block, over ``epsilons``.

    The rate columns at the rates' eps0 (and at the caption's eps0 as ``<rate>@caption`` where the two
    differ), eq. (6) and the exact single-bin deltas, then the full histogram and the configured bounds
    (skipped when not registered, or the full-histogram ones above ``full_histogram_max_users``).
    """
    eps0, rate_eps0, n_users = setting["eps0"], setting["rate_eps0"], setting["n_users"]
    common = dict(n_users=n_users, k=setting["k"], n_x0=setting["n_x0"], factory=factory)
    logs: dict[str, np.ndarray] = {}
    for rate, _ in TABLE2_RATE_COLUMNS.values():
        logs[rate] = log_delta(rate, epsilons, epsilon_local=rate_eps0, **common)
        if rate_eps0 != eps0:
            logs[rate + "@caption"] = log_delta(rate, epsilons, epsilon_local=eps0, **common)
    for name in ("biswas-printed", "biswas-exact", "biswas-exact-both"):
        logs[name] = log_delta(name, epsilons, epsilon_local=eps0, **common)
    skipped: dict[str, str] = {}
    for name in ["histogram-exact", *table2["bounds"]]:
        if name in logs:
            continue
        if name not in names:
            skipped[name] = f"{name} is not registered"
        elif name in HISTOGRAM_ACCOUNTANTS and n_users > int(table2["full_histogram_max_users"]):
            skipped[name] = (
                f"not computed: n > accounting.table2.full_histogram_max_users ({table2['full_histogram_max_users']})"
            )
        else:
            logs[name] = log_delta(name, epsilons, epsilon_local=eps0, **common)
    return logs, skipped


def _table2_record(setting: Mapping, eps: float) -> dict:
    """The leading columns of one row of the Table II frame."""
    record = {
        "block": setting["label"],
        "n": setting["n_users"],
        "eps0": setting["eps0"],
        "k": setting["k"],
        "n_x0": setting["n_x0"],
        "epsilon": eps,
    }
    record["eps0 of the rate columns"] = setting["rate_eps0"]
    return record


def _table2_rate_cells(record, comparison, setting, row_label, paper, logs, i) -> list[str]:
    """The paper's rate columns of one row: add them to ``record`` and their verdicts to
    ``comparison``; return the verdict texts."""
    eps0, rate_eps0 = setting["eps0"], setting["rate_eps0"]
    verdicts = []
    for column, (rate, bound) in TABLE2_RATE_COLUMNS.items():
        record[f"paper {column}"] = paper.get(column, "")
        record[ACCOUNTANT_LABELS[rate]] = format_delta(float(logs[rate][i]))
        if column not in paper:
            continue
        verdict, note = _verdict(paper[column], float(logs[rate][i]))
        note = f"ours_as_printed: {rate} at eps0 = {rate_eps0:g}; " + note
        if rate + "@caption" in logs:
            alt_verdict, _ = _verdict(paper[column], float(logs[rate + "@caption"][i]))
            note += (
                f"; at the caption's eps0 = {eps0:g} the rate is "
                f"{format_delta(float(logs[rate + '@caption'][i]))} ({alt_verdict})"
            )
        log_bound = float(logs[bound][i]) if bound in logs else math.nan
        if bound in logs:
            note += f"; ours_exact: {ACCOUNTANT_LABELS[bound]}"
        comparison.append(
            _comparison_row(
                "II",
                setting["label"],
                row_label,
                column,
                paper[column],
                float(logs[rate][i]),
                log_bound,
                verdict,
                note,
            )
        )
        verdicts.append(f"{column}: {verdict}")
    return verdicts


def _worst_case_note(logs: Mapping[str, np.ndarray], i: int) -> str:
    """'; worst case over every dataset: [lower, upper]' when both ends were computed: the
    guarantee the paper's one-dataset, one-bin delta stands in for."""
    if not {"worst-case-lower", "worst-case-upper"} <= set(logs):
        return ""
    low, high = (format_delta(float(logs[name][i])) for name in ("worst-case-lower", "worst-case-upper"))
    return f"; worst case over every dataset: [{low}, {high}] (worst-case-lower, worst-case-upper)"


def _table2_eq6_cells(record, comparison, setting, row_label, paper, logs, i) -> list[str]:
    """The paper's own column (eq. (6)) of one row and the exact single-bin deltas: add them to
    ``record`` and the verdict to ``comparison``; return the verdict texts."""
    record[f"paper {TABLE2_OURS_COLUMN}"] = paper.get(TABLE2_OURS_COLUMN, "")
    for name in ("biswas-printed", "biswas-exact", "biswas-exact-both"):
        record[ACCOUNTANT_LABELS[name]] = format_delta(float(logs[name][i]))
    if TABLE2_OURS_COLUMN not in paper:
        return []
    eps0, k, n_x0 = setting["eps0"], setting["k"], setting["n_x0"]
    verdict, note = _verdict(paper[TABLE2_OURS_COLUMN], float(logs["biswas-printed"][i]))
    note = (
        f"ours_as_printed: eq. (6) at eps0 = {eps0:g}, k = {k}, n_x0 = {n_x0}; {note}; "
        f"ours_exact: exact single-bin (forward) = {format_delta(float(logs['biswas-exact'][i]))}"
        + _worst_case_note(logs, i)
    )
    comparison.append(
        _comparison_row(
            "II",
            setting["label"],
            row_label,
            TABLE2_OURS_COLUMN,
            paper[TABLE2_OURS_COLUMN],
            float(logs["biswas-printed"][i]),
            float(logs["biswas-exact"][i]),
            verdict,
            note,
        )
    )
    return [f"{TABLE2_OURS_COLUMN}: {verdict}"]


# --------------------------------------------------------------------------------------------------
# Table IV
# --------------------------------------------------------------------------------------------------
def _table4_row_label(block: Mapping, setting: Mapping) -> str:
    value = setting[block["vary"]]
    short = {"epsilon_local": "eps0", "n_users": "n", "k": "k"}[block["vary"]]
    return f"{short}={value:g}"


def table4_frames(
    table4: Mapping, reference: pd.DataFrame, *, factory: AccountantFactory = get_accountant
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, comparison) for Table IV from the ``accounting.table4`` config slice.

    The paper's cells of a row are matched by position to ``table4.epsilon`` (its "varying n" and
    "varying k" blocks print n / k values as column labels; see the reference README). The optional
    ``table4.bounds`` add one column each (the worst case over datasets beside eq. (6)).
    """
    epsilons = np.asarray(table4["epsilon"], dtype=float)
    rows, comparison = [], []
    for block in table4["blocks"]:
        for setting in _table4_rows(block):
            row_label = _table4_row_label(block, setting)
            logs = {
                name: log_delta(name, epsilons, factory=factory, **setting)
                for name in ("biswas-printed", "biswas-exact", "biswas-exact-both", *table4.get("bounds", []))
            }
            cells = _reference_cells(reference, block["label"], row_label)
            if len(cells) not in (0, len(epsilons)):
                raise ValueError(
                    f"`table4.epsilon` must have one value per printed column ({len(cells)}) of row "
                    f"{row_label!r} in block {block['label']!r}; got {len(epsilons)}."
                )
            for i, eps in enumerate(epsilons):
                paper = cells["value"][i] if len(cells) else ""
                printed_column = cells["column"][i] if len(cells) else f"eps={eps:g}"
                record = {
                    "block": block["label"],
                    "row": row_label,
                    "column (as printed)": printed_column,
                    **setting,
                    "epsilon": float(eps),
                    "paper": paper,
                }
                for name, values in logs.items():
                    record[ACCOUNTANT_LABELS[name]] = format_delta(float(values[i]))
                if paper:
                    verdict, note = _verdict(paper, float(logs["biswas-printed"][i]))
                    setting_text = ", ".join(f"{key} = {value:g}" for key, value in setting.items())
                    note = f"eq. (6) at {setting_text}, eps = {eps:g}; {note}" + _worst_case_note(logs, i)
                    if printed_column != f"eps={eps:g}":
                        note += f"; column printed as {printed_column!r}, read as eps = {eps:g}"
                    comparison.append(
                        _comparison_row(
                            "IV",
                            block["label"],
                            row_label,
                            printed_column,
                            paper,
                            float(logs["biswas-printed"][i]),
                            float(logs["biswas-exact"][i]),
                            verdict,
                            note,
                        )
                    )
                    record["reproduced (printed precision)"] = verdict
                else:
                    record["reproduced (printed precision)"] = "no paper value"
                rows.append(record)
    return pd.DataFrame(rows), pd.DataFrame(comparison, columns=COMPARISON_COLUMNS)


def verdict_counts(comparison: pd.DataFrame) -> dict[str, int]:
    """Number of comparison rows per verdict (for logs)."""
    return {str(key): int(value) for key, value in comparison["verdict"].value_counts().items()}
