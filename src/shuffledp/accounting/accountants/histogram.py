"""Delta of the full shuffled k-RR histogram: exact for one dataset, and a lower bound for many.

Setting as in :mod:`shuffledp.accounting.accountants.base`: u holds x0 in D(x0) and x1 in D(x1); ``n_x0`` of
the other n - 1 users hold x0. k-RR reports the true value w.p. p = e^eps0/(e^eps0 + k - 1) and each
other value w.p. q = 1/(e^eps0 + k - 1). Values are numbered x0 = 0, x1 = 1, x2 = 2, ...

``histogram-exact`` (EXACT, for the dataset "the other n - 1 - n_x0 users all hold one third value
x2"; for k = 2 no third value exists and they hold x1, so the histogram is (h0, n - h0) and its delta
is ``biswas-exact``'s). **Sufficient statistic.** Let Q be the law of the others' histogram and F the
joint law of the others' counts (G0, G2) in bins x0 and x2. Every other user reports each bin
outside {x0, x2} w.p. q whatever its value, so given (G0, G2) the others' reports outside {x0, x2}
are uniform multinomial over those k - 2 bins: Q(g) = F(g0, g2) mu(g_rest), mu the uniform
multinomial pmf. With h = u's report + others' and m = n - h0 - h2 (reports outside {x0, x2}):

    P0(h) = mu(h_rest) [p F(h0-1, h2) + q F(h0, h2-1) + q (k-2) F(h0, h2)]
    P1(h) = mu(h_rest) [q F(h0-1, h2) + q F(h0, h2-1) + (k-2) F(h0, h2) (q + (p - q) h1 / m)]

(using sum_{y outside {x0,x2}} mu(h_rest - e_y) = (k-2) mu(h_rest) and mu(h_rest - e_1) =
(k - 2)(h1/m) mu(h_rest)). The ratio P0/P1 depends on h only through (h0, h1, h2) -- equivalently
the counts of x0, x1, x2 and the total of the remaining k - 3 bins, n - h0 - h1 - h2 -- so the
hockey-stick divergence of the histogram equals that of the law of (h0, h1, h2), which is the
bracket times Bin(m, 1/(k-2))(h1) (the marginal of mu). F is built by exact dynamic programming
over the other users in log space; each cell's privacy loss comes from O(1) ratios of the same law
with the k-RR powers divided out (:func:`_loss`, not log P0 - log P1: issue 34, finding 7); the cells are
sorted by privacy loss once, and each delta is a
log-sum-exp of ``log P0 + log1mexp(eps - L)`` over the cells with L > eps. Cost O(n^3): n is limited
to :data:`MAX_USERS_HISTOGRAM_EXACT` (clear error beyond).

``histogram-pair-lower`` (LOWER bound on the full histogram's delta). The pair (h0, h1) is a
post-processing of the histogram, so its hockey-stick divergence is <= the histogram's (data
processing). Its law depends only on n_x0 for every dataset in which no other user holds x1 (for
k >= 3; each such user reports x0 and x1 w.p. q each whatever its value); for k = 2 the others off
x0 necessarily hold x1 and the pair is the whole histogram. Hence it lower-bounds the histogram
delta for *any* spread of the remaining users over x2, ..., x_{k-1}.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, log_expm1
from shuffledp._validation import check_choice
from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.binomial import log_binom_pmf
from shuffledp.accounting.views.cell_law import CellLaw
from shuffledp.accounting.views.single_bin.law import DIRECTIONS, SingleBinLaw, check_size

__all__ = ["HistogramExact", "HistogramPairLower", "MAX_USERS_HISTOGRAM_EXACT"]

#: largest n accepted by the O(n^3) full-histogram and pair computations
MAX_USERS_HISTOGRAM_EXACT = 300


def _joint_two_counts(groups) -> np.ndarray:
    """Log joint law of the counts (A, B) of reports in two bins, users added one at a time.

    ``groups`` is a list of (number of users, log P(report in A), log P(report in B), log P(other)).
    Returns an array F with F[a, b] = log P(A = a, B = b) over 0 <= a, b <= total users.
    """
    size = sum(count for count, *_ in groups)
    law = np.full((size + 1, size + 1), -np.inf)
    law[0, 0] = 0.0
    seen = 0
    with np.errstate(over="ignore"):  # sums of logs below -1.8e308 (eps0 ~ 1e308) are log 0 = -inf
        for count, log_a, log_b, log_other in groups:
            for _ in range(count):
                old = law[: seen + 1, : seen + 1].copy()
                new = np.full((seen + 2, seen + 2), -np.inf)
                new[: seen + 1, : seen + 1] = old + log_other
                new[1:, : seen + 1] = np.logaddexp(new[1:, : seen + 1], old + log_a)
                new[: seen + 1, 1:] = np.logaddexp(new[: seen + 1, 1:], old + log_b)
                seen += 1
                law[: seen + 1, : seen + 1] = new
    return law


def _shift(law: np.ndarray, axis: int) -> np.ndarray:
    """law evaluated at index - 1 along ``axis`` (-inf at index 0), same shape."""
    out = np.full_like(law, -np.inf)
    if axis == 0:
        out[1:] = law[:-1]
    else:
        out[:, 1:] = law[:, :-1]
    return out


def _loss(e0: float, on_x0: int, on_x2: int, size: int, valid, cell, fraction) -> np.ndarray:
    """Privacy loss log P0(h) / P1(h) of each cell of :meth:`HistogramExact._cell_law`, from O(1) quantities.

    log P0 - log P1 is a difference of two numbers of size |log P| (45 at eps0 = 0.05, n = 10, k = 1e6), so it
    carries ~|log P| ulp of absolute error, which a cell with loss just above eps turns into a large relative
    error of its term P0 (1 - e^(eps - loss)) (issue 34, finding 7: 2.0e-11 at eps = 0.015 from a cell with loss
    eps + 3e-4). Both brackets carry the same power of the k-RR probabilities: with G the others' joint law of
    (G0, G2) under per-user weights (1, e^-eps0, e^-eps0) on x0 and (e^-eps0, 1, e^-eps0) on x2 (each report's
    probability divided by p for x0 and x2 and by (k - 2) p for the other values, so F(g0, g2) = p^(g0 + g2)
    ((k - 2) p)^(n - 1 - g0 - g2) G(g0, g2); log G lies in [-(n - 1) eps0, (n - 1) log 3], no log q in it),

        P0 / P1 = (e^eps0 G_a + G_b + G_c) / (G_a + G_b + (1 + beta h1 / m) G_c),   beta = e^eps0 - 1,

    G_a = G(h0 - 1, h2), G_b = G(h0, h2 - 1), G_c = G(h0, h2). With the three scaled to at most 1, the loss is
    log1p(x), x = beta (G_a - (h1 / m) G_c) / B1, where |x| <= 1/2 (the loss is then formed to a few ulp of
    itself), and log B0 - log B1 elsewhere (|loss| >= log 1.5 there, the logs of size at most eps0 + log 3).
    """
    law = _joint_two_counts([(on_x0, 0.0, -e0, -e0), (on_x2, -e0, 0.0, -e0)])
    g = np.full((size, size), -np.inf)
    g[: law.shape[0], : law.shape[1]] = law
    g_a, g_b, g_c = _shift(g, 0)[valid], _shift(g, 1)[valid], g[valid]
    top = np.maximum(np.maximum(g_a, g_b), g_c)
    top = np.where(np.isfinite(top), top, 0.0)
    ga, gb, gc = (np.exp(x - top)[cell] for x in (g_a, g_b, g_c))  # each in [0, 1], one of them 1
    log_beta = float(log_expm1(e0))
    difference = ga - fraction * gc
    with np.errstate(divide="ignore", invalid="ignore"):
        log_b1 = np.logaddexp(np.log(ga + gb + gc), log_beta + np.log(fraction * gc))
        log_b0 = np.logaddexp(e0 + np.log(ga), np.log(gb + gc))
        log_x = log_beta + np.log(np.abs(difference)) - log_b1
        near = np.where(difference > 0, np.logaddexp(0.0, log_x), log1mexp(np.minimum(log_x, 0.0)))
        loss = np.where(log_x <= -math.log(2.0), near, log_b0 - log_b1)
    return np.where(difference == 0.0, 0.0, loss)


def _pair_loss(e0: float, on_x0: int, off_x0: int, size: int, log_rho: float) -> np.ndarray:
    """Privacy loss of each cell (h0, h1) of :meth:`HistogramPairLower._cell_law`, from O(1) quantities (as
    :func:`_loss`, finding 7). Every report's probability is divided by p for x0 and x1 and by 1 - 2q for the
    other values (k = 2: there are none), so the others' weights are (1, e^-eps0, rho) on x0 and (e^-eps0,
    e^-eps0, 1) off x0 (k = 2: (1, e^-eps0) and (e^-eps0, 1) for (x0, x1)), rho = (1 - p - q) / (1 - 2q), and

        P0 / P1 = (e^eps0 (G_a + rho G_c) + G_b) / (G_a + e^eps0 (G_b + rho G_c)),   the loss log1p(x),
        x = beta (G_a - G_b) / B1,

    G_a = G(h0 - 1, h1), G_b = G(h0, h1 - 1), G_c = G(h0, h1) (rho G_c is 0 for k = 2); log B0 - log B1
    where |x| > 1/2."""
    off_x1 = 0.0 if log_rho == -np.inf else -e0  # k = 2: the users off x0 hold x1
    law = _joint_two_counts(
        [(on_x0, 0.0, -e0, log_rho), (off_x0, -e0, off_x1, 0.0 if log_rho > -np.inf else -np.inf)]
    )
    g = np.full((size, size), -np.inf)
    g[: law.shape[0], : law.shape[1]] = law
    g_a, g_b = _shift(g, 0), _shift(g, 1)
    top = np.maximum(np.maximum(g_a, g_b), g)
    top = np.where(np.isfinite(top), top, 0.0)
    ga, gb, gc = np.exp(g_a - top), np.exp(g_b - top), np.exp(g - top)
    rho_gc = math.exp(log_rho) * gc
    log_beta = float(log_expm1(e0))
    difference = ga - gb
    with np.errstate(divide="ignore", invalid="ignore"):
        log_b0 = np.logaddexp(e0 + np.log(ga + rho_gc), np.log(gb))
        log_b1 = np.logaddexp(e0 + np.log(gb + rho_gc), np.log(ga))
        log_x = log_beta + np.log(np.abs(difference)) - log_b1
        near = np.where(difference > 0, np.logaddexp(0.0, log_x), log1mexp(np.minimum(log_x, 0.0)))
        loss = np.where(log_x <= -math.log(2.0), near, log_b0 - log_b1)
    return np.where(difference == 0.0, 0.0, loss)


class _HistogramAccountant(Accountant):
    needs_n_x0 = True

    def __init__(self, *, epsilon_local, n_users, k, n_x0=None, direction: str = "forward"):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        self.direction = check_choice(direction, "direction", DIRECTIONS)
        self._cells = None

    def _check_size(self):
        if self.setting.n_users > MAX_USERS_HISTOGRAM_EXACT:
            raise ValueError(
                f"`n_users` must be an integer in [1, {MAX_USERS_HISTOGRAM_EXACT}] for accountant {self.name!r} (its cost "
                f"grows as n^3); got {self.setting.n_users}. Use 'biswas-exact' for larger n."
            )

    def _cell_law(self) -> CellLaw:
        raise NotImplementedError

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        if self._cells is None:
            with np.errstate(over="ignore"):  # log-probabilities below -1.8e308 (eps0 ~ 1e308) are -inf
                self._cells = self._cell_law()
        if self.direction == "both":
            return np.maximum(
                self._cells.log_delta(epsilons, "forward"), self._cells.log_delta(epsilons, "reverse")
            )
        return self._cells.log_delta(epsilons, self.direction)

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", direction={self.direction!r})"


class HistogramExact(_HistogramAccountant):
    """Exact delta of the whole k-bin histogram for the dataset "n_x0 others on x0, the rest on x2".

    For k = 2 (no x2) the rest hold x1 and this equals ``biswas-exact``. ``direction`` as in
    ``biswas-exact``. n is limited to :data:`MAX_USERS_HISTOGRAM_EXACT` = 300 (O(n^3) work) except for k = 2, where
    ``biswas-exact``'s limit (10^9) applies. Every finite eps0 is accepted (log space throughout).
    """

    name = "histogram-exact"
    label = "full histogram, exact (n_x0 on x0, rest on a third value)"
    colour = "#44AA99"
    kind = BoundKind.EXACT
    scope = (
        "full k-bin histogram, one dataset: n_x0 other users on x0 and the remaining n - 1 - n_x0 "
        "on one third value x2 (on x1 when k = 2); the chosen direction"
    )
    reference = "hockey-stick divergence of the shuffled k-RR histogram via the sufficient statistic (h_x0, h_x1, h_x2)"

    def _cell_law(self) -> CellLaw:
        s = self.setting
        n, k, a = s.n_users, s.k, s.n_x0
        if k == 2:
            return None  # handled by the single-bin law below
        self._check_size()
        krr = s.krr
        log_p, log_q, log_rest = krr.log_p, krr.log_q, krr.log_rest
        others_rest = n - 1 - a
        # F[g0, g2]: others on x0 report x0 w.p. p, x2 w.p. q; others on x2 the reverse
        law = _joint_two_counts([(a, log_p, log_q, log_rest), (others_rest, log_q, log_p, log_rest)])
        size = n + 1
        f = np.full((size, size), -np.inf)
        f[: law.shape[0], : law.shape[1]] = law
        f_minus_0 = _shift(f, 0)  # F(h0 - 1, h2)
        f_minus_2 = _shift(f, 1)  # F(h0, h2 - 1)
        log_km2 = math.log(k - 2)
        common = np.logaddexp(f_minus_0 + log_q, f_minus_2 + log_q)  # q F(h0-1,h2) + q F(h0,h2-1)
        bracket0 = np.logaddexp(np.logaddexp(f_minus_0 + log_p, f_minus_2 + log_q), f + log_q + log_km2)
        h0, h2 = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
        m = n - h0 - h2
        valid = m >= 0
        h0, h2, m = h0[valid], h2[valid], m[valid]
        bracket0, common, f = bracket0[valid], common[valid], f[valid]
        # expand over h1 = 0..m
        repeats = m + 1
        cell = np.repeat(np.arange(m.size), repeats)
        h1 = np.arange(repeats.sum()) - np.repeat(np.cumsum(repeats) - repeats, repeats)
        m_cell = m[cell]
        log_pi = -math.log(k - 2)
        log_1mpi = math.log(k - 3) - math.log(k - 2) if k > 3 else -np.inf
        log_b = log_binom_pmf(h1, m_cell, log_pi, log_1mpi)
        fraction = np.where(m_cell > 0, h1 / np.maximum(m_cell, 1), 0.0)
        p, q = math.exp(log_p), math.exp(log_q)
        with np.errstate(divide="ignore"):
            log_last = f[cell] + log_km2 + np.log(q + (p - q) * fraction)
        log_p0 = log_b + bracket0[cell]
        log_p1 = log_b + np.logaddexp(common[cell], log_last)
        loss = _loss(s.epsilon_local, a, others_rest, size, valid, cell, fraction)
        with np.errstate(invalid="ignore"):  # cells of probability 0 on both sides (dropped by CellLaw)
            loss = np.where(
                np.isnan(loss), log_p0 - log_p1, loss
            )  # eps0 ~ 1e308: G underflows where F does not
        return CellLaw(log_p0, log_p1, s.epsilon_local, loss=loss)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        s = self.setting
        if s.k == 2:
            epsilons = self._checked_epsilons(epsilons)
            check_size(self.name, s.n_users)  # the single-bin law's limit (work ~ n p q)
            law = SingleBinLaw(epsilon_local=s.epsilon_local, n_users=s.n_users, k=2, n_x0=s.n_x0)
            if self.direction == "both":
                return np.maximum(
                    law.log_delta(epsilons, direction="forward"), law.log_delta(epsilons, direction="reverse")
                )
            return law.log_delta(epsilons, direction=self.direction)
        return super().log_delta_for_epsilon(epsilons)


class HistogramPairLower(_HistogramAccountant):
    """Exact delta of the pair (count of x0, count of x1): a LOWER bound on the histogram's delta.

    Valid for every dataset with n_x0 other users on x0 and none of the others on x1 (any spread of
    the rest over x2..x_{k-1}); for k = 2 the only such dataset. n <= :data:`MAX_USERS_HISTOGRAM_EXACT`.
    """

    name = "histogram-pair-lower"
    label = "full histogram, lower bound (pair counts)"
    colour = "#999933"
    kind = BoundKind.LOWER
    scope = (
        "lower bound on the full histogram's delta for every dataset with n_x0 other users on x0 and "
        "none of the others on x1 (any spread of the rest; k = 2: the rest on x1); the chosen direction"
    )
    reference = (
        "data processing: hockey-stick divergence of the (h_x0, h_x1) marginal of the shuffled k-RR histogram"
    )

    def _cell_law(self) -> CellLaw:
        s = self.setting
        self._check_size()
        n, k, a = s.n_users, s.k, s.n_x0
        krr = s.krr
        log_p, log_q, log_rest = krr.log_p, krr.log_q, krr.log_rest
        # others off x0: on x1 when k = 2 (report x1 w.p. p), otherwise off x1 (x1 w.p. q)
        off_to_x1 = log_p if k == 2 else log_q
        off_rest = -np.inf if k == 2 else krr.log_1m2q
        law = _joint_two_counts([(a, log_p, log_q, log_rest), (n - 1 - a, log_q, off_to_x1, off_rest)])
        size = n + 1
        g = np.full((size, size), -np.inf)
        g[: law.shape[0], : law.shape[1]] = law
        g0, g1 = _shift(g, 0), _shift(g, 1)
        log_p0 = np.logaddexp(np.logaddexp(g0 + log_p, g1 + log_q), g + log_rest)
        log_p1 = np.logaddexp(np.logaddexp(g0 + log_q, g1 + log_p), g + log_rest)
        loss = _pair_loss(s.epsilon_local, a, n - 1 - a, size, -np.inf if k == 2 else krr.log_rho).ravel()
        with np.errstate(invalid="ignore"):  # cells of probability 0 on both sides (dropped by CellLaw)
            loss = np.where(
                np.isnan(loss), (log_p0 - log_p1).ravel(), loss
            )  # eps0 ~ 1e308: G underflows, F not
        return CellLaw(log_p0.ravel(), log_p1.ravel(), s.epsilon_local, loss=loss)
