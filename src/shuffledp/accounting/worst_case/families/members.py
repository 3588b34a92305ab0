"""The explicit datasets of the worst-case lower bound as :class:`~shuffledp.accounting.views.base.View`
s. The family (a :class:`~shuffledp.accounting.views.base.FamilyView`) is
:class:`~shuffledp.accounting.worst_case.families.family.WorstFamilies`: its members are
:class:`NoMatchView` and :class:`AllOnX0View`; :class:`ThirdValueView` is an explicit dataset that
``worst-case-lower`` adds at some n only (see that class).

Each member is ONE pair of neighbouring datasets (replace-one: the differing user u holds x0 in D, x1
in D'), given by the exact law of a sufficient (or marginal) statistic of the shuffled histogram. With
E = e^eps0, p = E q, q = 1 / (E + k - 1) and Tri_n / M_n the multinomial laws of the n reports (the
formulas follow from Tri_{n-1}(h - e_j) = Tri_n(h) h_j / (n pi_j)):

* :class:`NoMatchView` ("none", k >= 3): no other user holds x0 or x1; outcomes (a, c) = (h_x0, h_x1),
  Tri_n with probabilities (q, q):
  P(a, c) = Tri_n(a, c) (E a + c + rho (n - a - c)) / n, Q with a and c exchanged,
  rho = (k - 2) / (E + k - 3). Symmetric. (The marginal of the histogram: a lower bound on its delta.)
* :class:`AllOnX0View` ("all on x0"): every other user holds x0; outcomes (a, c) = (h_x0, h_x1),
  Tri_n with probabilities (p, q): P(a, c) = Tri_n(a, c) and
  Q(a, c) = Tri_n(a, c) (a / E + E c + n - a - c) / n. Sufficient (the other values have the same law
  under D and D'): the dataset's exact histogram delta. Its ADD direction is "all on x1"'s REMOVE.
* :class:`ThirdValueView` (k >= 3): every other user holds one value x2 outside {x0, x1}; outcomes
  (h0, h1, h2), M_n with cell probabilities (q, q, p, (k - 3) q):
  P(h) = M_n(h) (E h0 + h1 + h2 / E + n - h0 - h1 - h2) / n, Q with h0 and h1 exchanged (sufficient:
  :mod:`shuffledp.accounting.worst_case.families.third_value`). Symmetric.

The streams enumerate the whole support (O(n^2) or O(n^3) outcomes, nothing left out): they are the
reference the fast sums are held to (tests/accounting/test_view_streams_weak_worst.py) and serve small
settings. The fast sums are the members' documented overrides of :meth:`View.log_delta`: the rows of
:class:`~shuffledp.accounting.worst_case.families.sums.FamilySums` (none, all on x0 in both directions)
and :class:`~shuffledp.accounting.worst_case.families.third_value.OneValueView`, each a partial sum of
positive terms (a lower bound on the pair's delta, equal to it to ~e^-40 relative). The family's
maximum is :meth:`FamilySums.log_delta_max` (used by ``worst-case-lower``).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View
from shuffledp.accounting.worst_case.families.sums import FamilySums
from shuffledp.accounting.worst_case.families.third_value import OneValueView

__all__ = ["NoMatchView", "AllOnX0View", "ThirdValueView"]


def _log_multinomial(n: int, counts, log_probs) -> np.ndarray:
    """log M_n(counts) with cell log probabilities (the last cell takes the rest), elementwise."""
    counts = [np.asarray(c, dtype=float) for c in counts]
    rest = n - sum(counts)
    out = gammaln(n + 1.0) - gammaln(rest + 1.0)
    for c, log_p in zip(counts, log_probs[:-1]):
        with np.errstate(invalid="ignore"):
            out = out - gammaln(c + 1.0) + np.where(c > 0, c * log_p, 0.0)
    with np.errstate(invalid="ignore"):
        out = out + np.where(rest > 0, rest * log_probs[-1], 0.0)
    return np.where(rest >= 0, out, -np.inf)


def _log(x):
    with np.errstate(divide="ignore"):
        return np.log(x)


class _WholeSupport(View):
    """A member whose stream is its whole support, in chunks of one value of the first count."""

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        return LeftOut()

    def _family_log_delta(self, name, epsilons):
        family = FamilySums(self.setting)
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        return np.array([family.member_log_deltas(float(e))[name] for e in eps])


class NoMatchView(_WholeSupport):
    """ "none": no other user holds x0 or x1 (module docstring); k >= 3."""

    name = "worst-none"
    symmetric = True

    def outcomes(self, K: float = DEFAULT_K):
        s, krr = self.setting, self.setting.krr
        n, E = s.n_users, math.exp(s.epsilon_local)
        rho = math.exp(krr.log_rho)
        log_q, log_out = -krr.log_den, krr.log_1m2q
        c = np.arange(n + 1, dtype=float)
        for a in range(n + 1):
            base = _log_multinomial(n, (a, c), (log_q, log_q, log_out)) - math.log(n)
            yield OutcomeChunk(
                base + _log(E * a + c + rho * (n - a - c)), base + _log(a + E * c + rho * (n - a - c))
            )

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = False) -> np.ndarray:
        """Override: the family's row sum for "none" (a lower bound equal to the pair's delta to ~e^-40)."""
        return self._family_log_delta("none", epsilons)


class AllOnX0View(_WholeSupport):
    """ "all on x0": every other user holds x0 (module docstring). Not symmetric: its ADD direction is the
    dataset "all on x1"."""

    name = "worst-all-x0"

    def outcomes(self, K: float = DEFAULT_K):
        s, krr = self.setting, self.setting.krr
        n, E = s.n_users, math.exp(s.epsilon_local)
        c = np.arange(n + 1, dtype=float)
        for a in range(n + 1):
            log_p = _log_multinomial(n, (a, c), (krr.log_p, krr.log_q, krr.log_rest))
            yield OutcomeChunk(log_p, log_p + _log((a / E + E * c + n - a - c) / n))

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = False) -> np.ndarray:
        """Override: the family's row sums for both directions (D || D', D' || D), the larger."""
        return np.maximum(
            self._family_log_delta("all-x0 D||D'", epsilons), self._family_log_delta("all-x0 D'||D", epsilons)
        )


