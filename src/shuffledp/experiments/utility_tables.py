"""Tables V and VI and the Sec. V-C.2 numbers: the paper's single printed draws beside our simulations.

The paper prints one draw per cell; we simulate many (:mod:`shuffledp.experiments.utility`). A
printed value is *reproduced* when it lies in our central 95% Monte-Carlo interval
(:func:`mc_interval_verdict`), and every such test carries its strength (:func:`interval_strength`:
how often a value 3x off would still pass), so a weak test is visible as weak.

Room: the library side of the utility stage's comparison rules (``table5``, ``table6``, the delta
floor of Figures 2, 6/7). Imports numpy, pandas, :mod:`shuffledp.tables` and (for the Gaussian's
tight delta) :mod:`shuffledp.mechanisms`; the replicate jobs import :func:`interval_strength`
from here, never the other way round.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = [
    "STRENGTH_FACTOR",
    "STRENGTH_COLUMNS",
    "interval_strength",
    "strength_text",
    "mc_interval_verdict",
    "individual_tables",
    "community_text_comparison",
    "FLOOR_COLUMNS",
    "floor_break_even",
    "merge_coincident_calibrations",
]

STRENGTH_FACTOR = 3.0
#: extra columns of the Monte-Carlo comparison rows (after shuffledp.tables.COMPARISON_COLUMNS)
STRENGTH_COLUMNS = ["interval_low", "interval_high", "p_pass_3x_larger", "p_pass_3x_smaller", "x0_count"]


def interval_strength(draws, low: float, high: float, *, factor: float = STRENGTH_FACTOR) -> dict:
    """How weak the single-draw test "value inside [low, high]" is, from our simulated single draws.

    ``p_pass_3x_larger`` is the probability that a value ``factor`` times one of our draws (a result
    off by that factor) still lies in [low, high], i.e. would still be called reproduced;
    ``p_pass_3x_smaller`` the same for a value ``factor`` times smaller. ``interval_ratio`` is
    high / low (inf when low = 0) and ``interval_decades`` its log10.
    """
    draws = np.asarray(draws, dtype=float)
    draws = draws[np.isfinite(draws)]
    larger, smaller = factor * draws, draws / factor
    ratio = high / low if low > 0 else math.inf
    return {
        "interval_ratio": float(ratio),
        "interval_decades": float(math.log10(ratio)) if math.isfinite(ratio) and ratio > 0 else math.inf,
        "p_pass_3x_larger": float(np.mean((larger >= low) & (larger <= high))) if draws.size else math.nan,
        "p_pass_3x_smaller": float(np.mean((smaller >= low) & (smaller <= high))) if draws.size else math.nan,
    }


def strength_text(low: float, high: float, p_larger: float, p_smaller: float) -> str:
    """The strength of a single-draw interval test in words, for comparison notes."""
    width = f"×{high / low:.3g} ({math.log10(high / low):.1f} decades)" if low > 0 else "from 0"
    return (
        f"the interval spans {width}; a value {STRENGTH_FACTOR:g}× ours would still pass with probability "
        f"{p_larger:.2f}, one {STRENGTH_FACTOR:g}× smaller with {p_smaller:.2f}"
    )


def _interval_test(paper_value: float, draws, *, coverage: float = 0.95) -> dict | None:
    draws = np.asarray(draws, dtype=float)
    draws = draws[np.isfinite(draws)]
    if draws.size < 2:
        return None
    tail = (1.0 - coverage) / 2.0
    low, high = (float(q) for q in np.quantile(draws, [tail, 1.0 - tail]))
    inside = bool(low <= paper_value <= high)
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    strength = interval_strength(draws, low, high)
    note = (
        f"paper value {'inside' if inside else 'outside'} our central {coverage:.0%} interval of a single draw "
        f"[{low:.3g}, {high:.3g}] (mean {draws.mean():.3g} +/- {se:.2g} MC s.e., {draws.size} draws); "
        + strength_text(low, high, strength["p_pass_3x_larger"], strength["p_pass_3x_smaller"])
    )
    return {
        "inside": inside,
        "note": note,
        "interval_low": low,
        "interval_high": high,
        "p_pass_3x_larger": strength["p_pass_3x_larger"],
        "p_pass_3x_smaller": strength["p_pass_3x_smaller"],
    }


def mc_interval_verdict(paper_value: float, draws, *, coverage: float = 0.95) -> tuple[bool, str]:
    """Is a paper value (one Monte-Carlo draw) plausible under our simulated distribution of one draw?

    True when it lies inside the central ``coverage`` interval of ``draws``; the note gives the
    interval, our mean and its Monte-Carlo standard error, and how weak the test is: the interval's
    width and the probability that a value 3× ours (or 3× smaller) would still pass
    (:func:`interval_strength`).
    """
    test = _interval_test(paper_value, draws, coverage=coverage)
    if test is None:
        return False, "no simulated draws"
    return test["inside"], test["note"]


# --- configuration checks a JSON schema cannot state ------------------------------------------


def _verdict_row(table, block, row, column, paper, as_printed, exact, verdict, note) -> dict:
    from shuffledp.tables import parse_printed

    value = float(parse_printed(paper))
    relative = (as_printed - value) / value if (value and np.isfinite(as_printed)) else np.nan
    return {
        "table": table,
        "block": block,
        "row": row,
        "column": column,
        "paper": paper,
        "ours_as_printed": as_printed,
        "ours_exact": exact,
        "relative_difference": relative,
        "verdict": verdict,
        "note": note,
    }


def _strength_columns(summary, x0_count=None) -> dict:
    """The :data:`STRENGTH_COLUMNS` of one interval test from a row of :func:`individual_job`."""
    return {
        "interval_low": float(summary["q025"]),
        "interval_high": float(summary["q975"]),
        "p_pass_3x_larger": float(summary.get("p_pass_3x_larger", math.nan)),
        "p_pass_3x_smaller": float(summary.get("p_pass_3x_smaller", math.nan)),
        "x0_count": x0_count,
    }


_EMPTY_CELL_NOTE = (
    "x0 holds no check-in under our cell numbering (the paper's is not stated), so there is no "
    "individual at x0: its true probability is 0 and the as-printed delta is that of a lone holder "
    "(n_x0 = 0)"
)


def _individual_comparison(
    table: str,
    block: str,
    row_label: str,
    paper_text: str,
    mechanism: str,
    summaries: pd.DataFrame,
    *,
    x0_count: int | None = None,
) -> dict:
    """Compare one printed single draw with our simulated distribution (see :func:`mc_interval_verdict`).

    The row carries :data:`STRENGTH_COLUMNS` (the interval and how often a value 3× off would still
    pass) when the verdict is an interval test; its note says so in words, and says when x0 is an
    empty cell.
    """
    from shuffledp.tables import NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED, parse_printed

    paper = float(parse_printed(paper_text))
    empty = "; " + _EMPTY_CELL_NOTE if x0_count == 0 else ""
    if mechanism == "gaussian":
        printed = summaries[summaries["calibration"] == "as_printed"].iloc[0]
        exact = summaries[summaries["calibration"] == "configured"].iloc[0]
        if printed["delta_floored"]:
            note = (
                f"not reproducible as specified: delta from eq. (6) as printed is {printed['delta']:.3g} at "
                f"eps = {printed['epsilon']:g}, eps0 = {printed['epsilon_local']:g}, so the Gaussian is undefined; "
                f"ours uses the delta floor {printed['delta_used']:.3g} (sigma {printed['sigma']:.3g}, "
                f"diffprivlib {printed['sigma_diffprivlib']:.3g}); with the configured accountant "
                f"{exact['accountant']} (delta {exact['delta']:.3g}, sigma {exact['sigma']:.3g}) the paper value is "
                f"{'inside' if exact['q025'] <= paper <= exact['q975'] else 'outside'} our 95% single-draw interval "
                f"[{exact['q025']:.3g}, {exact['q975']:.3g}]" + empty
            )
            row = _verdict_row(
                table,
                block,
                row_label,
                "Gaussian",
                paper_text,
                printed["mean"],
                exact["mean"],
                NOT_REPRODUCIBLE,
                note,
            )
            return {**row, **{c: math.nan for c in STRENGTH_COLUMNS}, "x0_count": x0_count}
        chosen = printed
    else:
        chosen = exact = summaries.iloc[0]
    inside = chosen["q025"] <= paper <= chosen["q975"]
    strength = _strength_columns(chosen, x0_count)
    note = (
        f"paper value {'inside' if inside else 'outside'} our central 95% interval of a single draw "
        f"[{chosen['q025']:.3g}, {chosen['q975']:.3g}] (mean {chosen['mean']:.3g} +/- {chosen['se']:.2g} MC s.e.)"
    )
    if math.isfinite(strength["p_pass_3x_larger"]):
        note += "; " + strength_text(
            strength["interval_low"],
            strength["interval_high"],
            strength["p_pass_3x_larger"],
            strength["p_pass_3x_smaller"],
        )
    column = "Gaussian" if mechanism == "gaussian" else "shuffle+INV"
    row = _verdict_row(
        table,
        block,
        row_label,
        column,
        paper_text,
        chosen["mean"],
        exact["mean"],
        REPRODUCED if inside else NOT_REPRODUCED,
        note + empty,
    )
    return {**row, **strength}


def individual_tables(
    individual: pd.DataFrame, reference: pd.DataFrame, *, table: str, block_of
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Tables V/VI: (wide table: paper and ours per row, comparison rows in COMPARISON_COLUMNS followed
    by :data:`STRENGTH_COLUMNS`).

    ``block_of(row)`` maps one row of ``individual`` to the paper's block label (e.g. "n=1,000").
    The wide table has the Gaussian's error under each calibration present (printed, configured, and
    "lower" when the rows have it), flags a floored delta per calibration ("delta floored (printed)",
    "delta floored (configured)", "delta floored (lower)") and its "x0 note" says when x0 is a cell
    without any check-in.
    """
    individual = individual.assign(block=[block_of(r) for _, r in individual.iterrows()])
    comparisons, wide = [], []
    for (block, x0), group in individual.groupby(["block", "x0"], sort=False):
        row_label = f"x0={x0}"
        x0_count = int(group["x0_count"].iloc[0])
        entry = {"block": block, "x0": x0, "x0_count": x0_count}
        for mechanism, column in (("gaussian", "Gaussian"), ("shuffle+INV", "shuffle+INV")):
            summaries = group[group["mechanism"] == mechanism]
            match = reference[
                (reference["block"] == block)
                & (reference["row"] == row_label)
                & (reference["column"] == column)
            ]
            paper_text = match["value"].iloc[0] if len(match) else ""
            entry[f"{column} paper"] = paper_text
            if mechanism == "gaussian":
                printed = summaries[summaries["calibration"] == "as_printed"].iloc[0]
                exact = summaries[summaries["calibration"] == "configured"].iloc[0]
                entry[f"{column} ours (printed delta)"] = printed["mean"]
                entry[f"{column} ours (configured delta)"] = exact["mean"]
                entry["delta printed"] = printed["delta"]
                entry["delta configured"] = exact["delta"]
                entry["delta floored (printed)"] = bool(printed["delta_floored"])
                entry["delta floored (configured)"] = bool(exact["delta_floored"])
                entry["sigma used (configured)"] = exact["sigma"]
                entry["sigma diffprivlib (configured)"] = exact["sigma_diffprivlib"]
                lower = summaries[summaries["calibration"] == "lower"]
                if len(lower):  # the lower bound's delta-hat: a verdict the same under both is certain
                    first_lower = lower.iloc[0]
                    entry[f"{column} ours (lower delta)"] = first_lower["mean"]
                    entry["delta lower"] = first_lower["delta"]
                    entry["delta floored (lower)"] = bool(first_lower["delta_floored"])
            else:
                entry[f"{column} ours"] = summaries["mean"].iloc[0]
            if paper_text:
                comparisons.append(
                    _individual_comparison(
                        table, block, row_label, paper_text, mechanism, summaries, x0_count=x0_count
                    )
                )
        entry["x0 note"] = "no check-in in this cell: no individual at x0" if x0_count == 0 else ""
        wide.append(entry)
    from shuffledp.tables import COMPARISON_COLUMNS

    return pd.DataFrame(wide), pd.DataFrame(comparisons, columns=[*COMPARISON_COLUMNS, *STRENGTH_COLUMNS])


