"""The cells of the full shuffled k-RR histogram for one dataset pair (:class:`HistogramView`, the view of
``histogram-exact`` for k >= 3) and of the pair of counts (h_x0, h_x1) (:class:`PairCountsView`, the view of
``histogram-pair-lower``); the derivations (sufficient statistic, data processing) are in
:mod:`shuffledp.accounting.accountants.histogram`'s docstring. Each cell's privacy loss is formed from O(1)
ratios of the same law with the k-RR powers divided out (:func:`_loss`, :func:`_pair_loss`), not as
log P0 - log P1. Both are exact (every cell enumerated), O(n^3) work: n is limited to :data:`MAX_USERS_HISTOGRAM_EXACT`.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, log_expm1
from shuffledp.accounting.numerics.binomial import log_binom_pmf
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.histogram.cells import CellView, SortedCells, joint_two_counts, shifted

__all__ = ["HistogramView", "PairCountsView", "MAX_USERS_HISTOGRAM_EXACT", "check_cells_size"]

#: largest n accepted by the O(n^3) full-histogram and pair computations
MAX_USERS_HISTOGRAM_EXACT = 300


def check_cells_size(setting: ShuffleSetting, name: str) -> None:
    """Refuse n above :data:`MAX_USERS_HISTOGRAM_EXACT` in one line naming the accountant.

    Args:
        setting: the setting.
        name: the accountant's name (for the message).

    Raises:
        ValueError: ``n_users`` above :data:`MAX_USERS_HISTOGRAM_EXACT`.
    """
    if setting.n_users > MAX_USERS_HISTOGRAM_EXACT:
        raise ValueError(
            f"`n_users` must be an integer in [1, {MAX_USERS_HISTOGRAM_EXACT}] for accountant {name!r} (its cost "
            f"grows as n^3); got {setting.n_users}. Use 'biswas-exact' for larger n."
        )


def _loss(epsilon_local: float, on_x0: int, on_x2: int, size: int, valid, cell, fraction) -> np.ndarray:
    """Privacy loss log P0(h) / P1(h) of each cell of :meth:`HistogramView.cells`, from O(1) quantities.

    log P0 - log P1 is a difference of two numbers of size |log P| (45 at eps0 = 0.05, n = 10, k = 1e6), so it
    carries ~|log P| ulp of absolute error, which a cell with loss just above eps turns into a large relative
    error of its term P0 (1 - e^(eps - loss)) (2.0e-11 at eps = 0.015 from a cell with loss
    eps + 3e-4). Both brackets carry the same power of the k-RR probabilities: with G the others' joint law of
    (G0, G2) under per-user weights (1, e^-eps0, e^-eps0) on x0 and (e^-eps0, 1, e^-eps0) on x2 (each report's
    probability divided by p for x0 and x2 and by (k - 2) p for the other values, so F(g0, g2) = p^(g0 + g2)
    ((k - 2) p)^(n - 1 - g0 - g2) G(g0, g2); log G lies in [-(n - 1) eps0, (n - 1) log 3], no log q in it),

        P0 / P1 = (e^eps0 G_a + G_b + G_c) / (G_a + G_b + (1 + beta h1 / m) G_c),   beta = e^eps0 - 1,

    G_a = G(h0 - 1, h2), G_b = G(h0, h2 - 1), G_c = G(h0, h2). With the three scaled to at most 1, the loss is
    log1p(x), x = beta (G_a - (h1 / m) G_c) / B1, where |x| <= 1/2 (the loss is then formed to a few ulp of
    itself), and log B0 - log B1 elsewhere (|loss| >= log 1.5 there, the logs of size at most eps0 + log 3).
    """
    law = joint_two_counts(
        [(on_x0, 0.0, -epsilon_local, -epsilon_local), (on_x2, -epsilon_local, 0.0, -epsilon_local)]
    )
    g = np.full((size, size), -np.inf)
    g[: law.shape[0], : law.shape[1]] = law
    g_a, g_b, g_c = shifted(g, 0)[valid], shifted(g, 1)[valid], g[valid]
    top = np.maximum(np.maximum(g_a, g_b), g_c)
    top = np.where(np.isfinite(top), top, 0.0)
    ga, gb, gc = (np.exp(x - top)[cell] for x in (g_a, g_b, g_c))  # each in [0, 1], one of them 1
    log_beta = float(log_expm1(epsilon_local))
    difference = ga - fraction * gc
    with np.errstate(divide="ignore", invalid="ignore"):
        log_b1 = np.logaddexp(np.log(ga + gb + gc), log_beta + np.log(fraction * gc))
        log_b0 = np.logaddexp(epsilon_local + np.log(ga), np.log(gb + gc))
        log_x = log_beta + np.log(np.abs(difference)) - log_b1
        near = np.where(difference > 0, np.logaddexp(0.0, log_x), log1mexp(np.minimum(log_x, 0.0)))
        loss = np.where(log_x <= -math.log(2.0), near, log_b0 - log_b1)
    return np.where(difference == 0.0, 0.0, loss)


def _pair_loss(epsilon_local: float, on_x0: int, off_x0: int, size: int, log_rho: float) -> np.ndarray:
    """Privacy loss of each cell (h0, h1) of :meth:`PairCountsView.cells`, from O(1) quantities (as
    :func:`_loss`). Every report's probability is divided by p for x0 and x1 and by 1 - 2q for the
    other values (k = 2: there are none), so the others' weights are (1, e^-eps0, rho) on x0 and (e^-eps0,
    e^-eps0, 1) off x0 (k = 2: (1, e^-eps0) and (e^-eps0, 1) for (x0, x1)), rho = (1 - p - q) / (1 - 2q), and

        P0 / P1 = (e^eps0 (G_a + rho G_c) + G_b) / (G_a + e^eps0 (G_b + rho G_c)),   the loss log1p(x),
        x = beta (G_a - G_b) / B1,

    G_a = G(h0 - 1, h1), G_b = G(h0, h1 - 1), G_c = G(h0, h1) (rho G_c is 0 for k = 2); log B0 - log B1
    where |x| > 1/2."""
    off_x1 = 0.0 if log_rho == -np.inf else -epsilon_local  # k = 2: the users off x0 hold x1
    law = joint_two_counts(
        [
            (on_x0, 0.0, -epsilon_local, log_rho),
            (off_x0, -epsilon_local, off_x1, 0.0 if log_rho > -np.inf else -np.inf),
        ]
    )
    g = np.full((size, size), -np.inf)
    g[: law.shape[0], : law.shape[1]] = law
    g_a, g_b = shifted(g, 0), shifted(g, 1)
    top = np.maximum(np.maximum(g_a, g_b), g)
    top = np.where(np.isfinite(top), top, 0.0)
    ga, gb, gc = np.exp(g_a - top), np.exp(g_b - top), np.exp(g - top)
    rho_gc = math.exp(log_rho) * gc
    log_beta = float(log_expm1(epsilon_local))
    difference = ga - gb
    with np.errstate(divide="ignore", invalid="ignore"):
        log_b0 = np.logaddexp(epsilon_local + np.log(ga + rho_gc), np.log(gb))
        log_b1 = np.logaddexp(epsilon_local + np.log(gb + rho_gc), np.log(ga))
        log_x = log_beta + np.log(np.abs(difference)) - log_b1
        near = np.where(difference > 0, np.logaddexp(0.0, log_x), log1mexp(np.minimum(log_x, 0.0)))
        loss = np.where(log_x <= -math.log(2.0), near, log_b0 - log_b1)
    return np.where(difference == 0.0, 0.0, loss)


class HistogramView(CellView):
    """The full k-bin histogram (k >= 3) for the dataset "n_x0 others on x0, the rest on one third value x2":
    its cells (h0, h1, h2) (module docstring). ``setting.n_x0`` is required."""

    name = "histogram"
    #: the accountant named in a size refusal
    accountant = "histogram-exact"

    def cells(self) -> SortedCells:
        """The cells (h0, h1, h2) with their two laws and exact losses (module docstring)."""
        s = self.setting
        n, k, a = s.n_users, s.required_k, s.required_n_x0
        check_cells_size(s, self.accountant)
        krr = s.krr
        log_p, log_q, log_rest = krr.log_p, krr.log_q, krr.log_rest
        others_rest = n - 1 - a
        # F[g0, g2]: others on x0 report x0 w.p. p, x2 w.p. q; others on x2 the reverse
        law = joint_two_counts([(a, log_p, log_q, log_rest), (others_rest, log_q, log_p, log_rest)])
        size = n + 1
        f = np.full((size, size), -np.inf)
        f[: law.shape[0], : law.shape[1]] = law
        f_minus_0 = shifted(f, 0)  # F(h0 - 1, h2)
        f_minus_2 = shifted(f, 1)  # F(h0, h2 - 1)
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
        with np.errstate(
            invalid="ignore"
        ):  # cells of probability 0 on both sides (dropped by SortedCells.of)
            loss = np.where(
                np.isnan(loss), log_p0 - log_p1, loss
            )  # eps0 ~ 1e308: G underflows where F does not
        return SortedCells.of(log_p0, log_p1, s.epsilon_local, loss=loss)


class PairCountsView(CellView):
    """The pair (count of x0, count of x1) for every dataset with n_x0 other users on x0 and none of the others
    on x1 (module docstring). ``setting.n_x0`` is required."""

    name = "pair-counts"
    #: the accountant named in a size refusal
    accountant = "histogram-pair-lower"

    def cells(self) -> SortedCells:
        """The cells (h0, h1) with their two laws and exact losses (module docstring)."""
        s = self.setting
        check_cells_size(s, self.accountant)
        n, k, a = s.n_users, s.required_k, s.required_n_x0
        krr = s.krr
        log_p, log_q, log_rest = krr.log_p, krr.log_q, krr.log_rest
        # others off x0: on x1 when k = 2 (report x1 w.p. p), otherwise off x1 (x1 w.p. q)
        off_to_x1 = log_p if k == 2 else log_q
        off_rest = -np.inf if k == 2 else krr.log_1m2q
        law = joint_two_counts([(a, log_p, log_q, log_rest), (n - 1 - a, log_q, off_to_x1, off_rest)])
        size = n + 1
        g = np.full((size, size), -np.inf)
        g[: law.shape[0], : law.shape[1]] = law
        g0, g1 = shifted(g, 0), shifted(g, 1)
        log_p0 = np.logaddexp(np.logaddexp(g0 + log_p, g1 + log_q), g + log_rest)
        log_p1 = np.logaddexp(np.logaddexp(g0 + log_q, g1 + log_p), g + log_rest)
        loss = _pair_loss(s.epsilon_local, a, n - 1 - a, size, -np.inf if k == 2 else krr.log_rho).ravel()
        with np.errstate(
            invalid="ignore"
        ):  # cells of probability 0 on both sides (dropped by SortedCells.of)
            loss = np.where(
                np.isnan(loss), (log_p0 - log_p1).ravel(), loss
            )  # eps0 ~ 1e308: G underflows, F not
        return SortedCells.of(log_p0.ravel(), log_p1.ravel(), s.epsilon_local, loss=loss)
