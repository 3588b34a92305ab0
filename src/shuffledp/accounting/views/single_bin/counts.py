"""The law of the x0-bin count S of the shuffled k-RR histogram for one dataset (``n_x0`` other users on x0),
under D(x1), with the exact privacy loss L_s = log(P0(s) / P1(s)) of each count and Theorem IV.1's printed
v_s (:class:`CountLaw`): the single-bin view's outcomes, one count at a time. The derivation, the erratum and
the numerics are in :mod:`shuffledp.accounting.accountants.biswas`'s docstring; the cached blocks of counts
are :mod:`~shuffledp.accounting.views.single_bin.blocks`', the tail sums
:mod:`~shuffledp.accounting.views.single_bin.tails`'.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.numerics.search import first_high_integers
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.views.single_bin.runs import rows_by_recurrence

__all__ = ["CountLaw"]

_WINDOW_DROP = 40.0  # nats below the conditional mode at which a window may end
_MAX_CELLS = 1_000_000  # largest (s, r) matrix evaluated at once (bounds memory to ~100 MB)
#: rows of a chunk summed together (~256 KB of cells): each pass over them (add, exp, the three sums) stays in
#: the L2 cache, twice as fast as passes over a whole chunk's 8 MB; every row's sums are its own, so the
#: values are the same bits whatever the grouping
_PASS_CELLS = 32_768


class CountLaw:
    """Law of the x0-bin count under D(x1) and the two privacy losses, for arrays of outputs s.

    ``evaluate(s)`` returns ``(log P1(s), L_exact(s), L_printed(s))``; ``log P0(s)`` is
    ``log P1(s) + L_exact(s)``. Stateless after construction (the caches are
    :class:`~shuffledp.accounting.views.single_bin.blocks.CountBlocks`').
    """

    def __init__(self, setting: ShuffleSetting):
        """Built from a setting with ``n_x0``.

        Args:
            setting: the setting (k-RR, ``n_x0`` given).
        """
        epsilon_local, n_users = setting.epsilon_local, setting.n_users
        k, n_x0 = setting.required_k, setting.required_n_x0
        self.n_users = n_users
        self.epsilon_local, self.k = epsilon_local, k
        # largest reverse loss, -ln kappa_2 = ln((e^eps0 + k - 2)/(k - 1)); exactly eps0 for k = 2
        krr = KrrParams.of(epsilon_local, k)
        self.max_reverse_loss = krr.log_inverse_kappa2
        self.n_x0 = n_x0
        self.n_off = n_users - n_x0  # N: users off x0 under D(x1), u included
        self.log_p, self.log_q, self.log_1mp, self.log_1mq = krr.log_p, krr.log_q, krr.log_1mp, krr.log_1mq
        # kappa_2 = (k-1)/(e^eps0 + k - 2); e^eps0 - kappa_2 > 0
        self.log_kappa2 = krr.log_kappa2
        with np.errstate(over="ignore"):  # log kappa_2 - eps0 = -inf for eps0 > 9e307: the gap is e^eps0
            self.log_gap = float(epsilon_local + log1mexp(self.log_kappa2 - epsilon_local))
        # kappa_1 = p (1 - q) / ((1 - p) q) > 1: odds ratio of reporting x0 for a user on x0 vs off x0
        # (its log is inf only for eps0 > 9e307, where the mode of r is simply its upper end)
        with np.errstate(over="ignore"):
            self.log_kappa1 = self.log_p + self.log_1mq - self.log_1mp - self.log_q
        p, q = math.exp(self.log_p), math.exp(self.log_q)
        self.mean1 = self.n_x0 * p + self.n_off * q  # mean of S under D(x1)
        self.mean0 = self.mean1 + p - q  # under D(x0)

    def _log_pmf_r(self, r) -> np.ndarray:
        """log Bin(a, p)(r); -inf outside [0, a]."""
        return log_binom_pmf_loader(r, self.n_x0, self.log_p, self.log_1mp)

    def _log_pmf_t(self, t) -> np.ndarray:
        """log Bin(N, q)(t); -inf outside [0, N]."""
        return log_binom_pmf_loader(t, self.n_off, self.log_q, self.log_1mq)

    def _g(self, s: np.ndarray, r: np.ndarray) -> np.ndarray:
        """log Bin(a, p)(r) + log Bin(N, q)(s - r); -inf outside the support."""
        with np.errstate(over="ignore"):  # a sum below -1.8e308 (eps0 ~ 1e308) is log 0
            return self._log_pmf_r(r) + self._log_pmf_t(s - r)

    def _modes(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mode of r -> g(s, r) on [low, high] (log-concave), with low and high.

        Bisection for the smallest r with g(r + 1) - g(r) <= 0, using the closed form
        log((a - r)(s - r) / ((r + 1)(N - s + r + 1))) + log kappa_1, finite where g underflows.
        """
        low = np.maximum(0, s - self.n_off)
        high = np.minimum(self.n_x0, s)

        def falling(mid):  # g(mid + 1) - g(mid) <= 0 (or not a number)
            midf = mid.astype(float)
            return ~(
                (
                    np.log(self.n_x0 - midf)
                    - np.log(midf + 1.0)
                    + np.log(s - midf)
                    - np.log(self.n_off - s + midf + 1.0)
                    + self.log_kappa1
                )
                > 0
            )

        with np.errstate(divide="ignore", invalid="ignore"):
            lo = first_high_integers(falling, low.copy(), high.copy())
        return lo, low, high

    def window_sums(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """log sum_r w, log sum_r w (s-r), log sum_r w (s-r)^2 with w = e^g, for each s."""
        mode, low, high = self._modes(s)
        g_mode = self._g(s, mode)
        with np.errstate(over="ignore", invalid="ignore"):  # inf/nan at eps0 ~ 1e308: not usable below
            curvature = 2.0 * g_mode - self._g(s, mode - 1) - self._g(s, mode + 1)
        # Gaussian guess from the curvature at the mode (where both neighbours exist); the loop
        # below widens the window until both ends are _WINDOW_DROP nats down (or at the support).
        usable = np.isfinite(curvature) & (curvature > 0)
        guess = np.sqrt(2.0 * _WINDOW_DROP / np.where(usable, curvature, 1.0))
        half = np.where(usable, np.ceil(guess), 0).astype(np.int64) + 8
        half = np.minimum(half, high - low + 1)
        while True:  # per-s check of both window ends; widen only the windows that fail
            left = np.maximum(mode - half, low)
            right = np.minimum(mode + half, high)
            ok_left = (left == low) | (self._g(s, left) <= g_mode - _WINDOW_DROP)
            ok_right = (right == high) | (self._g(s, right) <= g_mode - _WINDOW_DROP)
            failing = ~(ok_left & ok_right)
            if not failing.any():
                break
            half = np.where(failing, 2 * half, half)
        out0 = np.empty(s.shape)
        out1 = np.empty(s.shape)
        out2 = np.empty(s.shape)
        # group the s values by window size (within a factor 2) so narrow windows stay cheap
        order = np.argsort(half, kind="stable")
        group_start = 0
        while group_start < order.size:
            smallest = half[order[group_start]]
            group_end = int(np.searchsorted(half[order], 2 * smallest, side="right"))
            members = order[group_start:group_end]
            group_start = group_end
            width = int(half[members].max())
            offsets = np.arange(-width, width + 1)
            chunk = max(1, _MAX_CELLS // offsets.size)
            for first_member in range(0, members.size, chunk):
                sl = members[first_member : first_member + chunk]
                # r = mode + offset over the whole row: entries beyond the row's own window are tiny
                # extra terms (the window only bounds what may be dropped), and outside the support the
                # log-pmfs are -inf, so no clipping or masking is needed
                rows = self._row_source(s[sl], mode[sl], width)
                top = g_mode[sl]
                finite = np.isfinite(top)  # top = -inf: P1(s) underflows (extreme eps0)
                shift = np.where(finite, top, 0.0)
                sum0, sum1, sum2 = np.empty(sl.size), np.empty(sl.size), np.empty(sl.size)
                offsets_f = offsets.astype(float)
                offsets_sq = offsets_f * offsets_f
                step = max(1, _PASS_CELLS // offsets.size)
                for first_row in range(0, sl.size, step):
                    part = slice(first_row, first_row + step)
                    with np.errstate(over="ignore"):  # a sum below -1.8e308 (eps0 ~ 1e308) is log 0
                        g = rows(part)
                    g -= shift[part, None]
                    np.exp(g, out=g)
                    # moments of s - r = d - offset, d = s - mode: weighted sums of the offsets
                    sum0[part] = g.sum(axis=1)
                    # (not @: a threaded BLAS gemv is 10x slower here)
                    sum1[part] = np.einsum("ij,j->i", g, offsets_f)
                    sum2[part] = np.einsum("ij,j->i", g, offsets_sq)
                d = (s[sl] - mode[sl]).astype(float)
                first = (
                    d * sum0 - sum1
                )  # sum w (s - r) >= 0, no cancellation (d and offsets centre on the mode)
                second = d * d * sum0 - 2.0 * d * sum1 + sum2
                with np.errstate(divide="ignore", invalid="ignore"):
                    out0[sl] = np.where(finite, top + np.log(sum0), -np.inf)
                    out1[sl] = np.where(finite, top + np.log(np.maximum(first, 0.0)), -np.inf)
                    out2[sl] = np.where(finite, top + np.log(np.maximum(second, 0.0)), -np.inf)
        return out0, out1, out2

    def _row_source(self, s: np.ndarray, mode: np.ndarray, width: int) -> Callable[[slice], np.ndarray]:
        """The rows g(s_i, mode_i + j) for j in [-width, width], one row per s_i (-inf outside the support), as
        a function of a slice of the rows (a new array each call, for the caller to overwrite).

        Rows of neighbouring s overlap, so when the rows' span is short one table of each log-pmf over
        that span serves all of them (Loader's formula on O(sqrt n) points); scattered rows (threshold
        search) are built by exact ratio recurrences from one Loader value per row, all at once.
        """
        offsets = np.arange(-width, width + 1)
        cells = s.size * offsets.size
        r_low, r_high = int(mode.min()) - width, int(mode.max()) + width
        t_low, t_high = int((s - mode).min()) - width, int((s - mode).max()) + width
        if (r_high - r_low + 1) + (t_high - t_low + 1) <= cells:
            with np.errstate(over="ignore"):  # a sum below -1.8e308 (eps0 ~ 1e308) is log 0
                table_r = self._log_pmf_r(np.arange(r_low, r_high + 1, dtype=float))
                table_t = self._log_pmf_t(np.arange(t_low, t_high + 1, dtype=float))
            # row i reads table_r[mode_i - width - r_low + j] and table_t[s_i - mode_i + width - t_low - j]
            # (j = 0..2 width): contiguous windows of table_r and of table_t reversed
            windows_r = np.lib.stride_tricks.sliding_window_view(table_r, offsets.size)
            windows_t = np.lib.stride_tricks.sliding_window_view(
                np.ascontiguousarray(table_t[::-1]), offsets.size
            )
            start_r, start_t = mode - width - r_low, t_high - (s - mode) - width

            def from_tables(part: slice) -> np.ndarray:
                rows = windows_r[start_r[part]]
                rows += windows_t[start_t[part]]
                return rows

            return from_tables
        with np.errstate(over="ignore"):  # a sum below -1.8e308 (eps0 ~ 1e308) is log 0
            rows_r = rows_by_recurrence(
                self._log_pmf_r, self.n_x0, self.log_p - self.log_1mp, mode - width, offsets.size
            )
            rows_t = rows_by_recurrence(
                self._log_pmf_t, self.n_off, self.log_q - self.log_1mq, s - mode - width, offsets.size
            )
            every_row = rows_r + rows_t[:, ::-1]
        return lambda part: every_row[part].copy()

    def evaluate(self, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(log P1(s), exact loss L_s, printed loss v_s) for an integer array s in [0, n]."""
        s = np.asarray(s, dtype=np.int64)
        log_p1, log_first, log_second = self.window_sums(s)
        log_n = math.log(self.n_off)
        with np.errstate(invalid="ignore", over="ignore"):  # P1(s) = 0, or eps0 ~ 1e308 (clipped below)
            log_m1 = log_first - log_p1 - log_n
            log_m2 = log_second - log_p1 - 2.0 * log_n
        return self.losses_of_counts(s, log_p1, log_m1, log_m2)

    def losses_of_counts(self, s, log_p1, log_m1, log_m2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(log P1, L, v) from log P1 and the logs of E[(s - R) / N | s] and E[((s - R) / N)^2 | s]."""
        with np.errstate(invalid="ignore", over="ignore"):
            loss = np.logaddexp(self.log_kappa2, self.log_gap + log_m1)
            printed = np.logaddexp(self.log_kappa2, self.log_gap + log_m2)
        # the losses lie in [log kappa_2, eps0]; where P1(s) underflows, use the bound on that side
        # of the mean (the loss is non-decreasing in s), which keeps the threshold search monotone
        gone = ~np.isfinite(log_p1)
        if gone.any():
            side = np.where(s > self.mean1, self.epsilon_local, self.log_kappa2)
            loss = np.where(gone, side, loss)
            printed = np.where(gone, side, printed)
        loss = np.clip(loss, self.log_kappa2, self.epsilon_local)
        printed = np.clip(printed, self.log_kappa2, self.epsilon_local)
        return log_p1, loss, printed
