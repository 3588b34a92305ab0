"""Epsilon at a fixed delta across accountants (a Figure-1-style comparison) and the worst-case bracket table.

Two frames, built from the ``accounting.epsilon_comparison`` and ``accounting.bracket`` config slices:

* :func:`epsilon_comparison_frame`: for every configured accountant, the epsilon at which its delta
  reaches ``delta``, against n (eps0 fixed) and against eps0 (n fixed), in the style of Koskela et al.
  (2021), Figure 1 (epsilon against n at fixed delta). Every epsilon comes from the accountant's own
  ``epsilon_for_delta``; the direction in which it errs is the accountant's (an UPPER bound's epsilon
  errs upwards, the LOWER bound's downwards; see their docstrings). Each row says what the value is
  (``kind``, and ``role``: a guarantee valid for every dataset, a lower bound on the worst case, or
  one dataset's value that is no guarantee) and how it was reached (``status``). A setting where an
  accountant cannot reach the target is a row with ``status`` :data:`UNREACHABLE` (epsilon = inf) or
  :data:`ERROR` (the accountant's message in ``note``), never a missing row.
* :func:`bracket_frame`: for every (n, k, eps0, delta) of a grid, the lower and the upper epsilon of
  :func:`shuffledp.accounting.bracket.bracket` and their ratio; the true worst-case epsilon lies
  between them.

The per-dataset accountants (``biswas-printed``, ``biswas-exact``) need n_x0: it comes from the
section's ``n_x0`` rule (:func:`shuffledp.experiments.accounting.n_x0_from_rule`), and the rows say so.

Room: the library side of ``workflow/rules/accounting.smk`` beyond the paper. Imports accountants
and :mod:`shuffledp.experiments.accounting` (labels, the n_x0 rule); nothing from utility, report or
plotting.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from shuffledp._progress import progress
from shuffledp.accounting import accountant_class, get_accountant, list_accountants
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.worst_case.k2.blocks import K2BlockSearch
from shuffledp.accounting.worst_case.k2.pair_search import K2PairSearch
from shuffledp.accounting.worst_case.k3.blocks import K3ExactSearch
from shuffledp.accounting.worst_case.k3.large import K3WindowedSearch
from shuffledp.accounting.worst_case.k4.search import K4BlocksAndOwnHits, K4BlocksOnly, OwnHitsOnly
from shuffledp.accounting.worst_case.regimes import regime_for
from shuffledp.experiments.accounting import ACCOUNTANT_LABELS, n_x0_from_rule

__all__ = [
    "OK",
    "NO_AMPLIFICATION",
    "ZERO",
    "UNREACHABLE",
    "ERROR",
    "STATUSES",
    "PANELS",
    "GUARANTEE",
    "LOWER_BOUND",
    "ONE_DATASET",
    "NOT_A_BOUND",
    "COMPARISON_COLUMNS",
    "BRACKET_COLUMNS",
    "role_of",
    "epsilon_at_delta",
    "epsilon_comparison_frame",
    "check_worst_case_config",
    "bracket_points",
    "bracket_shards",
    "bracket_cost",
    "bracket_assignment",
    "bracket_frame",
    "bracket_combine",
    "bracket_markdown",
    "BRACKET_GOAL",
    "BRACKET_GOAL_BLANKET",
    "BRACKET_GOAL_LARGE",
    "BRACKET_BLANKET_USERS",
    "BRACKET_LARGE_EPS0",
]

#: statuses of an epsilon (column ``status``)
OK = "ok"
NO_AMPLIFICATION = "at or above eps0"  # reached only at epsilon >= eps0: nothing gained over local eps0-DP
ZERO = "epsilon = 0"  # delta(0) <= target already: epsilon 0 meets the target
UNREACHABLE = "unreachable"  # delta(epsilon) > target for every epsilon the accountant searched
ERROR = "error"  # the accountant refused the setting (its message is in ``note``)
STATUSES = (OK, NO_AMPLIFICATION, ZERO, UNREACHABLE, ERROR)

#: panel name -> the parameter on its horizontal axis
PANELS = {"against n": "n_users", "against eps0": "epsilon_local"}

#: roles of an accountant (column ``role``)
GUARANTEE = "guarantee, all datasets"
LOWER_BOUND = "lower bound on the worst case"
ONE_DATASET = "one dataset, not a guarantee"
NOT_A_BOUND = "not a bound"

COMPARISON_COLUMNS = [
    "panel",
    "accountant",
    "kind",
    "role",
    "label",
    "n_users",
    "k",
    "epsilon_local",
    "n_x0",
    "n_x0_rule",
    "delta",
    "epsilon",
    "status",
    "note",
]
#: the goals for the bracket eps_upper / eps_lower (read by the report's finding and drawn in the bracket
#: figure): at most BRACKET_GOAL everywhere below BRACKET_LARGE_EPS0, at most BRACKET_GOAL_BLANKET where the blanket
#: expects n gamma 2 / k = 2 n / (e^eps0 + k - 1) >= BRACKET_BLANKET_USERS users on x0 or x1, and at most
#: BRACKET_GOAL_LARGE with the upper end below eps0 at eps0 >= BRACKET_LARGE_EPS0 (the large-eps0 ends)
BRACKET_GOAL, BRACKET_GOAL_BLANKET, BRACKET_GOAL_LARGE = 1.01, 1.002, 1.05
BRACKET_BLANKET_USERS, BRACKET_LARGE_EPS0 = 100.0, 15.0
BRACKET_COLUMNS = [
    "n_users",
    "k",
    "epsilon_local",
    "delta",
    "eps_lower",
    "eps_upper",
    "ratio",
    "status",
    "lower",
    "upper",
]

#: an epsilon within this relative distance of eps0 counts as "at eps0" (the searches stop at
#: relative tolerances of 1e-9 and 1e-10)
_AT_EPSILON_LOCAL = 1e-6
#: where an accountant's search failed, delta is re-evaluated here to tell "no epsilon reaches the
#: target" (delta still above it) from any other refusal
_LARGE_EPSILON = 1e3

AccountantFactory = Callable[..., object]
Facts = Callable[[str], tuple[str, bool]]


def _registry_facts(name: str) -> tuple[str, bool]:
    cls = accountant_class(name)
    return cls.kind.value, bool(cls.needs_n_x0)


def role_of(kind: str, needs_n_x0: bool) -> str:
    """What an accountant's epsilon means in a comparison of guarantees (see the module docstring)."""
    if needs_n_x0:
        return ONE_DATASET
    if kind == "upper bound":
        return GUARANTEE
    if kind == "lower bound":
        return LOWER_BOUND
    return NOT_A_BOUND


