"""Balle, Bell, Gascon & Nissim's Figure 3 (CRYPTO 2019, Sec. 6): four panels of privacy-blanket bounds,
beside the values of their own code, with a tight reference under each analytic curve.

* Panel (i) -- eps against n for generic eps0-LDP randomizers (eps0 = 0.5, delta = 1e-6): Erlingsson et
  al.'s closed form, the Hoeffding (Thm 5.3) and Bennett (Lemma 5.6) bounds.
* Panel (ii) -- the largest eps0 against n at (eps, delta) = (0.1, 1e-6), Hoeffding bounds for a
  generic randomizer, binary and 100-ary randomized response and the Laplace randomizer, and Erlingsson.
* Panel (iii) -- the same calibration, Hoeffding against Bennett for RR-2, RR-100 and Laplace.
* Panel (iv) -- the same with k = floor(n^(1/3)) and delta = 1/n^2 (RR, Hoeffding and Bennett).

Every value comes from the registry: eps from :meth:`Accountant.epsilon_for_delta`, eps0 from
:func:`shuffledp.accounting.calibrate.calibrate_epsilon_local` (the largest eps0 meeting the target,
searched on [eps, ``upper``] as their ``get_eps0`` searches [eps, 10]). "Theirs" are the values of their
code at the same points, written by ``tools/transcribe_balle.py`` (``shuffledp.reference``,
``balle_figures``). Reference curves (ours only, on every ``reference_every``-th n) show how far each
analytic bound is from tight: ``worst-case-upper`` (certified worst case of shuffled k-RR; exact-tight
for k = 2, the weak adversary's certified bound for k >= 4), ``worst-case-lower`` (a lower bound: for the
generic panel, binary RR is one eps0-LDP randomizer, so its worst case lower-bounds the generic one) and
``feldman-numerical`` (an upper bound valid for every eps0-LDP randomizer, Laplace included).

Also their Figure 2 (:func:`blanket_densities`: the Laplace randomizer's output densities split into the
blanket and the data-dependent parts) and the two claims of their Sec. 6 text that the corrected Bennett
code overturns (:func:`overturned_claims`, counted from the Figure 3 curves).

Room: the library side of ``workflow/rules/balle.smk``. Imports the accountants and :mod:`shuffledp.tables`
(verdict labels); nothing from plotting or report.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd

from shuffledp.accounting import accountant_class, get_accountant
from shuffledp.accounting.calibrate import calibrate_epsilon_local
from shuffledp.accounting.params import LaplaceBlanket
from shuffledp.tables import NOT_REPRODUCED, REPRODUCED

__all__ = [
    "PANELS",
    "CURVE_COLUMNS",
    "VERDICT_COLUMNS",
    "SHARED_COLUMNS",
    "KNOWN_DIFFERENCES",
    "n_grid",
    "curve_k",
    "curve_delta",
    "panel_frame",
    "panel_verdicts",
    "shared_reference_panels",
    "shared_references",
    "shared_values",
    "DENSITY_COLUMNS",
    "CLAIM_COLUMNS",
    "blanket_densities",
    "blanket_density_values",
    "overturned_claims",
]

PANELS = ("i", "ii", "iii", "iv")
#: k rule of panel (iv): k = int(n ** (1/3)) as their notebook computes it (cell In [26])
CUBE_ROOT = "floor(n^(1/3))"
#: delta rule of panel (iv): delta = 1 / n^2 (cell In [26])
INVERSE_SQUARE = "1/n^2"
#: documented causes of differences from their code ("panel/curve" -> sentence; evidence in
#: docs/decisions/balle.md); given when a curve is not reproduced
KNOWN_DIFFERENCES: dict[str, str] = {
    "2019/Bennett": (
        "their 2019 code (amplification_bounds.py @ 89a5085, BennettExact.get_delta, line 197 `eta = a / b_plus` and "
        "line 203, which divides each term of the expectation by m) computes the Bennett bound of Lemmas 5.3 and 5.6 "
        "divided by a M (a = e^eps - 1, M ~ Bin(n, gamma) the blanket count): delta too small, eps0 too large (eps too "
        "small); the authors fixed both lines in 7994ad3 ('Fixed typo in Bennett bounds', 2020-07-06), and ours "
        "reproduces the fixed code. Check run: the 2019 formula recomputed from our accountant's ingredients meets "
        "delta = 1e-6 at the 2019 curve's eps0 while the fixed one does not (checked by the test suite)"
    ),
}
KNOWN_DIFFERENCES["2019/iii/Bennett, RR-100"] = KNOWN_DIFFERENCES["2019/Bennett"] + (
    "; moreover the published curve is not a valid guarantee: at n = 1000 its eps0 = 2.0396 gives "
    "worst-case-lower delta(eps = 0.1) = 2.26e-6 > 1e-6 for explicit neighbouring datasets (same test file)"
)
#: columns of :func:`panel_frame`
CURVE_COLUMNS = [
    "panel",
    "curve",
    "role",
    "accountant",
    "kind",
    "n",
    "k",
    "epsilon",
    "epsilon_local",
    "delta",
    "value_name",
    "value",
    "seconds",
]
#: columns of :func:`shared_references` (the first eight identify a point: :func:`_point_key`)
SHARED_COLUMNS = [
    "accountant",
    "value_name",
    "n",
    "k",
    "target",
    "delta",
    "tolerance",
    "upper",
    "value",
    "seconds",
]
#: columns of :func:`blanket_densities`
DENSITY_COLUMNS = ["epsilon_local", "gamma", "component", "input", "y", "density"]
#: columns of :func:`overturned_claims`
CLAIM_COLUMNS = [
    "panel",
    "claim",
    "better",
    "worse",
    "value_name",
    "points",
    "claim_holds",
    "claim_fails",
    "verdict",
    "note",
]
#: columns of :func:`panel_verdicts`
VERDICT_COLUMNS = [
    "panel",
    "curve",
    "code",
    "accountant",
    "points",
    "compared",
    "theirs_undefined",
    "max_relative_difference",
    "median_relative_difference",
    "tolerance",
    "verdict",
    "note",
    "known_cause",
    "reference",
    "looseness_min",
    "looseness_max",
]


def n_grid(spec: Mapping) -> np.ndarray:
    """Their n grid: ``np.geomspace(start, stop, num, dtype=int)`` (truncated to integers, as theirs)."""
    return np.geomspace(int(spec["start"]), int(spec["stop"]), num=int(spec["num"]), dtype=int)


def curve_k(spec, n_users: int) -> int:
    """The domain size at n = ``n_users``: an integer, or :data:`CUBE_ROOT` (their ``int(n ** (1/3))``).

    Args:
        spec: the panel's ``k``: an integer or :data:`CUBE_ROOT`.
        n_users: the number of users n.

    Returns:
        The domain size k at n.
    """
    if spec == CUBE_ROOT:
        return int(n_users ** (1 / 3))
    return int(spec)


def curve_delta(spec, n_users: int) -> float:
    """The target delta at n = ``n_users``: a number, or :data:`INVERSE_SQUARE` (1 / n^2).

    Args:
        spec: the panel's ``delta``: a number or :data:`INVERSE_SQUARE`.
        n_users: the number of users n.

    Returns:
        The target delta at n.
    """
    if spec == INVERSE_SQUARE:
        return 1.0 / float(n_users) ** 2
    return float(spec)


def _value(section: Mapping, name: str, n: int, k: int, delta: float) -> float:
    """eps (panel value ``epsilon``) or the calibrated eps0 (``epsilon_local``) of accountant ``name`` at n."""
    if section["value"] == "epsilon":
        accountant = get_accountant(name, epsilon_local=float(section["epsilon_local"]), n_users=n, k=k)
        return float(accountant.epsilon_for_delta(delta, tolerance=float(section["tolerance"])))
    return float(
        calibrate_epsilon_local(
            name,
            n_users=n,
            k=k,
            epsilon=float(section["epsilon"]),
            delta=delta,
            upper=float(section["upper"]),
            tolerance=float(section["tolerance"]),
        )
    )


def _point_key(section: Mapping, name: str, n: int, k: int, delta: float) -> tuple:
    """Everything :func:`_value` reads: (accountant, value name, n, k, target, delta, tolerance, upper), the
    target being eps0 (value ``epsilon``) or eps (value ``epsilon_local``); ``upper`` is 0 when unused."""
    if section["value"] == "epsilon":
        return (
            name,
            "epsilon",
            n,
            k,
            float(section["epsilon_local"]),
            delta,
            float(section["tolerance"]),
            0.0,
        )
    return (
        name,
        "epsilon_local",
        n,
        k,
        float(section["epsilon"]),
        delta,
        float(section["tolerance"]),
        float(section["upper"]),
    )


def _reference_ns(section: Mapping) -> list[int]:
    """The n of the reference curves: every ``reference_every``-th n of the grid and the largest."""
    ns = n_grid(section["n"])
    return sorted({*ns[:: int(section.get("reference_every", 1))].tolist(), int(ns[-1])})


def _reference_points(section: Mapping) -> list[tuple]:
    """The keys (:func:`_point_key`) of the reference curves of one panel, in the order they are computed."""
    points = []
    for spec in section.get("references", {}).values():
        for n in _reference_ns(section):
            points.append(
                _point_key(
                    section,
                    spec["accountant"],
                    int(n),
                    curve_k(spec.get("k", 2), int(n)),
                    curve_delta(section["delta"], int(n)),
                )
            )
    return points


def _shared_points(sections: Mapping) -> dict[tuple, list[str]]:
    """Reference points that two or more panels compute (same key), with the panels."""
    panels: dict[tuple, list[str]] = {}
    for panel, section in sections.items():
        for key in _reference_points(section):
            panels.setdefault(key, [])
            if panel not in panels[key]:
                panels[key].append(panel)
    return {key: names for key, names in panels.items() if len(names) > 1}


def shared_reference_panels(sections: Mapping) -> list[str]:
    """Panels (of ``balle.panels``) with a reference point also computed by another panel: they read it
    from :func:`shared_references` instead (panels ii and iii share all three reference curves)."""
    return [panel for panel in sections if any(panel in names for names in _shared_points(sections).values())]


def shared_references(sections: Mapping) -> pd.DataFrame:
    """Every reference point computed by two or more panels, computed once (:data:`SHARED_COLUMNS`; the
    value is that of :func:`_value` with the first such panel's section, which the key determines)."""
    rows = []
    for key, names in _shared_points(sections).items():
        name, _, n, k, _, delta, _, _ = key
        start = time.perf_counter()
        value = _value(sections[names[0]], name, n, k, delta)
        rows.append(dict(zip(SHARED_COLUMNS, [*key, value, time.perf_counter() - start])))
    return pd.DataFrame(rows, columns=SHARED_COLUMNS)


def shared_values(frame: pd.DataFrame) -> dict[tuple, tuple[float, float]]:
    """:func:`shared_references` read back from its CSV as key -> (value, seconds) (pandas >= 3.1 reads
    floats with one round-trip converter)."""
    out = {}
    for row in frame.itertuples(index=False):
        key = (
            str(row.accountant),
            str(row.value_name),
            int(row.n),
            int(row.k),
            float(row.target),
            float(row.delta),
            float(row.tolerance),
            float(row.upper),
        )
        out[key] = (float(row.value), float(row.seconds))
    return out


def _curve_rows(
    panel: str, section: Mapping, label: str, spec: Mapping, role: str, ns, known: Mapping | None = None
) -> list[dict]:
    name = spec["accountant"]
    known = known or {}
    rows = []
    for n in ns:
        n = int(n)
        k, delta = curve_k(spec.get("k", 2), n), curve_delta(section["delta"], n)
        start = time.perf_counter()
        key = _point_key(section, name, n, k, delta)
        if key in known:  # computed once for every panel that needs it (shared_references)
            value, seconds = known[key]
        else:
            value = _value(section, name, n, k, delta)
            seconds = time.perf_counter() - start
        rows.append(
            {
                "panel": panel,
                "curve": label,
                "role": role,
                "accountant": name,
                "kind": accountant_class(name).kind.value,
                "n": n,
                "k": k,
                "epsilon": value if section["value"] == "epsilon" else float(section["epsilon"]),
                "epsilon_local": float(section["epsilon_local"]) if section["value"] == "epsilon" else value,
                "delta": delta,
                "value_name": section["value"],
                "value": value,
                "seconds": seconds,
            }
        )
    return rows


def panel_frame(panel: str, section: Mapping, known: Mapping | None = None) -> pd.DataFrame:
    """The curves of panel ``panel`` from its config slice ``balle.panels.<panel>``: one row per point
    (:data:`CURVE_COLUMNS`). ``role`` is ``published`` for the curves of their figure (``curves``: legend
    label -> {accountant, k}) and ``reference`` for ours (``references``), computed on every
    ``reference_every``-th n of the grid (the largest n included). ``known``: values already computed
    (:func:`shared_values`), used instead of computing them again (same numbers: same function, same
    arguments; only the ``seconds`` column is that of the job that computed them)."""
    if panel not in PANELS:
        raise ValueError(f"`panel` must be one of {', '.join(PANELS)}; got {panel!r}.")
    ns = n_grid(section["n"])
    reference_ns = _reference_ns(section)
    rows = []
    for label, spec in section["curves"].items():
        rows += _curve_rows(panel, section, label, spec, "published", ns)
    for label, spec in section.get("references", {}).items():
        rows += _curve_rows(panel, section, label, spec, "reference", reference_ns, known)
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def _looseness(section_value: str, mine: pd.DataFrame, reference: pd.DataFrame) -> tuple[float, float]:
    """min and max over the reference's n of how far the curve is from the reference, as a factor >= 1
    when the reference is tighter: bound eps / reference eps (panel i), reference eps0 / bound eps0."""
    joined = mine.merge(reference[["n", "value"]], on="n", suffixes=("", "_reference"))
    if joined.empty:
        return math.nan, math.nan
    if section_value == "epsilon":
        ratio = joined["value"] / joined["value_reference"]
    else:
        ratio = joined["value_reference"] / joined["value"]
    return float(ratio.min()), float(ratio.max())


def _compare(mine: pd.DataFrame, theirs: pd.DataFrame) -> tuple[list[float], int]:
    """Relative differences at the n where their value is finite, and the count where it is not."""
    values = dict(zip(mine["n"].astype(int), mine["value"].astype(float)))
    differences, undefined = [], 0
    for n, value in zip(theirs["x"].astype(int), theirs["value"].astype(float)):
        if not math.isfinite(value):
            undefined += 1
            continue
        if n in values:
            differences.append(abs(values[n] - value) / abs(value) if value else math.inf)
    return differences, undefined


def panel_verdicts(
    ours: pd.DataFrame,
    published: pd.DataFrame,
    sections: Mapping,
    *,
    tolerance: float,
    notes: Mapping | None = None,
) -> pd.DataFrame:
    """One verdict per curve of their figure: *reproduced* when every point where their code returns a
    number is within ``tolerance`` (relative) of ours, else *not reproduced*. Points where their code
    returns NaN (Erlingsson et al.'s closed form outside its stated range) are counted in
    ``theirs_undefined``, not compared. ``sections``: the ``balle.panels`` config (each curve's
    ``reference`` names the reference curve its looseness is measured against). One verdict per version
    of their code (column ``code`` of the transcription: ``current``, ``2019``); ``notes`` maps
    "code/panel/curve" or "code/bound" (the curve's first word, e.g. "2019/Bennett") to a named cause."""
    notes = dict(notes or {})
    rows = []
    if "code" not in published.columns:
        published = published.assign(code="current")
    for (panel, curve, code), theirs in published.groupby(["panel", "curve", "code"], sort=False):
        section = sections[panel]
        mine = ours[(ours["panel"] == panel) & (ours["curve"] == curve) & (ours["role"] == "published")]
        differences, undefined = _compare(mine, theirs)
        accountant = mine["accountant"].iloc[0] if len(mine) else ""
        if not differences:
            verdict, largest, median = NOT_REPRODUCED, math.nan, math.nan
            note = "no point of ours matches this curve (not computed in this run)"
        else:
            largest, median = float(np.max(differences)), float(np.median(differences))
            verdict = REPRODUCED if largest <= tolerance else NOT_REPRODUCED
            note = (
                f"{len(differences)} of {len(theirs)} points compared"
                + (f" ({undefined} where their code returns NaN)" if undefined else "")
                + f"; largest relative difference {largest:.2e} (tolerance {tolerance:.0e})"
            )
        reference = section["curves"].get(curve, {}).get("reference", "")
        low, high = math.nan, math.nan
        if reference:
            references = ours[
                (ours["panel"] == panel) & (ours["curve"] == reference) & (ours["role"] == "reference")
            ]
            low, high = _looseness(section["value"], mine, references)
        extra = notes.get(f"{code}/{panel}/{curve}", notes.get(f"{code}/{curve.split(',')[0]}", ""))
        rows.append(
            {
                "panel": panel,
                "curve": curve,
                "code": code,
                "accountant": accountant,
                "points": len(theirs),
                "compared": len(differences),
                "theirs_undefined": undefined,
                "max_relative_difference": largest,
                "median_relative_difference": median,
                "tolerance": tolerance,
                "verdict": verdict,
                "note": note,
                "known_cause": extra if verdict != REPRODUCED else "",
                "reference": reference,
                "looseness_min": low,
                "looseness_max": high,
            }
        )
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def blanket_density_values(
    epsilon_local: float, inputs, y
) -> tuple[float, np.ndarray, list[tuple[float, np.ndarray, np.ndarray]]]:
    """The values of :func:`blanket_densities` as arrays, without the frame (for a caller that evaluates
    them point by point, e.g. a quadrature): the frame's ``density`` column is these arrays, bit for bit.

    Args:
        epsilon_local: the Laplace randomizer's eps0.
        inputs: the inputs x in [0, 1].
        y: the points y.

    Returns:
        (gamma, omega(y), [(x, mu_x(y), omega_x(y)) for each x of ``inputs``]).
    """
    eps0 = float(epsilon_local)
    gamma = math.exp(LaplaceBlanket(eps0).log_gamma)
    y = np.asarray(y, dtype=float)
    blanket = 0.5 * eps0 * np.exp(-eps0 * np.abs(y - 0.5))
    parts = []
    for x in inputs:
        output = 0.5 * eps0 * np.exp(-eps0 * np.abs(y - float(x)))
        # mu_x >= gamma omega everywhere (equality for y beyond x on the far side from 1/2): clip rounding only
        rest = np.maximum(output - gamma * blanket, 0.0) / (1.0 - gamma)
        parts.append((float(x), output, rest))
    return gamma, blanket, parts


def blanket_densities(epsilon_local: float, inputs, y) -> pd.DataFrame:
    """Their Figure 2: the eps0-LDP Laplace randomizer on [0, 1], R(x) = x + Lap(1/eps0), split as
    mu_x = gamma omega + (1 - gamma) omega_x (Sec. 5.1, Lemma 5.1 (2) and its proof). Rows per point y of
    ``y``: ``output`` mu_x(y) = (eps0/2) e^(-eps0 |y - x|) for each x of ``inputs``; ``blanket`` omega(y) =
    (eps0/2) e^(-eps0 |y - 1/2|) (Lap(1/2, 1/eps0), the normalised inf over x in [0, 1] of mu_x); and
    ``data-dependent`` omega_x = (mu_x - gamma omega) / (1 - gamma), with gamma = e^(-eps0/2) read from
    :class:`~shuffledp.accounting.params.LaplaceBlanket` (the values: :func:`blanket_density_values`)."""
    eps0 = float(epsilon_local)
    gamma, blanket, parts = blanket_density_values(eps0, inputs, y)
    y = np.asarray(y, dtype=float)
    rows = [pd.DataFrame({"component": "blanket", "input": math.nan, "y": y, "density": blanket})]
    for x, output, rest in parts:
        rows.append(pd.DataFrame({"component": "output", "input": x, "y": y, "density": output}))
        rows.append(pd.DataFrame({"component": "data-dependent", "input": x, "y": y, "density": rest}))
    frame = pd.concat(rows, ignore_index=True).assign(epsilon_local=eps0, gamma=gamma)
    return frame[DENSITY_COLUMNS]


def _published(frame: pd.DataFrame, panel: str, curve: str) -> pd.Series:
    rows = frame[(frame["panel"] == panel) & (frame["curve"] == curve) & (frame["role"] == "published")]
    return rows.set_index("n")["value"].astype(float)


def _claim_row(frame, panel, better, worse, claim, *, smaller_is_better: bool, everywhere: bool) -> dict:
    """How many n of ``panel`` have ``better`` strictly ahead of ``worse`` (the claim's direction), strictly
    behind, or level. The claim holds at every n (``everywhere``) or, for a crossover claim, at the largest n
    while ``worse`` is ahead at the smallest."""
    a, b = _published(frame, panel, better), _published(frame, panel, worse)
    common = a.index.intersection(b.index).sort_values()
    a, b = a[common], b[common]
    ahead = (a < b) if smaller_is_better else (a > b)
    behind = (a > b) if smaller_is_better else (a < b)
    holds, fails = int(ahead.sum()), int(behind.sum())
    if not len(common):
        verdict = NOT_REPRODUCED
    elif everywhere:
        verdict = REPRODUCED if holds == len(common) else NOT_REPRODUCED
    else:
        verdict = REPRODUCED if bool(ahead.iloc[-1]) and bool(behind.iloc[0]) else NOT_REPRODUCED
    value_name = (
        "epsilon (smaller is better)" if smaller_is_better else "largest epsilon_local (larger is better)"
    )
    return {
        "panel": panel,
        "claim": claim,
        "better": better,
        "worse": worse,
        "value_name": value_name,
        "points": len(common),
        "claim_holds": holds,
        "claim_fails": fails,
        "verdict": verdict,
        "note": (
            f"{better} ahead of {worse} at {holds} of {len(common)} n (n = {int(common[0])}..{int(common[-1])}), "
            f"behind at {fails}, level at {len(common) - holds - fails}; {better} / {worse} ranges "
            f"{(a / b).min():.3g} to {(a / b).max():.3g}"
        )
        if len(common)
        else "no common n",
    }


def overturned_claims(frame: pd.DataFrame) -> pd.DataFrame:
    """Two sentences of their Sec. 6 checked on our (corrected-Bennett) Figure 3 curves ``frame``
    (balle_fig3.csv): panel (i) "for generic local randomizers, Hoeffding is better for small values of n,
    while Bennet is better for large values of n" (counted as: at how many n Bennett's eps is below
    Hoeffding's) and panel (iii) "for every mechanism the Bennett bound is better than the Hoeffding bound"
    (counted for RR-2: at how many n Bennett's largest eps0 exceeds Hoeffding's)."""
    rows = [
        _claim_row(
            frame,
            "i",
            "Bennett",
            "Hoeffding",
            "(i) generic randomizers: Hoeffding is better for small n, Bennett for large n",
            smaller_is_better=True,
            everywhere=False,
        ),
        _claim_row(
            frame,
            "iii",
            "Bennett, RR-2",
            "Hoeffding, RR-2",
            "(iii) for every mechanism the Bennett bound is better than the Hoeffding bound (RR-2)",
            smaller_is_better=False,
            everywhere=True,
        ),
    ]
    return pd.DataFrame(rows, columns=CLAIM_COLUMNS)
