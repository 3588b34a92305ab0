"""Judging what goes beyond the paper's own figures: the Gaussian under three calibrations, what the
delta floor decides, which mechanism wins at an equal guarantee, and Koskela et al.'s curves.

Room: like :mod:`shuffledp.report.readings`, functions ``read_<kind>(frame) -> str`` on the stage
CSVs; each computes what it states (counts, ranges, ratios) from the frame and says which way a
verdict is certain. Imports read helpers only.
"""

from __future__ import annotations

import math

import pandas as pd

from shuffledp.experiments.utility_tables import merge_coincident_calibrations
from shuffledp.report.read import format_cell
from shuffledp.report.verdicts import is_guarantee

#: words for the Gaussian's calibrations (shuffledp.experiments.utility.CALIBRATIONS)
_CALIBRATION_WORDS = {
    "configured": "the tight upper bound",
    "lower": "the lower bound",
    "as_printed": "eq. (6) as printed",
}


def _mean_se(series: pd.Series) -> tuple[float, float]:
    values = series.dropna().to_numpy(dtype=float)
    if values.size == 0:
        return math.nan, math.nan
    return float(values.mean()), float(
        values.std(ddof=1) / math.sqrt(values.size)
    ) if values.size > 1 else math.inf


def read_three_calibrations(frame: pd.DataFrame) -> str:
    """Who wins, shuffle+INV or the Gaussian, under each calibration of the Gaussian, and where the
    verdict is certain: the same winner under the tight upper bound ("configured") and under the
    lower bound ("lower"), with means more than 2 Monte-Carlo standard errors apart under both.

    ``frame``: community rows (``mechanism``, ``l1_half``, ``calibration``, ``accountant``, ``n_users``,
    ``epsilon``, ``epsilon_local``, optionally ``region``), as in Figure 2 and Figures 6/7 data.
    """
    needed = ("mechanism", "l1_half", "calibration", "n_users", "epsilon", "epsilon_local")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(
            f"`three-calibration data` must have columns {', '.join(needed)}; missing {', '.join(missing)}."
        )
    frame = frame.assign(region=frame["region"] if "region" in frame.columns else "synthetic data")
    frame = merge_coincident_calibrations(frame)  # the same σ: one experiment, shown and counted once
    accountants = (
        frame.drop_duplicates("calibration").set_index("calibration").get("accountant", pd.Series(dtype=str))
    )
    sentences = []
    for (region, epsilon, epsilon_local), setting in frame.groupby(
        ["region", "epsilon", "epsilon_local"], sort=False
    ):
        n_values = sorted(setting["n_users"].unique())
        wins = {kind: 0 for kind in _CALIBRATION_WORDS if kind in set(setting["calibration"])}
        clear: dict[str, set] = {kind: set() for kind in wins}
        winner_at: dict[str, dict] = {kind: {} for kind in wins}
        for n_users in n_values:
            at_n = setting[setting["n_users"] == n_users]
            for kind in wins:
                rows = at_n[at_n["calibration"] == kind]
                gaussian = _mean_se(rows[rows["mechanism"] == "gaussian"]["l1_half"])
                inv = _mean_se(rows[rows["mechanism"] == "shuffle+INV"]["l1_half"])
                if not (math.isfinite(gaussian[0]) and math.isfinite(inv[0])):
                    continue
                winner = "shuffle+INV" if inv[0] < gaussian[0] else "Gaussian"
                winner_at[kind][n_users] = winner
                wins[kind] += winner == "shuffle+INV"
                if abs(inv[0] - gaussian[0]) > 2.0 * math.hypot(gaussian[1], inv[1]):
                    clear[kind].add(n_users)
        same = (
            setting.drop_duplicates("calibration").set_index("calibration")["coincides_with"]
            if "coincides_with" in setting.columns
            else pd.Series(dtype=str)
        )
        parts = [
            f"shuffle+INV has the lower mean ½L1 error at {wins[kind]} of {len(winner_at[kind])} n under "
            f"{_CALIBRATION_WORDS[kind]} (`{accountants.get(kind, kind)}`)"
            + (
                f", which coincides with {', '.join(f'`{c}`' for c in str(same[kind]).split(', '))} "
                "(the same σ at every n: one experiment, counted once)"
                if str(same.get(kind, "") or "")
                else ""
            )
            for kind in wins
        ]
        if "lower" not in wins and "lower" in str(same.get("configured", "")):
            wins["lower"], winner_at["lower"], clear["lower"] = (
                wins["configured"],
                winner_at["configured"],
                clear["configured"],
            )
        text = (
            f"{region}, ε = {epsilon:g}, ε0 = {epsilon_local:g} (n = {n_values[0]:,} … {n_values[-1]:,}): "
            + "; ".join(parts)
        )
        if "configured" in wins and "lower" in wins:
            certain = [
                n
                for n in n_values
                if n in winner_at["configured"]
                and n in winner_at["lower"]
                and winner_at["configured"][n] == winner_at["lower"][n]
                and n in clear["configured"]
                and n in clear["lower"]
            ]
            text += (
                f". The verdict is certain (same winner under both bounds, means more than 2 s.e. apart) at "
                f"{len(certain)} of {len(n_values)} n"
            )
            if "as_printed" in wins:
                flipped = [
                    n
                    for n in certain
                    if winner_at["as_printed"].get(n) not in (None, winner_at["configured"][n])
                ]
                text += (
                    f"; the paper's calibration gives the other winner at {len(flipped)} of them"
                    if flipped
                    else "; the paper's calibration agrees wherever the verdict is certain"
                )
        sentences.append(text + ".")
    return " ".join(sentences)


