"""``worst-case-lower``: a LOWER bound on the worst case over datasets of the shuffled k-RR histogram's delta.

The histogram's delta for any one pair of neighbouring datasets is at most the worst case, and a
post-processing (a marginal) of the histogram has at most the histogram's delta. So the exact delta of
a marginal of the real shuffled histogram (not an adversary's view) for explicit datasets is a lower
bound on the worst case; this accountant returns the largest over a family of datasets and both
directions. The family and its formulas are in :mod:`shuffledp.accounting.views.worst.families` (which also builds their
binned privacy loss distributions for composition).

On every tiny case enumerated in the tests this bound lies below the brute-force worst case over all
datasets (for k >= 3 the worst case is usually "none", for k = 2 "all on x1" in one direction); for
k = 2 the family misses the mixed datasets, and the bracket against ``weak-adversary`` is wider there
(ratio up to ~1.4, the weak adversary being the loose side); ``worst-case-upper`` (the certified maximum
over every k = 2 dataset) closes it to <= 1.001 for n <= 20000 (<= 1.0001 measured at n = 100000, eps0 in {0.5, 1, 4, 8}, delta = 1e-6); see docs/reproduction-notes.md.

Widened family (:mod:`shuffledp.accounting.views.worst.enumeration`, issue 23): for k = 3 and
n <= MAX_USERS_EXACT the exact maximum over every (n_x0, n_x1), and up to
:data:`~shuffledp.accounting.views.worst.k3_blocks.MAX_USERS_K3_BLOCKS` the same maximum by branch and bound over
blocks of datasets (then this bound is the worst case itself, equal to ``worst-case-upper`` up to rounding); for k >= 4 and n <= MAX_USERS_THIRD the exact full-histogram
delta (through (h0, h1, h2), sufficient) of "n_x0 on x0, n_x1 on x1, the rest on x2", for every
(n_x0, n_x1) when n <= MAX_USERS_ALL_PAIRS, else for the small ones of THIRD_VALUE_DATASETS. The
worst case is not always at small counts: at n = 10, k = 4, eps0 = 2, eps = 1.5 brute force puts it at
6 others on x1 and 3 on x3 (reverse direction). For k >= 4 and MAX_USERS_THIRD < n <= MAX_USERS_ONE_VALUE
the member "one value" is the whole-histogram delta of "every other user on x2" in closed form
(:mod:`shuffledp.accounting.views.worst.third_value`: the privacy loss is linear in (h0, h1, h2), one expected
excess per (h0 + h1, h0)); it dominates "none" (its (h0, h1) marginal). The widened members are
single-round only: the binned views used for composition are still those of the three old members.

Issue 34 (branch i34-lower): for k >= 4 and 16 < n <= MAX_USERS_HEAVY the family also holds "all on x0 but j
on x2" (j <= HEAVY_MOVED; its reverse is "all on x1 but j on x2", the enumerated maximisers it missed:
lower / truth 0.827 -> 0.9948 on the 525 enumerated cases). Issue 35: "one value" is summed from tables
shared across epsilons (:mod:`shuffledp.accounting.views.worst.one_value_tables`) and skipped where its
Chernoff bound is below the family's maximum or below e^-700 (beyond the accuracy promise). The members by
n and their cost: docs/worst-case-k3.md, "The lower end's family by n".
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.chernoff import ChernoffBound
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.views.worst import families as worst
from shuffledp.accounting.views.worst import k3_large
from shuffledp.accounting.views.worst.enumeration import third_value_delta, third_value_outputs
from shuffledp.accounting.views.worst.families import FAMILY, WorstFamilies
from shuffledp.accounting.views.worst.k3_blocks import MAX_USERS_K3_BLOCKS, exact_worst
from shuffledp.accounting.views.worst.third_value import OneValueView

__all__ = [
    "WorstCaseLower",
    "FAMILY",
    "HEAVY_MOVED",
    "MAX_USERS_EXACT",
    "MAX_USERS_HEAVY",
    "MAX_USERS_ONE_VALUE",
    "THIRD_VALUE_DATASETS",
]

#: largest n for which the widened family is searched (k = 3: every (n_x0, n_x1); k >= 4: the
#: third-value datasets below, each a windowed three-count law; MAX_USERS_THIRD for those)
MAX_USERS_EXACT = 64
MAX_USERS_THIRD = 200
#: (n_x0, n_x1) of the k >= 4 datasets "n_x0 on x0, n_x1 on x1, the rest on x2" (forward direction;
#: (b, a) is the reverse direction of (a, b)) above MAX_USERS_ALL_PAIRS; at or below it every (a, b)
THIRD_VALUE_DATASETS = ((0, 0), (1, 0), (0, 1), (2, 0), (0, 2), (1, 1))
MAX_USERS_ALL_PAIRS = 16
#: "every other user on x0 but j of them on x2" (forward direction; its reverse is "all on x1 but j on x2"),
#: j = 1 .. HEAVY_MOVED, added above MAX_USERS_ALL_PAIRS up to MAX_USERS_HEAVY (issue 34: the enumerated
#: maximisers "22 others on x1, one on x2" at k = 4, n = 24 and "18 on x1, one on x2" at n = 20 are of this
#: shape, and the lower bound was 0.83x the truth without them). Their law is built user by user over an
#: n x n x n grid (~0.16 s per dataset at n = 64, 0.6 s at n = 100, per (n, k, eps0)): kept to n <= 64
HEAVY_MOVED = 3
MAX_USERS_HEAVY = 64
#: largest n for which the k >= 4 dataset "every other user on x2" is summed over its whole histogram
#: (:mod:`shuffledp.accounting.views.worst.third_value`; ~0.3 s per epsilon at n = 10^4, k = 10)
MAX_USERS_ONE_VALUE = 10_000
#: above MAX_USERS_EXACT only the first three (time: an epsilon search ~3 s at n = 200)
_LARGE_THIRD = 3
_LOG_BEYOND_PROMISE = -700.0
_LOG_ROUNDING = 1e-13  # the certified lower values lose this in log: exp(log(x)) stays below x
#: "one value" is a sum of closed-form expected excesses (incomplete beta, continued fractions) whose
#: error is not bounded term by term; it loses this in log, the agreement its tests check (brute force,
#: an independent summation: within 1e-9 in log)
_LOG_ONE_VALUE_ACCURACY = 1e-9


class WorstCaseLower(BracketedMixin, Accountant):
    """Largest exact delta over the family "none" / "all on x0" / "all on x1" (both directions), widened at
    small n (module doc)."""

    name = "worst-case-lower"
    label = "lower bound on the worst case over datasets"
    colour = "#225555"
    kind = BoundKind.LOWER
    scope = (
        "lower bound on the worst case over all neighbouring datasets: max over both directions of the exact "
        "histogram delta when every other user holds x0 (or x1), and of the (h_x0, h_x1) marginal when none "
        "holds x0 or x1 (k >= 3; the whole histogram for k = 3); for k = 3 and n <= 200 also the exact maximum "
        "over every (n_x0, n_x1) (the worst case itself); for k >= 4 and n <= 200 the exact histogram delta of "
        "'n_x0 on x0, n_x1 on x1, the rest on x2' (every (n_x0, n_x1) for n <= 16, n_x0 + n_x1 <= 2 and "
        "n_x0 = n - 1 - j, n_x1 = 0 for j <= 3 up to 64, n_x0 + n_x1 <= 1 above), and for 200 < n <= 10000 that of 'every other user on x2'; "
        "for k = 3 where worst-case-upper's large-n block search runs, the exact delta of the best dataset it found"
    )
    reference = (
        "this package: exact marginals of the shuffled k-RR histogram for explicit datasets (data processing); "
        "cf. Koskela, Heikkila, Honkela (2021) Thm 4 for the weak adversary it brackets"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._families = WorstFamilies(self.setting)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """As every bracketed accountant's; a lone epsilon asked of a fresh accountant (one value, the first
        call: a calibration of eps0 asks each eps0's accountant for one) sums "one value" adaptively instead of
        building its tables shared across epsilons, which cost several single sums (branch i35-flow: the
        equal-guarantee calibration job had grown from 9.3 to 14.6 CPU s when the tables came in). Sweeps
        (several epsilons in a call, or later calls) and epsilon searches use the tables as before."""
        epsilons = self._checked_epsilons(epsilons)
        self._lone = epsilons.size == 1 and not self.__dict__.get("_asked", False)
        self._asked = True
        try:
            return super().log_delta_for_epsilon(epsilons)
        finally:
            self._lone = False

    def member_log_deltas(self, eps: float) -> dict[str, float]:
        """log delta of each family member at ``eps`` (the accountant returns their maximum); for
        n <= MAX_USERS_EXACT also "every (n_x0, n_x1)" (k = 3, exact worst case) or "third value"
        (k >= 4: max over THIRD_VALUE_DATASETS of the exact full-histogram delta), and for k >= 4,
        MAX_USERS_THIRD < n <= MAX_USERS_ONE_VALUE "one value" (every other user on x2, the whole
        histogram: the third-value dataset a = b = 0 in closed form, which "third value" holds below)."""
        members = self._families.member_log_deltas(eps)
        members.update(self._widened(eps))
        return members

    def _widened(self, eps: float, above: float | None = None) -> dict[str, float]:
        """The members beyond the family's three (see :meth:`member_log_deltas`). With ``above`` (the
        family's maximum), "one value" is skipped where its certified Chernoff bound
        (:meth:`~shuffledp.accounting.views.worst.one_value_tables.OneValueTables.log_bound`) lies below it:
        its value cannot be the maximum (issue 35: most epsilons of a sweep)."""
        members: dict[str, float] = {}
        s = self.setting
        if s.k < 3 or eps >= s.epsilon_local:
            return members
        if (
            s.k >= 4 and MAX_USERS_THIRD < s.n_users <= MAX_USERS_ONE_VALUE
        ):  # below: in "third value" (a = b = 0)
            if getattr(self, "_one_value", None) is None:
                self._one_value = OneValueView(n_users=s.n_users, k=s.k, epsilon_local=s.epsilon_local)
            # skipped where its bound is below the maximum, or below e^-700 (~1e-304: beyond the accuracy
            # promise, where any lower value may be returned)
            if above is None or self._one_value.tables.log_bound(float(eps)) >= max(
                above, _LOG_BEYOND_PROMISE
            ):
                value = self._one_value.log_delta(float(eps), tables=not self.__dict__.get("_lone", False))
                members["one value"] = value - _LOG_ONE_VALUE_ACCURACY if np.isfinite(value) else -np.inf
        if s.k == 3 and k3_large.searched(s.n_users, s.epsilon_local):
            # the best dataset the k = 3 large-n search found (its exact delta, certified lower value; issue 34)
            value = k3_large.large_worst(float(eps), n_users=s.n_users, epsilon_local=s.epsilon_local).lower
            members["best (n_x0, n_x1) found"] = (
                float(np.log(value)) - _LOG_ROUNDING if value > 0 else -np.inf
            )
        if s.n_users > (MAX_USERS_K3_BLOCKS if s.k == 3 else MAX_USERS_THIRD):
            return members
        if s.k == 3:
            members["every (n_x0, n_x1)"] = self._k3_exact(eps)
        else:
            members["third value"] = self._third_value(eps)
        return members

    def _k3_exact(self, eps: float) -> float:
        """log of the certified lower value of the exact k = 3 worst case (enumeration, or blocks above MAX_USERS_EXACT)."""
        s = self.setting
        value = exact_worst(float(eps), n_users=s.n_users, epsilon_local=s.epsilon_local).lower
        return float(np.log(value)) - _LOG_ROUNDING if value > 0 else -np.inf

    def _third_value(self, eps: float) -> float:
        s = self.setting
        n = s.n_users
        pairs = (
            [(a, b) for a in range(n) for b in range(n - a)]
            if n <= MAX_USERS_ALL_PAIRS
            else [(a, b) for a, b in THIRD_VALUE_DATASETS if a + b <= n - 1]
        )
        if n > MAX_USERS_EXACT:
            pairs = pairs[:_LARGE_THIRD]
        if MAX_USERS_ALL_PAIRS < n <= MAX_USERS_HEAVY:  # below: among every (a, b)
            pairs += [(n - 1 - j, 0) for j in range(1, HEAVY_MOVED + 1) if (n - 1 - j, 0) not in pairs]
        if getattr(self, "_third", None) is None:  # the laws and (P, Q) do not depend on eps: built once
            self._third = {
                (a, b): third_value_outputs(n_users=n, k=s.k, epsilon_local=s.epsilon_local, a=a, b=b)
                for a, b in pairs
            }
        value = max(
            third_value_delta(
                float(eps), n_users=n, k=s.k, epsilon_local=s.epsilon_local, a=a, b=b, outputs=outputs
            )
            for (a, b), outputs in self._third.items()
        )
        return float(np.log(value)) - _LOG_ROUNDING if value > 0 else -np.inf

    def binned_views(self, *, interval: float, pessimistic: bool, K: float, log_masses: bool = False) -> list:
        if log_masses:
            raise ValueError(
                f"`log_masses` must be False for accountant {self.name!r} (its masses are not "
                "formed per outcome); got True."
            )
        s = self.setting
        return worst.binned(
            epsilon_local=s.epsilon_local,
            n_users=s.n_users,
            k=s.k,
            interval=interval,
            pessimistic=pessimistic,
            K=K,
        )

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:
        # a lower bound: what the windows leave out is simply dropped (the true value is only larger)
        # the family's maximum without evaluating members that cannot be it (the same value to the bit)
        best = self._families.log_delta_max(eps)
        return max([best, *self._widened(eps, above=best).values()]), -np.inf

    def _chernoff(self) -> ChernoffBound:
        if getattr(self, "_chernoff_bound", None) is None:
            s = self.setting
            self._chernoff_bound = ChernoffBound(n_users=s.n_users, k=s.k, epsilon_local=s.epsilon_local)
        return self._chernoff_bound

    def _epsilon_hint(self, log_target: float) -> float | None:
        """The weak adversary's Chernoff bound bounds every dataset's delta, these included: where it
        meets the target so does this lower bound (a certified upper end for the search)."""
        return self._chernoff().epsilon_hint(log_target)

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        return self._chernoff().epsilon_refine(log_target, eps, log_value)