def epsilon_at_delta(accountant, *, delta: float, epsilon_local: float) -> tuple[float, str, str]:
    """(epsilon, status, note) of one accountant object at target ``delta``.

    ``epsilon`` is the accountant's ``epsilon_for_delta(delta)`` (status :data:`OK`, :data:`ZERO` when
    it is 0, :data:`NO_AMPLIFICATION` when it is >= eps0 up to 1e-6 relative); when the accountant raises
    ``ValueError``, delta is evaluated at epsilon = 1000: still above the target means
    :data:`UNREACHABLE` (epsilon = inf), otherwise :data:`ERROR` (epsilon = NaN). ``note`` explains the
    status in words (the accountant's own message where there is one).
    """
    try:
        epsilon = float(accountant.epsilon_for_delta(delta))
    except ValueError as error:
        message = str(error)
        try:
            log_large = float(np.asarray(accountant.log_delta_for_epsilon([_LARGE_EPSILON]), dtype=float)[0])
        except (ValueError, ArithmeticError) as second:
            return (
                math.nan,
                ERROR,
                f"{message} (delta at eps = {_LARGE_EPSILON:g} not computable either: {second})",
            )
        if log_large > math.log(delta):
            return (
                math.inf,
                UNREACHABLE,
                (
                    f"no epsilon reaches delta = {delta:g}: delta(eps = {_LARGE_EPSILON:g}) = {math.exp(log_large):.3g} "
                    f"still exceeds it ({message})"
                ),
            )
        return math.nan, ERROR, message
    if epsilon == 0.0:
        return epsilon, ZERO, f"delta(0) <= {delta:g}: epsilon = 0 already meets the target"
    if epsilon >= epsilon_local * (1.0 - _AT_EPSILON_LOCAL):
        return (
            epsilon,
            NO_AMPLIFICATION,
            (
                f"reaches delta = {delta:g} only at epsilon >= eps0 = {epsilon_local:g}: no better than the local "
                f"guarantee (eps0, 0) of k-RR"
            ),
        )
    return epsilon, OK, ""