def read_delta_floor(frame: pd.DataFrame) -> str:
    """How much the delta floor decides: where delta-hat = 0 the Gaussian is calibrated at an arbitrary
    floor; ``log10_delta_break_even`` is the delta at which it would match shuffle+INV (the unprojected
    Gaussian wins in expectation for every delta above it). ``frame``: rows of
    :func:`shuffledp.experiments.utility_tables.floor_break_even`."""
    needed = ("calibration", "delta_floored", "log10_delta_break_even", "n_users", "epsilon", "epsilon_local")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(
            f"`delta-floor data` must have columns {', '.join(needed)}; missing {', '.join(missing)}."
        )
    rows = (
        frame[frame["calibration"] == "configured"] if (frame["calibration"] == "configured").any() else frame
    )
    floored = rows[rows["delta_floored"].astype(bool)]
    if floored.empty:
        return (
            "δ̂ of the configured accountant is positive in every setting here, so no floor is used and the "
            "floor decides nothing."
        )
    sentences = []
    for (region, epsilon, epsilon_local), group in floored.groupby(
        ["region", "epsilon", "epsilon_local"], sort=False
    ):
        group = group.sort_values("n_users")
        low, high = (
            group.loc[group["log10_delta_break_even"].idxmin()],
            group.loc[group["log10_delta_break_even"].idxmax()],
        )
        floor = float(group["delta_floor"].iloc[0])
        gaussian_wins = int((group["winner_at_delta_used"] == "gaussian").sum())
        sentences.append(
            f"{region}, ε = {epsilon:g}, ε0 = {epsilon_local:g}: δ̂ = 0 under `{group['accountant'].iloc[0]}` "
            f"at all {len(group)} n, so the Gaussian is calibrated at the floor δ = {format_cell(floor)}. "
            f"It would match shuffle+INV's mean ½L1 error at δ* = 10^{low['log10_delta_break_even']:.1f} "
            f"(n = {int(low['n_users']):,}) to 10^{high['log10_delta_break_even']:.1f} (n = {int(high['n_users']):,}) "
            f"and wins for every δ above δ*; at our floor it wins (in expectation, unprojected) at {gaussian_wins} "
            f"of {len(group)} n."
        )
    return " ".join(sentences) + (
        " Any floor is a choice, not a guarantee: no finite σ makes the Gaussian (ε, 0)-DP, while shuffled k-RR "
        "with ε0 = ε is (ε, 0)-DP."
    )


def _where_list(rows: pd.DataFrame, limit: int = 4) -> str:
    items = [
        f"{r.dataset} (k = {int(r.k)}), n = {int(r.n_users):,}, ε = {r.epsilon:g}, δ {r.delta_rule}"
        for r in rows.itertuples()
    ]
    return "; ".join(items[:limit]) + (f"; and {len(items) - limit} more" if len(items) > limit else "")


