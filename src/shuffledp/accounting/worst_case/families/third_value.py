"""Exact histogram delta of one dataset at every n: every other user on ONE value x2 outside {x0, x1}.

A LOWER bound on the worst case over datasets (it is one pair of neighbouring datasets), used by
``worst-case-lower`` for k >= 4. Unlike the "none" member of :mod:`shuffledp.accounting.worst_case.families.sums`,
which keeps only the (h0, h1) marginal, this is the delta of the whole shuffled histogram.

**Sufficiency.** The k - 3 values x3 .. receive every user's report with probability q each whatever
its value, so given their total they are uniform multinomial with the same law under D and D';
(h0, h1, h2) is sufficient, and its law under D is the four-cell multinomial M_n(h) with cell
probabilities (q, q, p, (k - 3) q) tilted by the differing user u.

**Closed form of the likelihood.** With G = M_{n-1} (the n - 1 others) and u reporting x0 w.p. p, x1 w.p. q,
x2 w.p. q and the rest w.p. (k - 3) q under D: G(h - e_j) = M_n(h) h_j / (n pi_j), so with E = e^eps0,

    P(h) = M_n(h) [E h0 + h1 + h2 / E + h_S] / n,   Q(h) = M_n(h) [h0 + E h1 + h2 / E + h_S] / n,

h_S = n - h0 - h1 - h2, and P - e^eps Q is LINEAR in h:

    delta(eps) = ((E - 1) / n) E_M[(h0 - e^eps h1 + (e^eps - 1) h2 / E - (e^eps - 1) n / (E - 1))_+].

Conditioning on s = h0 + h1 ~ Bin(n, 2q); given s, h0 ~ Bin(s, 1/2) and h2 ~ Bin(n - s, pi2),
pi2 = p / (1 - 2q), independently. With kappa = (e^eps - 1) / E the bracket is kappa (h2 - theta), so

    delta = ((E - 1) kappa / n) sum_{s, h0} Bin(n, 2q)(s) Bin(s, 1/2)(h0) E[(h2 - theta)_+],
    theta = (e^eps h1 - h0 + (e^eps - 1) n / (E - 1)) / kappa,  h1 = s - h0,

one closed-form expected excess per (s, h0) (:func:`shuffledp.accounting.numerics.binomial.log_excess_above`,
with theta - (n - s) pi2 = ((e^eps - 1)(n / (E - 1) - (n - s) pi2 / E + h1) + (h1 - h0)) / kappa passed
exactly). This order keeps the summed rectangle small: its sides are the spreads of s and of h0 | s,
O(sqrt(n q)) each. At eps = 0 (kappa = 0) the loss does not involve h2 and 0 is returned (the "none"
member of :mod:`shuffledp.accounting.worst_case.families.sums` is exact there). The direction does not matter
(relabelling x0 <-> x1 maps the dataset to itself). Checked in the tests against brute force, against
:func:`shuffledp.accounting.worst_case.exact.enumeration.third_value_delta` (a = b = 0), and against the other
conditioning order (h2, then h0 + h1, then h0).

**Tables first.** For k >= 4 the sum is first formed from per-(n, k, eps0) tables shared
across epsilons (:mod:`shuffledp.accounting.worst_case.families.one_value_tables`: a certified lower value, equal
to the sum below to ~1e-13 relative); where their fixed windows do not hold all but e^-40 of it (deep
tails), the adaptive rectangle below is used. A caller asking for ONE epsilon alone passes
``tables=False``: building the tables costs several single sums (n = 10^4, k = 15, eps0 = 2.37, eps = 0.1:
0.38 s against 0.055 s for the adaptive sum; ``worst-case-lower`` does so for a lone epsilon).
Both paths are lower values of the same sum (equal to ~1e-13 relative).

**Summation (a lower value).** A rectangle of rows s and, per row, columns h0 = c(s) + j (c(s) the
row's mean s / 2 moved into the region theta < n - s where the excess is positive) is widened, doubling, until its
edge rows and columns lie e^-40 below its largest term, or the range ends. Every term is positive, so
whatever is left out (also when the rectangle stops at :data:`MAX_CELLS_THIRD_VALUE` cells, or when its peak is below
e^-700 and so is the member's certified Chernoff bound, :meth:`OneValueTables.log_bound`) only makes the true
value larger: the value returned is a partial sum, a lower bound. A small peak alone does not stop the
widening: where the sum's mass lies many standard deviations of s above its mean (large k, tiny delta) the
first rectangle holds only the rising edge of the terms, and stopping there returned e^-754 for a sum of
e^-142.76 (n = 2512, k = 501, eps0 = 1, eps = 0.0482), far below the tables' value of the same sum.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import logsumexp
from shuffledp.accounting.numerics.binomial import LogPmfRange, log_excess_above, log_pmf
from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.families.one_value_tables import OneValueTables

__all__ = ["OneValueView", "MAX_CELLS_THIRD_VALUE"]

#: terms (s, h0) summed at most per epsilon (time and memory bounded; beyond, a partial sum)
MAX_CELLS_THIRD_VALUE = 4_000_000
_LOG_EDGE = 40.0
_LOG_BEYOND_PROMISE = -700.0
_LOG_HALF = math.log(0.5)


class OneValueView:
    """log delta of "every other user on x2" (module doc) for one (n, k >= 3, eps0); the pmf of s is
    cached across epsilons."""

    def __init__(self, *, n_users: int, k: int, epsilon_local: float):
        if k < 3:
            raise ValueError(f"`k` must be >= 3 for a value outside {{x0, x1}}; got {k!r}.")
        self.n_users, self.k, self.epsilon_local = int(n_users), int(k), float(epsilon_local)
        krr = KrrParams.of(self.epsilon_local, self.k)
        self._s = LogPmfRange(self.n_users, krr.log_2q, krr.log_1m2q)  # s = h0 + h1 ~ Bin(n, 2q)
        self._q2 = math.exp(krr.log_2q)
        # h2 | s ~ Bin(n - s, pi2), pi2 = p / (1 - 2q) = e^eps0 / (e^eps0 + k - 3)
        self._log_pi2, self._log_1mpi2 = krr.third_value_logs
        self._pi2 = math.exp(self._log_pi2)
        self.tables = OneValueTables(
            n_users=self.n_users, k=self.k, epsilon_local=self.epsilon_local
        )  # k >= 4

    def _terms(self, eps: float, s: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """log of each term (s, h0 = c(s) + offset) of the sum below, -inf outside the support or where it
        is 0:  delta = ((E - 1) kappa / n) sum_{s, h0} Bin(n, 2q)(s) Bin(s, 1/2)(h0) E[(h2 - theta)_+]."""
        n, E = self.n_users, math.exp(self.epsilon_local)
        em1, ee = math.expm1(eps), math.exp(eps)
        kappa = em1 / E
        big_c = em1 * n / math.expm1(self.epsilon_local)
        trials = n - s  # h2 | s ~ Bin(n - s, pi2)
        h0_min = (big_c + ee * s - kappa * trials) / (1.0 + ee)  # the excess is positive only above it
        centre = np.clip(np.maximum(np.round(0.5 * s), np.floor(h0_min) + 1.0), 0.0, s)
        h0 = centre[:, None] + offsets[None, :]
        s2 = np.broadcast_to(s[:, None], h0.shape)
        inside = (h0 >= 0) & (h0 <= s2) & (h0 > h0_min[:, None])
        out = np.full(h0.shape, -np.inf)
        if not inside.any():
            return out
        a, si = h0[inside], s2[inside]
        m = n - si
        # theta - m pi2 = ((e^eps - 1)(n / (E - 1) - m pi2 / E + h1) + (h1 - h0)) / kappa: e^eps h1 - h0
        # split into an integer and a small part (no cancellation as eps -> 0)
        h1 = si - a
        with np.errstate(over="ignore"):  # eps0 -> 0: d overflows to inf, a term of 0 (this is a lower value)
            d = (em1 * (n / math.expm1(self.epsilon_local) - m * self._pi2 / E + h1) + (h1 - a)) / kappa
        theta = m * self._pi2 + d
        weight = np.broadcast_to(self._s.of(s)[:, None], h0.shape)[inside]
        out[inside] = (
            weight
            + log_pmf(a, si, _LOG_HALF, _LOG_HALF)
            + log_excess_above(theta, m, self._log_pi2, self._log_1mpi2, d)
        )
        return out

    def log_delta(self, eps: float, *, tables: bool = True) -> float:
        """log delta (D || D') of the dataset at ``eps`` (a certified partial sum: module doc); ``tables``
        False: the adaptive sum even where the tables would serve (one epsilon alone: module doc)."""
        n, eps = self.n_users, float(eps)
        # at eps = 0 the loss does not involve h2 (kappa = 0): the delta is the (h0, h1) marginal's, the
        # "none" member of views.worst; 0 is returned here (a lower value)
        if eps >= self.epsilon_local or eps <= 0.0 or n < 1:
            return -np.inf
        if self.k >= 4 and tables:  # the tables shared across epsilons, where they certify e^-40
            fast = self.tables.log_delta(eps)
            if fast is not None:
                return fast
        sd = math.sqrt(n * self._q2 * (1.0 - self._q2))
        centre = int(round(n * self._q2))
        lo, hi = max(0, centre - int(8.0 * sd + 32.0)), min(n, centre + int(8.0 * sd + 32.0))
        width = int(8.0 * math.sqrt(0.25 * n * self._q2) + 32.0)
        beyond_promise: bool | None = None  # the certified bound below e^-700? (asked once, when needed)
        while True:
            rows = np.arange(lo, hi + 1, dtype=float)
            offsets = np.arange(-width, width + 1, dtype=float)
            terms = self._terms(eps, rows, offsets)
            peak = float(np.max(terms))
            floor = peak - _LOG_EDGE
            grow_lo = lo > 0 and (peak == -np.inf or np.max(terms[0]) > floor)
            grow_hi = hi < n and (peak == -np.inf or np.max(terms[-1]) > floor)
            grow_t = width < n and (peak == -np.inf or max(np.max(terms[:, 0]), np.max(terms[:, -1])) > floor)
            if beyond_promise is None and np.isfinite(peak) and peak < _LOG_BEYOND_PROMISE:
                # a small peak is no reason to stop while the terms still rise towards an edge (the mass can
                # lie beyond the first rectangle: n = 2512, k = 501, eps0 = 1, eps = 0.048: its peak e^-743
                # on the edge row s = 67, the largest term e^-132 at s = 72); only a certified bound below e^-700
                beyond_promise = self.tables.log_bound(eps) < _LOG_BEYOND_PROMISE
            stop = (
                not (grow_lo or grow_hi or grow_t)
                or bool(beyond_promise)
                or terms.size >= MAX_CELLS_THIRD_VALUE
            )
            if stop:
                if peak == -np.inf:
                    return -np.inf
                log_scale = (
                    math.log(math.expm1(self.epsilon_local))
                    + math.log(math.expm1(eps))
                    - self.epsilon_local
                    - math.log(n)
                )
                return float(logsumexp(terms[np.isfinite(terms)])) + log_scale
            span = hi - lo + 1
            if grow_lo:
                lo = max(0, lo - span)
            if grow_hi:
                hi = min(n, hi + span)
            if grow_t:
                width = min(n, 2 * width)