def _rule_text(rule: Mapping) -> str:
    if rule["rule"] == "fraction":
        return f"n_x0 = round({float(rule['value']):g} n), at most n - 1"
    return f"n_x0 = {int(rule['value'])}"


def _settings(section: Mapping) -> list[tuple[str, int, float]]:
    """(panel, n, eps0) of every point of the two panels, in order."""
    k_n = section["against_n"]
    k_e = section["against_epsilon_local"]
    points = [("against n", int(n), float(k_n["epsilon_local"])) for n in k_n["n_users"]]
    points += [("against eps0", int(k_e["n_users"]), float(e)) for e in k_e["epsilon_local"]]
    return points


def epsilon_comparison_frame(
    section: Mapping, *, factory: AccountantFactory = get_accountant, facts: Facts | None = None
) -> pd.DataFrame:
    """Long frame (:data:`COMPARISON_COLUMNS`) of epsilon at ``section["delta"]`` for every accountant of
    ``section["accountants"]`` at every point of the two panels (``against_n``, ``against_epsilon_local``).

    ``n_x0`` is filled (from ``section["n_x0"]``) only for the accountants that need it; ``facts(name)``
    -> (kind, needs n_x0) defaults to the registry's class attributes.
    """
    facts = facts or _registry_facts
    delta, k = float(section["delta"]), int(section["k"])
    rule = section["n_x0"]
    points = _settings(section)
    records = []
    done = {}  # the point both panels hold (eps0 of panel a at n of panel b) is computed once
    bar = progress(total=len(section["accountants"]) * len(points), desc="epsilon comparison")
    for name in section["accountants"]:
        kind, needs_n_x0 = facts(name)
        for panel, n_users, epsilon_local in points:
            n_x0 = n_x0_from_rule(rule, n_users) if needs_n_x0 else None
            options = {"n_x0": n_x0} if needs_n_x0 else {}
            key = (name, n_users, epsilon_local, n_x0)
            if key not in done:
                try:
                    accountant = factory(name, epsilon_local=epsilon_local, n_users=n_users, k=k, **options)
                except ValueError as error:
                    done[key] = math.nan, ERROR, str(error)
                else:
                    done[key] = epsilon_at_delta(accountant, delta=delta, epsilon_local=epsilon_local)
            epsilon, status, note = done[key]
            bar.update()
            records.append(
                {
                    "panel": panel,
                    "accountant": name,
                    "kind": kind,
                    "role": role_of(kind, needs_n_x0),
                    "label": ACCOUNTANT_LABELS.get(name, name),
                    "n_users": n_users,
                    "k": k,
                    "epsilon_local": epsilon_local,
                    "n_x0": n_x0 if n_x0 is not None else pd.NA,
                    "n_x0_rule": _rule_text(rule) if needs_n_x0 else "",
                    "delta": delta,
                    "epsilon": epsilon,
                    "status": status,
                    "note": note,
                }
            )
    bar.close()
    frame = pd.DataFrame(records, columns=COMPARISON_COLUMNS)
    frame["n_x0"] = frame["n_x0"].astype("Int64")
    return frame