def read_equal_guarantee(frame: pd.DataFrame) -> str:
    """The answer to "for my n, k and target (ε, δ), which mechanism gives the better histogram, and by
    how much?" in three sentences, from the equal-guarantee ratio table (one row per dataset, n, ε, δ
    rule: shuffle+INV at the largest ε0 that the tight upper bound certifies, against the best central
    Gaussian at the same (ε, δ); ``certain``: the same winner under the lower bound's ε0 too, with
    Monte-Carlo intervals apart)."""
    needed = (
        "dataset",
        "k",
        "n_users",
        "epsilon",
        "delta_rule",
        "ratio",
        "certain",
        "winner_upper",
        "best_gaussian",
        "epsilon_local_upper",
        "epsilon_local_lower",
    )
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(
            f"`equal-guarantee data` must have columns {', '.join(needed)}; missing {', '.join(missing)}."
        )
    total = len(frame)
    certain = frame["certain"].astype(bool)
    central = frame["winner_upper"] == "central"
    shuffle = frame["winner_upper"] == "shuffle"
    best = frame["best_gaussian"].value_counts()
    first = (
        f"Over {total} settings (k = {', '.join(str(int(k)) for k in sorted(frame['k'].unique()))}; "
        f"n = {int(frame['n_users'].min()):,} to {int(frame['n_users'].max()):,}; ε = {frame['epsilon'].min():g} to "
        f"{frame['epsilon'].max():g}; δ rules {', '.join(sorted(frame['delta_rule'].unique()))}), the central Gaussian "
        f"(best variant: {', '.join(f'`{name}` in {count}' for name, count in best.items())}) gives the lower ½L1 error in "
        f"{int(central.sum())} and shuffle+INV at the largest ε0 certified by the tight upper bound in "
        f"{int(shuffle.sum())}"
        + (f" ({_where_list(frame[shuffle])})" if shuffle.any() else "")
        + (
            f", and neither is ahead beyond Monte-Carlo error in {total - int(central.sum()) - int(shuffle.sum())}"
            if total > int(central.sum()) + int(shuffle.sum())
            else ""
        )
        + f"; {int(certain.sum())} of {total} verdicts are certain (same winner at the lower bound's ε0, "
        "Monte-Carlo intervals apart)."
    )
    largest, smallest = frame["n_users"].max(), frame["n_users"].min()
    parts = []
    for n_users in (smallest, largest):
        at_n = frame[frame["n_users"] == n_users]
        low_eps, high_eps = at_n[at_n["epsilon"] <= 1.0], at_n[at_n["epsilon"] > 1.0]
        text = f"at n = {int(n_users):,} the ½L1 ratio shuffle+INV / Gaussian is "
        spans = []
        for label, rows in (("ε ≤ 1", low_eps), ("ε > 1", high_eps)):
            if len(rows):
                spans.append(f"{rows['ratio'].min():.2f} to {rows['ratio'].max():.2f} for {label}")
        parts.append(text + " and ".join(spans))
    second = "The price of not trusting a curator depends on n and ε: " + "; ".join(parts) + "."
    gap = (frame["epsilon_local_upper"] - frame["epsilon_local_lower"]).abs()
    third = (
        f"The accountant hardly matters here: ε0 certified by the upper bound and the one allowed by the lower "
        f"bound differ by at most {gap.max():.2g} (median {gap.median():.1g})"
    )
    if "ratio_geometric" in frame.columns:
        beats = int((frame["ratio_geometric"] < 1).sum())
        third += (
            f", and shuffle+INV beats the pure-ε geometric mechanism (a stronger, (ε, 0) guarantee) in only "
            f"{beats} of {total} settings"
        )
    return " ".join([first, second, third + "."])


