"""The report's section on Balle, Bell, Gascon & Nissim's Figure 3: one verdict per
published curve against the authors' own code, the largest relative difference, the named cause of
every "not reproduced", and how far each analytic bound sits from its reference curve (tight only where
it is the k-RR worst case at k = 2; ``feldman-numerical`` and ``worst-case-upper`` at k ≥ 4 are upper
bounds that need not be tight).

Room: reads the verdict table of :func:`shuffledp.experiments.balle.panel_verdicts`
(``results/balle/balle_verdicts.csv``) and returns text; computes no privacy quantity itself.
"""

from __future__ import annotations

import math

import pandas as pd

from shuffledp.report.verdicts import is_tight_reference

__all__ = ["BALLE_VERDICT_COLUMNS", "read_balle_verdicts"]

#: columns the reading needs
BALLE_VERDICT_COLUMNS = (
    "panel",
    "curve",
    "code",
    "accountant",
    "points",
    "compared",
    "theirs_undefined",
    "max_relative_difference",
    "tolerance",
    "verdict",
    "known_cause",
    "reference",
    "looseness_min",
    "looseness_max",
)


#: how each version of their code is named in the text
_CODE = {"current": "current code", "2019": "2019 release (the code of the paper's figure)"}


def _curve_sentence(row) -> str:
    largest = float(row.max_relative_difference)
    text = (
        f"({row.panel}) {row.curve} against their {_CODE.get(str(row.code), str(row.code))} "
        f"(ours: `{row.accountant}`): {row.verdict}, {int(row.compared)} of "
        f"{int(row.points)} points compared"
        + (
            f" ({int(row.theirs_undefined)} where their code returns NaN, outside the bound's stated range)"
            if int(row.theirs_undefined)
            else ""
        )
        + (f", largest relative difference {largest:.1e}" if math.isfinite(largest) else "")
    )
    low, high = float(row.looseness_min), float(row.looseness_max)
    if str(row.reference) not in ("", "nan") and math.isfinite(low):
        kind = (
            "the worst case" if is_tight_reference(row.reference) else "an upper bound, not necessarily tight"
        )
        text += f'; looseness {low:.2f} to {high:.2f} against "{row.reference}" ({kind})'
    if row.verdict != "reproduced":
        cause = str(row.known_cause) if str(row.known_cause) not in ("", "nan") else "cause not established"
        text += f"; not reproduced: {cause}"
    return text + "."


def read_balle_verdicts(frame: pd.DataFrame) -> str:
    """The count of reproduced curves first, then one sentence per published curve of Balle et al.'s
    Figure 3: verdict, points compared, largest relative difference against their code, and the range of
    the factor between the bound and its reference curve (eps_bound / eps_reference in panel i,
    eps0_reference / eps0_bound in panels ii-iv), the reference named with whether it is tight."""
    missing = [c for c in BALLE_VERDICT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(
            f"`Balle verdict data` must have columns {', '.join(BALLE_VERDICT_COLUMNS)}; "
            f"missing {', '.join(missing)}."
        )
    if frame.empty:
        return "No curve of Balle et al.'s Figure 3 was judged in this run."
    tolerance = float(frame["tolerance"].iloc[0])
    counts = []
    for code, group in frame.groupby(frame["code"].astype(str), sort=False):
        reproduced = group["verdict"] == "reproduced"
        largest = pd.to_numeric(group["max_relative_difference"], errors="coerce")
        failed = ", ".join(
            f"({p}) {c}" for p, c in zip(group["panel"][~reproduced], group["curve"][~reproduced])
        )
        counts.append(
            f"{int(reproduced.sum())} of {len(group)} curves reproduced against their "
            f"{_CODE.get(code, code)} (largest relative difference {largest.max():.1e}"
            + (f"; not reproduced: {failed}" if failed else "")
            + ")"
        )
    first = (
        f"Balle et al.'s Figure 3, their code run at the same points (tolerance {tolerance:.0e} relative): "
        + "; ".join(counts)
        + "."
    )
    second = (
        "Per curve (looseness: ε of the bound over ε of the reference curve in panel (i), ε0 of the "
        "reference over ε0 of the bound in panels (ii)-(iv), at the reference's n; above 1 the reference is "
        "tighter, below 1 the bound beats a reference that is not its randomizer's worst case):"
    )
    return " ".join([first, second, *(_curve_sentence(row) for row in frame.itertuples(index=False))])