def check_worst_case_config(section: Mapping, *, available: Sequence[str] | None = None) -> None:
    """Cross-key checks of ``accounting.epsilon_comparison`` and ``accounting.bracket`` (given as
    ``section``, the whole ``accounting`` mapping) that a JSON schema cannot state.

    Raises :class:`shuffledp.config.ConfigError` naming the key, the accepted values and the value.
    """
    from shuffledp.config import ConfigError

    names = set(list_accountants() if available is None else available)
    comparison = section["epsilon_comparison"]
    for value in comparison["accountants"]:
        if value not in names:
            raise ConfigError(
                "config: `accounting.epsilon_comparison.accountants` must name registered accountants "
                f"({', '.join(sorted(names))}); got {value!r}."
            )
    rule = comparison["n_x0"]
    if rule["rule"] == "fraction" and rule["value"] > 1:
        raise ConfigError(
            f"config: `accounting.epsilon_comparison.n_x0.value` must be in [0, 1] for rule 'fraction'; got {rule['value']!r}."
        )
    if rule["rule"] == "fixed":
        smallest = min(n for _, n, _ in _settings(comparison))
        if float(rule["value"]) != int(rule["value"]) or rule["value"] > smallest - 1:
            raise ConfigError(
                "config: `accounting.epsilon_comparison.n_x0.value` must be an integer in "
                f"[0, {smallest - 1}] (n - 1 for the smallest n = {smallest}); got {rule['value']!r}. "
                "Use rule 'fraction' when n varies."
            )


# --------------------------------------------------------------------------------------- bracket


#: both bracket ends within this relative distance of eps0: hardly any amplification to bracket
_NEAR_EPSILON_LOCAL = 0.01


def _bracket_status(row: Mapping, epsilon_local: float) -> str:
    at_eps0 = epsilon_local * (1.0 - _AT_EPSILON_LOCAL)
    if row["eps_lower"] >= at_eps0:
        return "both at eps0: no amplification at this delta, the ratio 1 says nothing about tightness"
    if row["eps_lower"] >= epsilon_local * (1.0 - _NEAR_EPSILON_LOCAL):
        return "both within 1% of eps0: almost no amplification, a ratio near 1 says little about tightness"
    if row["eps_upper"] >= at_eps0:
        return "upper at eps0: the guarantee gives no amplification at this delta"
    if row["eps_lower"] == 0.0:
        return "lower bound is 0"
    return OK


def bracket_points(section: Mapping) -> list[tuple[int, int, float]]:
    """The (n, k, eps0) settings of ``accounting.bracket`` in the frame's order: the product of the lists,
    then the single settings ``extra`` not already in it."""
    grid = list(itertools.product(section["n_users"], section["k"], section["epsilon_local"]))
    # single settings beyond the product (the large-eps0 ends where the blanket holds a few
    # hundred to thousands of users, e.g. n = 1e14 at eps0 = 25)
    grid += [
        (point["n_users"], point["k"], point["epsilon_local"])
        for point in section.get("extra", [])
        if (point["n_users"], point["k"], point["epsilon_local"]) not in grid
    ]
    return [(int(n_users), int(k), float(epsilon_local)) for n_users, k, epsilon_local in grid]


def bracket_shards(section: Mapping) -> int:
    """How many jobs share the bracket (``shards``, default 1); which settings each computes:
    :func:`bracket_assignment`."""
    return int(section.get("shards", 1))


#: the cost model's CPU seconds per delta: every setting (the lower end, the weak adversary's upper end)
_BASE_COST = 0.05


def _lower_cost(n_users: int, k: int) -> float:
    """CPU s per delta of the lower end beyond the base: the exact k = 3 worst case (n <= 200) grows with n."""
    return 0.002 * n_users**1.25 if k == 3 and n_users <= 200 else 0.0


