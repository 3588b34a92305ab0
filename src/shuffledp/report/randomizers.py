"""Which randomizer to shuffle: the report's reading of ``randomizers.csv`` (every shuffled randomizer at an
eps0 its tightest valid upper bound certifies, beside the Gaussian and geometric curators; exact expected half
L1 errors, :mod:`shuffledp.experiments.randomizer_grid`).

Room: reads the tidy frame only; every count is recomputed here from its rows (the CSV of verdicts is not
read), so the sentence cannot drift from the numbers.
"""

from __future__ import annotations

import pandas as pd

from shuffledp.experiments.which_randomizer import first_best

__all__ = ["SETTING", "read_randomizers"]

#: the columns that name one setting (one target on one dataset of n users)
SETTING = ["dataset", "k", "n_users", "epsilon", "delta_rule"]
_CURATORS = ("gaussian", "geometric")
_NEEDED = (*SETTING, "randomizer", "epsilon_local", "accountant", "l1_half")


def _settings(frame: pd.DataFrame) -> list[dict]:
    """Per setting: the best shuffled randomizer, whether k-RR beats the Gaussian, who else does."""
    found = []
    for _, group in frame.groupby(SETTING, sort=True):
        gaussian = float(group.loc[group["randomizer"] == "gaussian", "l1_half"].iloc[0])
        shuffled = group[~group["randomizer"].isin(_CURATORS)]
        beating = set(shuffled.loc[shuffled["l1_half"] < gaussian, "randomizer"])
        krr = shuffled[shuffled["randomizer"] == "krr"]
        found.append(
            {
                "best": str(shuffled["randomizer"].iloc[first_best(shuffled["l1_half"].tolist())]),
                "krr_beats": "krr" in beating,
                "others_beating": sorted(beating - {"krr"}),
                "krr_epsilon_local": float(krr["epsilon_local"].iloc[0]) if not krr.empty else None,
                "other_epsilon_local": shuffled.loc[
                    shuffled["randomizer"] != "krr", "epsilon_local"
                ].tolist(),
            }
        )
    return found


def read_randomizers(frame: pd.DataFrame) -> str:
    """Which randomizer to shuffle, in three sentences: the best one to shuffle over the settings, how often
    shuffled k-RR and the others beat the Gaussian curator (and whether another ever does where k-RR does
    not), and the eps0 the others are certified at.

    Args:
        frame: the rows of ``randomizers.csv``.

    Returns:
        The reading.

    Raises:
        ValueError: a needed column is missing, or no setting has both a shuffled row and a Gaussian row.
    """
    missing = [column for column in _NEEDED if column not in frame.columns]
    if missing:
        raise ValueError(
            f"`randomizers data` must have columns {', '.join(_NEEDED)}; missing {', '.join(missing)}."
        )
    settings = _settings(frame)
    if not settings:
        raise ValueError("`randomizers data` must hold at least one setting; got none.")
    total = len(settings)
    best = pd.Series([s["best"] for s in settings]).value_counts()
    krr_beats = sum(s["krr_beats"] for s in settings)
    only_others = [s for s in settings if s["others_beating"] and not s["krr_beats"]]
    any_other = sum(bool(s["others_beating"]) for s in settings)
    ks = ", ".join(str(int(k)) for k in sorted(frame["k"].unique()))
    first = (
        f"Over {total} settings (k = {ks}), the randomizer to shuffle is "
        + ", ".join(f"{name} in {count}" for name, count in best.items())
        + " (smallest exact expected ½·L1, each at an ε0 its tightest valid upper bound certifies: the largest for"
        " k-RR, the crossing the search reaches for the others)"
    )
    second = (
        f"; shuffled k-RR beats the Gaussian curator in {krr_beats} of {total}, another shuffled randomizer "
        f"does in {any_other}, and where k-RR does not in {len(only_others)}"
        + (
            " ("
            + "; ".join(", ".join(s["others_beating"]) for s in only_others[:5])
            + (", ..." if len(only_others) > 5 else "")
            + ")."
            if only_others
            else "."
        )
    )
    ratios = [
        other / s["krr_epsilon_local"]
        for s in settings
        if s["krr_epsilon_local"]
        for other in s["other_epsilon_local"]
    ]
    others = frame[~frame["randomizer"].isin((*_CURATORS, "krr"))]
    accountants = others["accountant"].value_counts()
    third = (
        " The others are certified by "
        + ", ".join(f"{name} ({count} rows)" for name, count in accountants.items())
        + f" at an ε0 {min(ratios):.2f} to {max(ratios):.2f} times k-RR's."
        if ratios
        else ""
    )
    return first + second + third