def read_koskela_verdicts(frame: pd.DataFrame) -> str:
    """One sentence per published curve family of Koskela et al.'s Figures 1-3: the verdict of each n_c
    (``reproduced`` when every compared point is within the tolerance), the largest difference, and
    the documented cause where it is not reproduced (rows of
    :func:`shuffledp.experiments.koskela.curve_verdicts`); also Fig. 4's table (rows of
    :func:`shuffledp.experiments.shuffled_gaussian.fig4_verdicts`, same columns), where nothing published
    can be compared and the note says what was checked instead."""
    needed = (
        "figure",
        "curve",
        "accountant",
        "compositions",
        "compared",
        "max_relative_difference",
        "tolerance",
        "verdict",
        "note",
    )
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(
            f"`Koskela verdict data` must have columns {', '.join(needed)}; missing {', '.join(missing)}."
        )
    sentences = []
    for (figure, curve), group in frame.groupby(["figure", "curve"], sort=False):
        reproduced = group[group["verdict"] == "reproduced"]
        label = ", ".join(f"n_c = {int(c)}" for c in group["compositions"] if str(c) not in ("", "nan"))
        largest = group["max_relative_difference"].astype(float)
        text = (
            f"Fig. {int(figure)}, {curve} (ours: `{group['accountant'].iloc[0]}`"
            + (f"; {label}" if label else "")
            + f"): {len(reproduced)} of {len(group)} reproduced"
            + (f", largest relative difference {largest.max():.2%}" if largest.notna().any() else "")
            + (
                f" (tolerance {float(group['tolerance'].iloc[0]):.0%})"
                if pd.notna(group["tolerance"].iloc[0])
                else ""
            )
        )
        failed = group[group["verdict"] != "reproduced"]
        if len(failed):
            causes = {str(c) for c in failed.get("known_cause", pd.Series(dtype=str)).fillna("") if str(c)}
            said = " / ".join(
                sorted({str(v) for v in failed["verdict"]})
            )  # e.g. "not reproducible as specified"
            text += f"; {said}" + (f": {'; '.join(sorted(causes))}" if causes else "")
        if (
            not pd.to_numeric(group["compared"], errors="coerce").fillna(0).any()
        ):  # nothing published to compare:
            text += f" ({'; '.join(str(n) for n in group['note'].fillna('') if str(n))})"  # what we checked instead
        sentences.append(text + ".")
    return " ".join(sentences)


def rounds_lines(frame: pd.DataFrame) -> pd.DataFrame:
    """The composed phase diagram (``phase_diagram_rounds.csv``) as one row per (k, q, n, ε) line with the
    winner on the average of T rounds (shuffle+INV or the Gaussian: the sign of ``log_ratio``) at the
    smallest and at the largest T computed, and both ratios."""
    if "skipped" in frame.columns:
        frame = frame[frame["skipped"].isna() | (frame["skipped"].astype(str) == "")]
    frame = frame.assign(log_ratio=pd.to_numeric(frame["log_ratio"], errors="coerce")).dropna(
        subset=["log_ratio"]
    )
    rows = []
    for (k, q, n_users, epsilon), group in frame.groupby(["k", "subsample", "n_users", "epsilon"], sort=True):
        group = group.sort_values("compositions")
        first, last = group.iloc[0], group.iloc[-1]
        rows.append(
            {
                "k": int(k),
                "subsample": float(q),
                "n_users": int(n_users),
                "epsilon": float(epsilon),
                "first_T": int(first["compositions"]),
                "last_T": int(last["compositions"]),
                "first": "shuffle" if first["log_ratio"] < 0 else "gaussian",
                "last": "shuffle" if last["log_ratio"] < 0 else "gaussian",
                "first_ratio": math.exp(first["log_ratio"]),
                "last_ratio": math.exp(last["log_ratio"]),
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "k",
            "subsample",
            "n_users",
            "epsilon",
            "first_T",
            "last_T",
            "first",
            "last",
            "first_ratio",
            "last_ratio",
        ],
    )


def read_rounds(frame: pd.DataFrame) -> str:
    """Facts from the composed phase diagram (:mod:`shuffledp.experiments.compare_rounds`): per k and q, the
    lines (n, ε) whose winner on the average of T rounds changes between the smallest and the largest T."""
    if not {"k", "subsample", "n_users", "epsilon", "compositions", "log_ratio"} <= set(frame.columns):
        raise ValueError(
            "`phase-diagram-over-rounds data` must have columns k, subsample, n_users, epsilon, "
            "compositions and log_ratio."
        )
    lines = rounds_lines(frame)
    if lines.empty:
        return "No point with both errors defined."
    sentences = []
    for (k, q), group in lines.groupby(["k", "subsample"], sort=True):
        moved = group[group["first"] != group["last"]]
        sentences.append(
            f"k = {int(k)}, q = {q:g}: from T = {int(group['first_T'].min())} to T = {int(group['last_T'].max())} "
            f"the winner changes on {len(moved)} of {len(group)} lines (n, ε)"
            + (
                "".join(
                    f"; n = {int(r.n_users):,}, ε = {r.epsilon:g}: {r.first} → {r.last} (½L1 ratio "
                    f"{r.first_ratio:.2f} → {r.last_ratio:.2f})"
                    for r in moved.itertuples()
                )
            )
            + "."
        )
    return " ".join(sentences)