def community_text_comparison(community: pd.DataFrame, text_numbers: pd.DataFrame) -> pd.DataFrame:
    """The community-level TV numbers quoted in Sec. V-C.2 against our single-draw distributions."""
    from shuffledp.tables import COMPARISON_COLUMNS, NOT_REPRODUCED, NOT_REPRODUCIBLE, REPRODUCED

    rows = []
    for _, quote in text_numbers[text_numbers["name"].str.startswith("community_tv_")].iterrows():
        name = quote["name"]
        mechanism = "gaussian" if "gaussian" in name else "shuffle+INV"
        n_users = int(name.rsplit("_n", 1)[1])
        data = community[(community["n_users"] == n_users) & (community["mechanism"] == mechanism)]
        if data.empty:
            continue
        printed = data[data["calibration"] == "as_printed"]
        exact = data[data["calibration"] == "configured"]
        paper = float(quote["value"])
        strength = {c: math.nan for c in STRENGTH_COLUMNS}
        test = _interval_test(paper, printed["l1_half"])
        if mechanism == "gaussian" and bool(printed["delta_floored"].iloc[0]):
            verdict, note = (
                NOT_REPRODUCIBLE,
                (
                    f"delta-hat from eq. (6) as printed is {printed['delta'].iloc[0]:.3g}: Gaussian undefined; "
                    f"ours uses the delta floor {printed['delta_used'].iloc[0]:.3g}"
                ),
            )
        elif test is None:
            verdict, note = NOT_REPRODUCED, "no simulated draws"
        else:
            verdict, note = (REPRODUCED if test["inside"] else NOT_REPRODUCED), test["note"]
            strength.update(
                {
                    c: test[c]
                    for c in ("interval_low", "interval_high", "p_pass_3x_larger", "p_pass_3x_smaller")
                }
            )
        rows.append(
            {
                **_verdict_row(
                    "text",
                    "Sec. V-C.2",
                    f"n={n_users:,}",
                    f"TV {mechanism}",
                    quote["value"],
                    printed["l1_half"].mean(),
                    exact["l1_half"].mean(),
                    verdict,
                    note,
                ),
                **strength,
            }
        )
    return pd.DataFrame(rows, columns=[*COMPARISON_COLUMNS, *STRENGTH_COLUMNS])


