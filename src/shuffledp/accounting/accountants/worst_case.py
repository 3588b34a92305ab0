"""``worst-case-lower``: a LOWER bound on the worst case over datasets of the shuffled k-RR histogram's delta.

The histogram's delta for any one pair of neighbouring datasets is at most the worst case, and a
post-processing (a marginal) of the histogram has at most the histogram's delta. So the exact delta of
a marginal of the real shuffled histogram (not an adversary's view) for explicit datasets is a lower
bound on the worst case; this accountant returns the largest over a family of datasets and both
directions. The differing user u holds x0 in D and x1 in D'; the family is:

* **"none"** (k >= 3): no other user holds x0 or x1. The (h_x0, h_x1) marginal has
  P(a, c) = Tri_n(a, c) (e^eps0 a + c + rho (n - s)) / n and Q with a and c swapped, Tri_n the trinomial
  law over n trials with probabilities (q, q), s = a + c, rho = (k - 2) / (e^eps0 + k - 3) (a
  trinomial-ratio computation). This is the weak adversary's view with the count M of other values
  replaced by its conditional mean, so by Jensen it never exceeds ``weak-adversary``. For k = 3 the pair
  is the whole histogram; for k >= 4 it is a lower bound on that dataset's histogram delta.
  delta(eps) = (lambda / n) sum_s Bin(n, 2q)(s) E[(A - t_s)_+], A ~ Bin(s, 1/2),
  lambda = (e^eps0 - 1)(1 + e^eps), t_s = (s (e^(eps + eps0) - 1) + (e^eps - 1) rho (n - s)) / lambda.
  Symmetric in the two directions.
* **"all on x0"**: every other user holds x0 (and, mirrored by relabelling, "all on x1"). The pair
  (h_x0, h_x1) is sufficient here (the other values have the same law under both), so this is the
  exact histogram delta of that dataset. With S ~ Bin(n, p + q), A | S ~ Bin(S, e^eps0 / (e^eps0 + 1)):
  D || D': (e^eps (e^eps0 - e^-eps0) / n) E[(A - t_S)_+],
  D' || D: ((e^eps0 - e^-eps0) / n) E[(t'_S - A)_+],
  t_s = (s + (n - s) e^-eps0 - n e^(-eps - eps0)) / (1 - e^(-2 eps0)),
  t'_s = (s + (n - s) e^-eps0 - n e^(eps - eps0)) / (1 - e^(-2 eps0)).
  "All on x1" in one direction equals "all on x0" in the other, so both directions cover both datasets.

Every sum over s is one closed-form expected excess per s (:mod:`shuffledp.accounting.numerics.binomial`),
over a window of s around the mean widened on each side until its edge term is e^-40 below the
largest term (the terms are unimodal in s; each widening step is sized from the slope of the log
terms at that edge, so the window ends a little beyond that point instead of doubling); what lies outside only makes the true value larger, so it
is dropped. A window also stops growing beyond 2^20 terms or once its peak is below e^-700 (outside
the accuracy promise; the partial sum is still a lower bound). delta = 0 for eps >= eps0 comes out of
the sums (t_s >= s there).

On every tiny case enumerated in the tests this bound lies below the brute-force worst case over all
datasets (for k >= 3 the worst case is usually "none", for k = 2 "all on x1" in one direction); for
k = 2 the family misses the mixed datasets, and the bracket against ``weak-adversary`` is wider there
(ratio up to ~1.4, the weak adversary being the loose side); ``worst-case-upper`` (the certified maximum
over every k = 2 dataset) closes it to <= 1.001 for n <= 20000 (<= 1.0001 measured at n = 100000, eps0 in {0.5, 1, 4, 8}, delta = 1e-6); see docs/reproduction-notes.md.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.binomial import LogPmfRange, log_excess_above, log_excess_below
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.numerics.chernoff import ChernoffBound
from shuffledp.accounting.params import KrrParams, check_epsilon_local_finite

__all__ = ["WorstCaseLower", "FAMILY"]

#: the datasets (and directions) the lower bound maximises over
FAMILY = ("none", "all-x0 D||D'", "all-x0 D'||D")
_LOG_EDGE = 40.0  # a window is widened while its edge term is within e^40 of the largest
_LOG_BEYOND_PROMISE = -700.0  # below e^-700 (~1e-304) a lower value is returned without widening
_MAX_WINDOW = 1 << 20  # rows summed per family member at most


def _growth_step(values, peak, width, from_low):
    """Rows to add on one side of a window of log terms so that its edge falls to peak - _LOG_EDGE.

    Extrapolates the slope of the last rows at that edge linearly (the log terms are close to concave,
    so this overshoots rather than undershoots); at least 16, at most the current width (doubling).
    Only the speed depends on this: the window keeps growing until its edges are low enough."""
    if not np.isfinite(peak) or values.size < 3:
        return max(16, width)
    edge, inner = (values[0], values[2]) if from_low else (values[-1], values[-3])
    slope = 0.5 * (inner - edge)  # log-decrease per row outwards
    if not (np.isfinite(edge) and np.isfinite(slope)) or slope <= 0:
        return max(16, width)
    need = (edge - (peak - _LOG_EDGE)) / slope
    return int(min(max(16, width), max(16, math.ceil(1.25 * need) + 16)))


class WorstCaseLower(BracketedMixin, Accountant):
    """Largest exact delta over the family "none" / "all on x0" / "all on x1" (both directions); see module."""

    name = "worst-case-lower"
    kind = BoundKind.LOWER
    scope = (
        "lower bound on the worst case over all neighbouring datasets: max over both directions of the exact "
        "histogram delta when every other user holds x0 (or x1), and of the (h_x0, h_x1) marginal when none "
        "holds x0 or x1 (k >= 3; the whole histogram for k = 3)"
    )
    reference = (
        "this package: exact marginals of the shuffled k-RR histogram for explicit datasets (data processing); "
        "cf. Koskela, Heikkila, Honkela (2021) Thm 4 for the weak adversary it brackets"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._logs = KrrParams.of(self.setting.epsilon_local, self.setting.k)
        # the weights of the sums over s do not depend on epsilon: cached across epsilons
        self._weights: dict[str, LogPmfRange] = {}

    def _weight(self, name: str, log_pi: float, log_1mpi: float) -> LogPmfRange:
        if name not in self._weights:
            self._weights[name] = LogPmfRange(self.setting.n_users, log_pi, log_1mpi)
        return self._weights[name]

    def _sum_rows(self, rows, n_max, mean, var, s_min):
        """log sum over s in [0, n_max] of ``rows(s)`` (log values of a unimodal sequence, zero for s below
        ``s_min``): a window around the mean (moved into s >= s_min) widened on each side until its edge
        row is e^-40 below the largest row or the range ends. Memory stays O(width of the window)."""
        s_min = max(0, int(math.floor(s_min)))
        if s_min > n_max:
            return -np.inf
        centre = min(max(mean, s_min), n_max)
        half = 8.0 * math.sqrt(var) + 32.0
        lo, hi = max(s_min, int(centre - half)), min(n_max, int(math.ceil(centre + half)))
        values = rows(np.arange(lo, hi + 1, dtype=float))
        while True:
            peak = float(np.max(values))
            if peak == -np.inf and lo == s_min and hi == n_max:
                return -np.inf
            # an all-zero window (every term 0) is widened on both sides until a term appears
            grow_lo = lo > s_min and (peak == -np.inf or values[0] > peak - _LOG_EDGE)
            grow_hi = hi < n_max and (peak == -np.inf or values[-1] > peak - _LOG_EDGE)
            # a lower bound may stop anywhere: beyond the accuracy promise (peak below e^-700) or at
            # _MAX_WINDOW rows (memory and time bounded) the partial sum is returned as it is
            if not (grow_lo or grow_hi) or (np.isfinite(peak) and peak < _LOG_BEYOND_PROMISE) \
                    or hi - lo + 1 >= _MAX_WINDOW:
                return float(logsumexp(values))
            if grow_lo:
                new_lo = max(s_min, lo - _growth_step(values, peak, hi - lo + 1, from_low=True))
                values = np.concatenate([rows(np.arange(new_lo, lo, dtype=float)), values])
                lo = new_lo
            if grow_hi:
                new_hi = min(n_max, hi + _growth_step(values, peak, hi - lo + 1, from_low=False))
                values = np.concatenate([values, rows(np.arange(hi + 1, new_hi + 1, dtype=float))])
                hi = new_hi

    def _member_none(self, eps):
        s_set, logs = self.setting, self._logs
        n = s_set.n_users
        log_lam = logs.log_beta + float(np.logaddexp(0.0, eps))
        rho = math.exp(logs.log_rho)
        half = math.log(0.5)
        c_per_s, extra = math.expm1(eps + s_set.epsilon_local), math.expm1(eps) * rho
        # t_s - s / 2 = nu (s ((e^eps0 + 1) / 2 - rho) + rho n) / lambda, without cancellation
        slope = 0.5 * (math.exp(s_set.epsilon_local) + 1.0) - rho
        weight = self._weight("none", logs.log_2q, logs.log_1m2q)

        def rows(s):
            t = (s * c_per_s + extra * (n - s)) / math.exp(log_lam)
            d = math.expm1(eps) * (s * slope + rho * n) / math.exp(log_lam)
            return weight.of(s) + log_excess_above(t, s, half, half, d)

        p = math.exp(logs.log_2q)
        # E[(A - t_s)_+] > 0 needs t_s < s, i.e. s > extra n / (lambda - c + extra)
        s_min = extra * n / (math.exp(log_lam) - c_per_s + extra) if extra > 0 else 0.0
        return self._sum_rows(rows, n, n * p, n * p * (1 - p), s_min) + log_lam - math.log(n)

    def _members_all_x0(self, eps):
        s_set = self.setting
        n, e0, k = s_set.n_users, s_set.epsilon_local, s_set.k
        krr = self._logs
        log_ppq = float(np.logaddexp(e0, 0.0)) - krr.log_den  # p + q
        log_rest = krr.log_rest  # 1 - p - q
        # pi0 = e^eps0 / (e^eps0 + 1) (KrrParams.log_alpha), in the form it had when the CLI grid of
        # tests/golden was recorded (its last bit differs from log_alpha's at some eps0)
        log_pi0, log_1mpi0 = e0 - float(np.logaddexp(e0, 0.0)), -float(np.logaddexp(e0, 0.0))
        denominator = -math.expm1(-2.0 * e0)  # 1 - e^(-2 eps0)
        log_scale = e0 + float(log1mexp(-2.0 * e0)) - math.log(n)  # log((e^eps0 - e^-eps0) / n)

        cached = self._weight("all-x0", log_ppq, log_rest) if k > 2 else None

        def weights(s):
            return cached.of(s) if k > 2 else np.where(s == n, 0.0, -np.inf)

        # Work with B = S - A ~ Bin(s, 1 - pi0) (small mean when eps0 is large), so that no quantity of
        # size s is subtracted from another: with x = e^-eps0 and D = 1 - x^2,
        #   forward  E[(A - t_s)_+]  = E[(u_s - B)_+],  u_s  = s - t_s  = x (n (e^-eps - 1) + s (1 - x)) / D,
        #   reverse  E[(t'_s - A)_+] = E[(B - u'_s)_+], u'_s = s - t'_s = x (n (e^eps - 1) + s (1 - x)) / D,
        # and u - E[B] = n x (e^-+eps - 1) / D exactly.
        x = math.exp(-e0)
        d_forward = n * x * math.expm1(-eps) / denominator
        d_reverse = n * x * math.expm1(eps) / denominator

        large_eps = eps > math.log(2.0)

        def forward(s):
            # n (e^-eps - 1) + s (1 - x): for eps > log 2 as (s - n) + n e^-eps - s x (exact integer part,
            # no difference of two numbers of size n when the sum is small, e.g. eps near a large eps0)
            inner = ((s - n) + n * math.exp(-eps) - s * x) if large_eps else (n * math.expm1(-eps) + s * (1.0 - x))
            u = x * inner / denominator
            return weights(s) + log_excess_below(u, s, log_1mpi0, log_pi0, d_forward)

        def reverse(s):
            u = x * (n * math.expm1(eps) + s * (1.0 - x)) / denominator
            return weights(s) + log_excess_above(u, s, log_1mpi0, log_pi0, d_reverse)

        p = math.exp(log_ppq)
        mean, var = n * p, n * p * (1 - p)
        # terms vanish unless t_s < s (forward) or t'_s > 0 (reverse): s above these
        s_min_forward = n * math.expm1(-eps) / math.expm1(-e0)
        s_min_reverse = n * math.expm1(eps) / math.expm1(e0)
        return (self._sum_rows(forward, n, mean, var, s_min_forward) + eps + log_scale,
                self._sum_rows(reverse, n, mean, var, s_min_reverse) + log_scale)

    def member_log_deltas(self, eps: float) -> dict[str, float]:
        """log delta of each family member at ``eps`` (the accountant returns their maximum)."""
        if eps >= self.setting.epsilon_local:
            return {name: -np.inf for name in FAMILY}
        forward, reverse = self._members_all_x0(float(eps))
        none = self._member_none(float(eps)) if self.setting.k > 2 else -np.inf
        return {"none": none, "all-x0 D||D'": forward, "all-x0 D'||D": reverse}

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:
        # a lower bound: what the windows leave out is simply dropped (the true value is only larger)
        return max(self.member_log_deltas(eps).values()), -np.inf

    def _chernoff(self) -> ChernoffBound:
        if getattr(self, "_chernoff_bound", None) is None:
            s = self.setting
            self._chernoff_bound = ChernoffBound(n=s.n_users, k=s.k, epsilon_local=s.epsilon_local)
        return self._chernoff_bound

    def _epsilon_hint(self, log_target: float) -> float | None:
        """The weak adversary's Chernoff bound bounds every dataset's delta, these included: where it
        meets the target so does this lower bound (a certified upper end for the search)."""
        return self._chernoff().crossing(log_target, 1e-4)

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        if not np.isfinite(log_value):
            return None
        slack = self._chernoff().log_delta(eps) - log_value
        return self._chernoff().crossing(log_target + max(slack, 0.0), 1e-8)
