"""The worst-case lower family as a view: the maximum of its members, and their binned privacy loss
distributions for composition.

The family (:class:`WorstFamilies`, a :class:`~shuffledp.accounting.views.base.FamilyView`) has two
members, each one explicit pair of neighbouring datasets (:mod:`~shuffledp.accounting.worst_case.families.members`):
"none" (:class:`~shuffledp.accounting.worst_case.families.members.NoMatchView`, k >= 3) and "all on x0"
(:class:`~shuffledp.accounting.worst_case.families.members.AllOnX0View`, read in both directions, so it
also covers "all on x1"). Its delta is the maximum over exactly those members, evaluated by their fast
row sums (:meth:`~shuffledp.accounting.worst_case.families.sums.FamilySums.log_delta_max`, the same value
as the maximum of the members' overrides, bit for bit); :func:`binned` gives the same members' binned
PLDs. Both are lower bounds on the worst case over datasets (exact marginals of the real histogram).

"Every other user on x2" (:class:`~shuffledp.accounting.worst_case.families.members.ThirdValueView`) is
not a member: it is evaluated only where its cost allows and has no binned PLD; ``worst-case-lower`` adds
it by regime (docs/decisions/worst-case.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.numerics.windows import bernstein_half_width, sd_window
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.views.base import DEFAULT_K, FamilyView, View
from shuffledp.accounting.views.binned import (
    LOG_HALF,
    BinnedView,
    Bins,
    bin_index,
    flat_rows,
    split_pair_rows,
)
from shuffledp.accounting.worst_case.families.members import AllOnX0View, NoMatchView
from shuffledp.accounting.worst_case.families.sums import FAMILY, FamilySums

__all__ = ["WorstFamilies", "FAMILY", "binned"]


class WorstFamilies(FamilyView):
    """The family "none" (k >= 3) and "all on x0" (both directions): its delta is the maximum of its members
    (module docstring), a lower bound on the worst case over datasets. ``sums`` evaluates the members'
    exact row sums (kept across epsilons)."""

    name = "worst-lower-family"

    def __init__(self, setting: ShuffleSetting):
        super().__init__(setting)
        self.sums = FamilySums(setting)

    def members(self) -> Iterator[View]:
        """The member views: "all on x0" and, for k >= 3, "none" (streams of their exact laws)."""
        yield AllOnX0View(self.setting)
        if (self.setting.k or 0) >= 3:  # a setting without a domain size has no "none" dataset
            yield NoMatchView(self.setting)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = False) -> np.ndarray:
        """The maximum over the members at each epsilon, by their row sums
        (:meth:`~shuffledp.accounting.worst_case.families.sums.FamilySums.log_delta_max`).

        Args:
            epsilons: one epsilon or an array of them.
            K: unused (the row sums choose their own windows); kept for the view interface.
            upper: unused (the value is a lower bound on the worst case either way).

        Returns:
            log delta of the family at each epsilon.
        """
        return np.array(
            [self.sums.log_delta_max(float(e)) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))]
        )


def binned(*, epsilon_local, n_users, k, interval, pessimistic, K=9.0) -> list[BinnedView]:
    """Binned views of the explicit datasets of ``worst-case-lower`` ("none" for k >= 3; "all on x0"
    in both directions). Exact marginals of the real histogram: their deltas are lower bounds."""
    n = float(n_users)
    e0 = float(epsilon_local)
    krr = KrrParams.of(e0, k)
    views = []
    if k >= 3:  # "none": S ~ Bin(n, 2q), A | S ~ Bin(S, 1/2)
        rho = krr.rho
        s, log_w, a_lo, a_hi, _ = split_pair_rows(n_users, krr.log_2q, krr.log_1m2q, K)
        ss, a, pos = flat_rows(s, a_lo, a_hi)
        c = ss - a
        log_t = log_w[pos] + log_binom_pmf_loader(a, ss, LOG_HALF, LOG_HALF) - math.log(n)
        num = math.exp(e0) * a + c + rho * (n - ss)
        den = math.exp(e0) * c + a + rho * (n - ss)
        keep = (num > 0) & (den > 0)
        loss = np.log(num[keep] / den[keep])
        bins = Bins()
        bins.add(
            bin_index(loss, interval, pessimistic),
            np.exp(log_t[keep]) * num[keep],
            np.exp(log_t[keep]) * den[keep],
        )
        views.append(bins.view(interval, pessimistic, 0.0, 0.0, 0.0, True, "none"))
    # "all on x0": (h_x0, h_x1) ~ Mult_n with (e^eps0 q, q); S ~ Bin(n, (e^eps0 + 1) q), A | S ~ Bin(S, pi0)
    log_ppq = krr.log_ppq
    log_rest = krr.log_rest
    log_pi0, log_1mpi0 = krr.log_alpha, krr.log_1malpha  # without a difference of large logs
    pi0 = math.exp(log_pi0)
    if k > 2:
        s_lo, s_hi = (float(v) for v in sd_window(n, math.exp(log_ppq), K))
    else:
        s_lo = s_hi = n
    s = np.arange(s_lo, s_hi + 1.0)
    log_w = log_binom_pmf_loader(s, n, log_ppq, log_rest) if k > 2 else np.zeros(1)
    half = bernstein_half_width(np.sqrt(s * pi0 * (1.0 - pi0)), K)
    a_lo, a_hi = np.clip(np.floor(s * pi0 - half), 0.0, s), np.clip(np.ceil(s * pi0 + half), 0.0, s)
    ss, a, pos = flat_rows(s, a_lo, a_hi)
    c = ss - a
    log_p = log_w[pos] + log_binom_pmf_loader(a, ss, log_pi0, log_1mpi0)
    ratio = (c * math.exp(e0) + a * math.exp(-e0) + (n - ss)) / n  # Q / P
    loss = -np.log(ratio)
    bins = Bins()  # not symmetric: the composition layer takes both directions (D || D' and D' || D)
    bins.add(bin_index(loss, interval, pessimistic), np.exp(log_p), np.exp(log_p) * ratio)
    views.append(bins.view(interval, pessimistic, 0.0, 0.0, 0.0, False, "all-x0"))
    return views