def _phase_counts(group: pd.DataFrame, ratio: pd.Series, *, rule, k, name: str) -> str:
    """One panel's counts: the points where shuffle+INV has the lower expected half L1 error, those where
    neither is useful (column ``verdict`` = "neither": both errors at least 1 - 1/k, never counted as a win)
    and the ratio's range over the useful points."""
    useless = (group["verdict"] == "neither").reindex(ratio.index) if "verdict" in group.columns else None
    useful = ratio if useless is None else ratio[~useless.fillna(False).astype(bool)]
    text = (
        f"δ {rule}, k = {int(k)} (`{name}`): shuffle+INV has the lower expected ½L1 error at "
        f"{int((useful < 0).sum())} of {len(ratio)} points, the Gaussian at {int((useful > 0).sum())}"
    )
    if useless is not None:
        text += (
            f"; at {int(useless.sum())} neither is useful (both errors at least 1 − 1/k = {1 - 1 / int(k):.3g}, "
            "that of guessing the uniform distribution), counted as no one's win"
        )
    if useful.empty:
        return text + "."
    return text + f" (½L1 ratio where useful {math.exp(useful.min()):.2f} to {math.exp(useful.max()):.2f})."


def read_phase_diagram(frame: pd.DataFrame, *, uncertified_k=()) -> str:
    """Facts from the phase diagram (:mod:`shuffledp.experiments.phase_diagram`): from the grid
    (``phase_diagram.csv``), per δ rule and k, at how many points shuffle+INV has the lower exact expected
    half L1 error, the Gaussian has, and neither is useful (column ``verdict``), and the ratio's range, for the panels whose ε0 comes from an upper bound (column
    ``calibration`` or ``accountant``); a panel calibrated by anything else is named, not counted. From the
    boundary (``phase_diagram_boundary.csv``), the crossings, leaving out the k in ``uncertified_k``."""
    if {"log_ratio", "delta_rule", "k"} <= set(frame.columns):
        column = next((c for c in ("calibration", "accountant") if c in frame.columns), None)
        sentences = []
        for (rule, k), group in frame.groupby(["delta_rule", "k"], sort=False):
            name = str(group[column].iloc[0]) if column else "an accountant not named in the file"
            if not is_guarantee(name):
                sentences.append(
                    f"δ {rule}, k = {int(k)}: calibrated by `{name}`, not a guarantee, so no count."
                )
                continue
            ratio = pd.to_numeric(group["log_ratio"], errors="coerce").dropna()
            if ratio.empty:
                sentences.append(f"δ {rule}, k = {int(k)}: no point with both errors defined.")
                continue
            sentences.append(_phase_counts(group, ratio, rule=rule, k=k, name=name))
        return " ".join(sentences)
    if {"shuffle_wins_below", "delta_rule", "k", "epsilon", "n_users"} <= set(frame.columns):
        frame = frame[~frame["k"].isin(list(uncertified_k))]
        if frame.empty:
            return "No crossing in a panel calibrated by a guarantee."
        sentences = []
        for (rule, k), group in frame.groupby(["delta_rule", "k"], sort=False):
            below = group[group["shuffle_wins_below"].astype(bool)]
            sentences.append(
                f"δ {rule}, k = {int(k)}: {len(group)} crossing(s) over n = {int(group['n_users'].min()):,} to "
                f"{int(group['n_users'].max()):,}"
                + (
                    f"; shuffle+INV wins below ε = {below['epsilon'].min():.3g} to {below['epsilon'].max():.3g}"
                    if len(below)
                    else "; none with shuffle+INV winning below it"
                )
                + "."
            )
        return " ".join(sentences)
    raise ValueError(
        "`phase-diagram data` must have columns delta_rule, k and log_ratio (grid) or "
        "delta_rule, k, n_users, epsilon, shuffle_wins_below (boundary)."
    )