def _upper_cost(n_users: int, k: int, epsilon_local: float, upper: str) -> float:
    """CPU s per delta of the upper end's search over datasets beyond the base, by the search its regime runs
    (none for another upper accountant or where no search runs): fitted to the default grid's measurements."""
    if upper != "worst-case-upper":
        return 0.0
    regime = regime_for(ShuffleSetting(epsilon_local=epsilon_local, n_users=n_users, k=k))
    search = regime.search if regime is not None else None
    if search is K4BlocksOnly:  # k = 4, n 33 .. 50: three-axis views of (n + 1)^3 cells, dearer at small eps0
        return 16.0 * (n_users / 50.0) ** 3 * min(1.0, epsilon_local**-3.0)
    if search in (K4BlocksAndOwnHits, OwnHitsOnly):
        if k == 4:
            return 0.15 * (n_users / 20.0) ** 2
        # k >= 5: the block search stops on its budgets at small eps0 (open nodes with several outside values)
        return 5.0 * (n_users / 20.0) ** 4 * (epsilon_local / 0.5) ** -1.5
    if search is K3ExactSearch:
        return 0.002 * n_users**1.25
    if search is K2BlockSearch:
        return 0.6 * n_users / 10_000
    return 0.45 if search is K2PairSearch else 0.5 if search is K3WindowedSearch else 0.0


def bracket_cost(n_users: int, k: int, epsilon_local: float, deltas: Sequence[float], upper: str) -> float:
    """Estimated CPU seconds of one bracket setting (both ends at every delta): the cost model the shards are
    balanced by, fitted to the default grid's measured per-setting CPU (docs/decisions/workflow.md, "Run
    time"). Only the shards' balance depends on it, never a value.

    Args:
        n_users: number of users n.
        k: domain size.
        epsilon_local: k-RR's eps0.
        deltas: the target deltas (the cost is per delta).
        upper: registry name of the upper end.

    Returns:
        The estimate, > 0.
    """
    return len(deltas) * (
        _BASE_COST + _lower_cost(n_users, k) + _upper_cost(n_users, k, epsilon_local, upper)
    )


def bracket_assignment(section: Mapping) -> list[int]:
    """The shard of every setting of :func:`bracket_points` (same order): longest processing time first on
    :func:`bracket_cost` -- settings by decreasing estimate (ties: grid order), each to the shard with the
    least estimated total so far (ties: the lowest shard). Deterministic: every job computes the same
    assignment from the section alone.

    Args:
        section: ``accounting.bracket``.

    Returns:
        One shard index in 0 .. :func:`bracket_shards` - 1 per setting.
    """
    points = bracket_points(section)
    shards = bracket_shards(section)
    deltas = [float(d) for d in section["delta"]]
    upper = str(section.get("upper") or "worst-case-upper")
    costs = [bracket_cost(n, k, e0, deltas, upper) for n, k, e0 in points]
    loads = [0.0] * shards
    assignment = [0] * len(points)
    for index in sorted(range(len(points)), key=lambda i: (-costs[i], i)):
        shard = min(range(shards), key=lambda s: (loads[s], s))
        assignment[index] = shard
        loads[shard] += costs[index]
    return assignment