#: columns of :func:`floor_break_even`
FLOOR_COLUMNS = [
    "region",
    "n_users",
    "epsilon",
    "epsilon_local",
    "k",
    "calibration",
    "accountant",
    "delta_hat",
    "delta_floor",
    "delta_floored",
    "sigma",
    "l1_half_gaussian_mean",
    "l1_half_gaussian_expected",
    "l1_half_shuffle_inv_mean",
    "l1_half_shuffle_inv_se",
    "draws",
    "sigma_break_even",
    "log10_delta_break_even",
    "winner_at_delta_used",
]


def floor_break_even(frame: pd.DataFrame, *, k: int, sensitivity: float) -> pd.DataFrame:
    """The delta at which the paper's Gaussian ("the noisy histogram itself", no projection) would
    match shuffle+INV, per setting and calibration of a community-TV frame (Figure 2, Figures 6/7).

    Where delta-hat = 0 (eps >= eps0 under a valid bound) no finite sigma gives (eps, 0)-DP, and the
    Gaussian baseline is calibrated at an arbitrary floor; this says how much that choice decides.
    The unprojected Gaussian's expected TV is exactly k * sigma * sqrt(2 / pi) / (2 n) (half the sum
    of k independent |N(0, sigma^2)| / n), so it equals shuffle+INV's mean TV T at
    sigma* = 2 n T / (k sqrt(2 / pi)), and the Gaussian wins in expectation exactly when it is granted
    a delta above delta* = delta_Gauss(eps; sigma*) (Balle & Wang's tight delta, in log space:
    ``log10_delta_break_even`` stays finite far below the smallest double).

    ``frame``: rows with ``mechanism`` in {"gaussian", "shuffle+INV"}, ``l1_half``, ``n_users``,
    ``epsilon``, ``epsilon_local``, the calibration columns of
    :class:`shuffledp.experiments.utility.Calibration` and optionally ``calibration`` and ``region``.
    """
    from shuffledp.mechanisms import gaussian_log_delta

    frame = frame.copy()
    if "calibration" not in frame.columns:
        frame["calibration"] = "configured"
    if "region" not in frame.columns:
        frame["region"] = "synthetic"
    keys = ["region", "n_users", "epsilon", "epsilon_local", "calibration"]
    rows = []
    for (region, n_users, epsilon, epsilon_local, calibration), group in frame.groupby(keys, sort=False):
        gaussian = group[group["mechanism"] == "gaussian"]
        shuffle = group[group["mechanism"] == "shuffle+INV"]["l1_half"].to_numpy(dtype=float)
        if gaussian.empty or shuffle.size == 0:
            continue
        first = gaussian.iloc[0]
        mean = float(shuffle.mean())
        sigma_star = 2.0 * n_users * mean / (k * math.sqrt(2.0 / math.pi))
        log_delta = float(gaussian_log_delta(sigma_star, epsilon=float(epsilon), sensitivity=sensitivity))
        expected = k * float(first["sigma"]) * math.sqrt(2.0 / math.pi) / (2.0 * n_users)
        rows.append(
            {
                "region": region,
                "n_users": int(n_users),
                "epsilon": float(epsilon),
                "epsilon_local": float(epsilon_local),
                "k": int(k),
                "calibration": calibration,
                "accountant": first.get("accountant", ""),
                "delta_hat": float(first["delta"]),
                "delta_floor": float(first["delta_used"]) if bool(first["delta_floored"]) else math.nan,
                "delta_floored": bool(first["delta_floored"]),
                "sigma": float(first["sigma"]),
                "l1_half_gaussian_mean": float(gaussian["l1_half"].mean()),
                "l1_half_gaussian_expected": expected,
                "l1_half_shuffle_inv_mean": mean,
                "l1_half_shuffle_inv_se": float(shuffle.std(ddof=1) / math.sqrt(shuffle.size))
                if shuffle.size > 1
                else math.nan,
                "draws": int(shuffle.size),
                "sigma_break_even": sigma_star,
                "log10_delta_break_even": log_delta / math.log(10.0),
                "winner_at_delta_used": "gaussian" if expected < mean else "shuffle+INV",
            }
        )
    return pd.DataFrame(rows, columns=FLOOR_COLUMNS)