class ThirdValueView(_WholeSupport):
    """Every other user on one value x2 outside {x0, x1} (module docstring); k >= 3.

    Not a member of :class:`~shuffledp.accounting.worst_case.families.family.WorstFamilies`: its fast sum
    needs tables per (n, k, eps0) (about 0.3 s per epsilon at n = 10^4) and is evaluated only up to
    n = 10^4, and it has no binned privacy loss distribution, so the family's maximum and its composed
    PLDs would no longer agree. ``worst-case-lower`` adds this dataset itself where it is evaluated
    (docs/decisions/worst-case.md)."""

    name = "worst-third-value"
    symmetric = True

    def outcomes(self, K: float = DEFAULT_K):
        s, krr = self.setting, self.setting.krr
        n, E = s.n_users, math.exp(s.epsilon_local)
        log_q = -krr.log_den
        log_other = math.log(s.required_k - 3.0) + log_q if s.required_k > 3 else -math.inf
        h1, h2 = (g.ravel() for g in np.meshgrid(np.arange(n + 1.0), np.arange(n + 1.0), indexing="ij"))
        for h0 in range(n + 1):
            base = _log_multinomial(n, (h0, h1, h2), (log_q, log_q, krr.log_p, log_other)) - math.log(n)
            rest = n - h0 - h1 - h2
            yield OutcomeChunk(
                base + _log(E * h0 + h1 + h2 / E + rest), base + _log(h0 + E * h1 + h2 / E + rest)
            )

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = False) -> np.ndarray:
        """Override: :class:`~shuffledp.accounting.worst_case.families.third_value.OneValueView`'s sum (a lower
        bound equal to the pair's delta to ~e^-40; 0 is returned at eps = 0, see there)."""
        s = self.setting
        view = OneValueView(n_users=s.n_users, k=s.required_k, epsilon_local=s.epsilon_local)
        return np.array([view.log_delta(float(e)) for e in np.atleast_1d(np.asarray(epsilons, dtype=float))])