def bracket_frame(
    section: Mapping,
    *,
    bracket_function: Callable[..., list] | None = None,
    shard: int = 0,
    on_setting: Callable[[tuple[int, int, float], float], None] | None = None,
) -> pd.DataFrame:
    """Frame (:data:`BRACKET_COLUMNS`) of the worst-case bracket over the grid of ``accounting.bracket``.

    One row per (n, k, eps0, delta) of the product of the lists, then of the single settings ``extra``:
    ``eps_lower`` (``worst-case-lower``, errs downwards), ``eps_upper``
    (the section's ``upper`` accountant, default ``worst-case-upper``; errs upwards, always meets delta),
    ``ratio`` = upper / lower and a ``status``
    that flags rows where the ratio is trivially 1 (both at eps0, or both within 1% of it) or undefined
    (lower bound 0).

    Args:
        section: ``accounting.bracket``.
        bracket_function: defaults to :func:`shuffledp.accounting.bracket.bracket`.
        shard: which of the :func:`bracket_shards` shares of the settings to compute
            (:func:`bracket_assignment`; 0 with one shard: all); :func:`bracket_combine` puts the shards'
            frames back in order.
        on_setting: called after each setting with its (n, k, eps0) and the CPU seconds it took (e.g. to log
            them beside :func:`bracket_cost`'s estimate).

    Returns:
        The frame of the shard's settings, in their order.

    Raises:
        ValueError: ``shard`` outside 0 .. shards - 1, or an accountant refuses a setting.
    """
    if bracket_function is None:
        from shuffledp.accounting.bracket import bracket

        bracket_function = bracket
    shards = bracket_shards(section)
    if not 0 <= int(shard) < shards:
        raise ValueError(
            f"`shard` must be in 0..{shards - 1} (accounting.bracket.shards = {shards}); got {shard!r}."
        )
    deltas = [float(d) for d in section["delta"]]
    grid = [
        point for point, s in zip(bracket_points(section), bracket_assignment(section)) if s == int(shard)
    ]
    records = []
    bar = progress(total=len(grid), desc="worst-case bracket")
    for n_users, k, epsilon_local in grid:
        options = {"upper": section["upper"]} if section.get("upper") else {}
        started = time.process_time()
        rows = bracket_function(
            epsilon_local=float(epsilon_local), n_users=int(n_users), k=int(k), deltas=deltas, **options
        )
        if on_setting is not None:
            on_setting((int(n_users), int(k), float(epsilon_local)), time.process_time() - started)
        bar.update()
        for row in rows:
            records.append(
                {
                    "n_users": int(n_users),
                    "k": int(k),
                    "epsilon_local": float(epsilon_local),
                    "delta": float(row["delta"]),
                    "eps_lower": float(row["eps_lower"]),
                    "eps_upper": float(row["eps_upper"]),
                    "ratio": float(row["ratio"]),
                    "status": _bracket_status(row, float(epsilon_local)),
                    "lower": row["lower"],
                    "upper": row["upper"],
                }
            )
    bar.close()
    return pd.DataFrame(records, columns=BRACKET_COLUMNS)


def bracket_combine(section: Mapping, frames) -> pd.DataFrame:
    """The shards' frames (:func:`bracket_frame` of every shard, any order) as one frame in
    :func:`bracket_points` order, each setting's rows in their own order.

    Args:
        section: ``accounting.bracket``.
        frames: one frame per shard.

    Returns:
        The whole bracket frame, as :func:`bracket_frame` computes it with one shard.

    Raises:
        ValueError: the frames do not hold every setting exactly once.
    """
    order = {point: index for index, point in enumerate(bracket_points(section))}
    frame = pd.concat(list(frames), ignore_index=True)
    keys = list(
        zip(frame["n_users"].astype(int), frame["k"].astype(int), frame["epsilon_local"].astype(float))
    )
    found = set(keys)
    if found != set(order) or len(keys) != len(order) * len(section["delta"]):
        raise ValueError(
            f"`frames` must hold every bracket setting once ({len(order)} settings x {len(section['delta'])} "
            f"delta); got {len(found)} settings, {len(keys)} rows."
        )
    position = np.array([order[key] for key in keys])
    frame = frame.iloc[np.argsort(position, kind="stable")].reset_index(drop=True)
    return frame[list(BRACKET_COLUMNS)]


def bracket_markdown(frame: pd.DataFrame) -> str:
    """The bracket table as Markdown: epsilon to 5 significant digits, ratio to 5 decimals (widths of
    1e-5 are common, so the ratio is not rounded to the 4 digits of the other tables)."""
    upper = frame["upper"].iloc[0] if len(frame) else "worst-case-upper"
    header = (
        "Worst-case epsilon of shuffled k-RR at fixed delta: lower bound (`worst-case-lower`, errs downwards) "
        f"and valid upper bound (`{upper}`, errs upwards); the true worst case lies between them."
    )
    columns = ["n", "k", "eps0", "delta", "eps lower", "eps upper", "ratio", "status"]
    lines = [header, "", "| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    for row in frame.itertuples(index=False):
        ratio = "inf" if math.isinf(row.ratio) else f"{row.ratio:.5f}"
        cells = [
            f"{row.n_users:,}",
            str(row.k),
            f"{row.epsilon_local:g}",
            f"{row.delta:g}",
            f"{row.eps_lower:.5g}",
            f"{row.eps_upper:.5g}",
            ratio,
            row.status,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