#: which calibration of a coincident group is kept (the others are named in ``coincides_with``)
_KEEP_ORDER = ("configured", "lower", "as_printed")


def _sigma_signature(rows: pd.DataFrame, point_keys: list[str]) -> tuple:
    """The calibration's sigma at every point of its setting (10 significant digits: equal sigma, the same
    Gaussian; a sigma that differs in the 11th digit would be the same Gaussian too)."""
    points = rows[[*point_keys, "sigma"]].drop_duplicates()
    return tuple(
        sorted(
            (*(float(v) for v in point[:-1]), float(f"{float(point[-1]):.10g}"))
            for point in points.itertuples(index=False)
        )
    )


def merge_coincident_calibrations(frame: pd.DataFrame) -> pd.DataFrame:
    """One calibration per group of calibrations that coincide, found from the data.

    Calibrations of the Gaussian (column ``calibration``) coincide in a setting (region, epsilon,
    epsilon_local) when their sigma is the same at every n (and run): the Gaussian is then the same
    mechanism under each, and their rows differ only by Monte-Carlo noise (Figure 2's draws) or not at
    all (the Gowalla draws share one random stream per run). Counting each would count one experiment
    two or three times.

    Args:
        frame: rows with ``calibration`` and ``sigma`` (and any of ``region``, ``epsilon``,
            ``epsilon_local``, ``n_users``, ``n``, ``run``); without both columns, or with one
            calibration, it is returned unchanged.

    Returns:
        The rows of one calibration per coincident group (the first of configured, lower, as_printed
        present; else the first listed), with ``coincides_with``: the other calibrations of its group
        joined by ", " ("" where it stands alone).
    """
    if not {"calibration", "sigma"} <= set(frame.columns) or frame["calibration"].nunique() < 2:
        return frame
    setting_keys = [c for c in ("region", "epsilon", "epsilon_local") if c in frame.columns]
    point_keys = [c for c in ("n_users", "n", "run") if c in frame.columns]
    settings = frame.groupby(setting_keys, sort=False) if setting_keys else [((), frame)]
    kept = []
    for _, rows in settings:
        listed = list(dict.fromkeys(rows["calibration"]))
        order = [c for c in _KEEP_ORDER if c in listed] + [c for c in listed if c not in _KEEP_ORDER]
        groups: dict[tuple, list[str]] = {}
        for calibration in order:
            signature = _sigma_signature(rows[rows["calibration"] == calibration], point_keys)
            groups.setdefault(signature, []).append(calibration)
        for group in groups.values():
            chosen = rows[rows["calibration"] == group[0]]
            kept.append(chosen.assign(coincides_with=", ".join(group[1:])))
    return pd.concat(kept).sort_index(kind="stable")
