"""The paper's single-bin view: the law of the x0-bin count of the shuffled k-RR histogram for one
dataset (n_x0 other users on x0), under D(x0) and D(x1), with the exact privacy loss of each count
and Theorem IV.1's printed v_s. :class:`SingleBinLaw` evaluates both deltas of eq. (6) (as printed and
exact) for ``biswas-printed`` / ``biswas-exact``, and for k = 2 (where the x0 count is the whole
histogram) ``histogram-exact``. The derivation, the erratum and the numerics are in
:mod:`shuffledp.accounting.accountants.biswas`'s docstring.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.numerics.search import Bracket, first_high_integers, illinois
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.views.single_bin.runs import (
    RUN_SPACINGS,
    chernoff_log_tail,
    evaluate_run,
    loss_error,
    rows_by_recurrence,
)

__all__ = ["SingleBinLaw", "DIRECTIONS", "MAX_USERS_SINGLE_BIN", "check_size"]

#: directions of the hockey-stick divergence: "forward" = H(P0 || P1) (the paper's: D(x0) vs D(x1)),
#: "reverse" = H(P1 || P0), "both" = the larger of the two
DIRECTIONS = ("forward", "reverse", "both")

_WINDOW_DROP = 40.0  # nats below the conditional mode at which a window may end
_TAIL_DROP = 40.0  # stop summing when the remaining tail is this many nats below the running sum
_BLOCK = 64  # s values per cached block
_MAX_CELLS = 1_000_000  # largest (s, r) matrix evaluated at once (bounds memory to ~100 MB)
_SECTIONS = 8  # points per bracket and round in the threshold search
_BULK_SDS = 10.0  # the bulk of S evaluated in one go reaches this many standard deviations
#: from this n on, runs of consecutive s are evaluated by the pmf recurrence (O(1) per s after
#: anchors every _RUN_SPACING values) where it is certified; below it every s is a window sum, as
#: before issue 24 (so every recorded output up to n = 10^6 is unchanged to the bit)
_RUN_USERS = 10**7
_RUN_SPACING = RUN_SPACINGS[-1]  # s values a walk evaluates ahead when it leaves the cached blocks

#: largest n accepted: the work grows as n p q (O(sqrt n) values of s, each an O(sqrt n) window)
MAX_USERS_SINGLE_BIN = 10**9


class SingleBinLaw:
    """Law of the x0-bin count under D(x1) and the two privacy losses, for arrays of outputs s.

    ``evaluate(s)`` returns ``(log P1(s), L_exact(s), L_printed(s))``; ``log P0(s)`` is
    ``log P1(s) + L_exact(s)``. Blocks of consecutive s are cached.
    """

    def __init__(
        self,
        setting: ShuffleSetting | None = None,
        *,
        epsilon_local: float | None = None,
        n_users: int | None = None,
        k: int | None = None,
        n_x0: int | None = None,
    ):
        """Built from a setting with ``n_x0`` (the keywords ``epsilon_local``, ``n_users``, ``k``, ``n_x0`` are
        still accepted and form one)."""
        if setting is None:
            setting = ShuffleSetting(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        epsilon_local, n_users, k, n_x0 = setting.epsilon_local, setting.n_users, setting.k, setting.n_x0
        self.n = n_users
        self.epsilon_local, self.k = epsilon_local, k
        # largest reverse loss, -ln kappa_2 = ln((e^eps0 + k - 2)/(k - 1)); exactly eps0 for k = 2
        krr = KrrParams.of(epsilon_local, k)
        self.max_reverse_loss = krr.log_inverse_kappa2
        self.a = n_x0
        self.big_n = n_users - n_x0  # N: users off x0 under D(x1), u included
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
        self.mean1 = self.a * p + self.big_n * q  # mean of S under D(x1)
        self.mean0 = self.mean1 + p - q  # under D(x0)
        self._blocks: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        #: the recurrence runs' state (from n = 10^7 on, :func:`~shuffledp.accounting.views.single_bin.runs.evaluate_run`):
        #: the law with N - 2 users off x0 whose window sums anchor the runs, and each run's last values
        self.run_anchor_law: SingleBinLaw | None = None
        self.run_ends: dict = {}

    # -- conditional sums -------------------------------------------------------------------
    def _log_pmf_r(self, r) -> np.ndarray:
        """log Bin(a, p)(r); -inf outside [0, a]."""
        return log_binom_pmf_loader(r, self.a, self.log_p, self.log_1mp)

    def _log_pmf_t(self, t) -> np.ndarray:
        """log Bin(N, q)(t); -inf outside [0, N]."""
        return log_binom_pmf_loader(t, self.big_n, self.log_q, self.log_1mq)

    def _g(self, s: np.ndarray, r: np.ndarray) -> np.ndarray:
        """log Bin(a, p)(r) + log Bin(N, q)(s - r); -inf outside the support."""
        with np.errstate(over="ignore"):  # a sum below -1.8e308 (eps0 ~ 1e308) is log 0
            return self._log_pmf_r(r) + self._log_pmf_t(s - r)

    def _modes(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Mode of r -> g(s, r) on [low, high] (log-concave), with low and high.

        Bisection for the smallest r with g(r + 1) - g(r) <= 0, using the closed form
        log((a - r)(s - r) / ((r + 1)(N - s + r + 1))) + log kappa_1, finite where g underflows.
        """
        low = np.maximum(0, s - self.big_n)
        high = np.minimum(self.a, s)

        def falling(mid):  # g(mid + 1) - g(mid) <= 0 (or not a number)
            midf = mid.astype(float)
            return ~(
                (
                    np.log(self.a - midf)
                    - np.log(midf + 1.0)
                    + np.log(s - midf)
                    - np.log(self.big_n - s + midf + 1.0)
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
                with np.errstate(over="ignore"):  # a sum below -1.8e308 (eps0 ~ 1e308) is log 0
                    g = self._row_log_pmfs(s[sl], mode[sl], width)
                top = g_mode[sl]
                finite = np.isfinite(top)  # top = -inf: P1(s) underflows (extreme eps0)
                g -= np.where(finite, top, 0.0)[:, None]
                np.exp(g, out=g)
                # moments of s - r = d - offset, d = s - mode: weighted sums of the offsets
                d = (s[sl] - mode[sl]).astype(float)
                offsets_f = offsets.astype(float)
                sum0 = g.sum(axis=1)
                sum1 = np.einsum("ij,j->i", g, offsets_f)  # (not @: a threaded BLAS gemv is 10x slower here)
                sum2 = np.einsum("ij,j->i", g, offsets_f * offsets_f)
                first = (
                    d * sum0 - sum1
                )  # sum w (s - r) >= 0, no cancellation (d and offsets centre on the mode)
                second = d * d * sum0 - 2.0 * d * sum1 + sum2
                with np.errstate(divide="ignore", invalid="ignore"):
                    out0[sl] = np.where(finite, top + np.log(sum0), -np.inf)
                    out1[sl] = np.where(finite, top + np.log(np.maximum(first, 0.0)), -np.inf)
                    out2[sl] = np.where(finite, top + np.log(np.maximum(second, 0.0)), -np.inf)
        return out0, out1, out2

    def _row_log_pmfs(self, s: np.ndarray, mode: np.ndarray, width: int) -> np.ndarray:
        """g(s_i, mode_i + j) for j in [-width, width], one row per s_i (-inf outside the support).

        Rows of neighbouring s overlap, so when the rows' span is short one table of each log-pmf over
        that span serves all of them (Loader's formula on O(sqrt n) points); scattered rows (threshold
        search) are built by exact ratio recurrences from one Loader value per row.
        """
        offsets = np.arange(-width, width + 1)
        cells = s.size * offsets.size
        r_low, r_high = int(mode.min()) - width, int(mode.max()) + width
        t_low, t_high = int((s - mode).min()) - width, int((s - mode).max()) + width
        if (r_high - r_low + 1) + (t_high - t_low + 1) <= cells:
            table_r = self._log_pmf_r(np.arange(r_low, r_high + 1, dtype=float))
            table_t = self._log_pmf_t(np.arange(t_low, t_high + 1, dtype=float))
            r_index = (mode - r_low)[:, None] + offsets[None, :]
            t_index = (s - mode - t_low)[:, None] - offsets[None, :]
            return table_r[r_index] + table_t[t_index]
        rows_r = rows_by_recurrence(
            self._log_pmf_r, self.a, self.log_p - self.log_1mp, mode - width, offsets.size
        )
        rows_t = rows_by_recurrence(
            self._log_pmf_t, self.big_n, self.log_q - self.log_1mq, s - mode - width, offsets.size
        )
        return rows_r + rows_t[:, ::-1]

    def evaluate(self, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(log P1(s), exact loss L_s, printed loss v_s) for an integer array s in [0, n]."""
        s = np.asarray(s, dtype=np.int64)
        log_p1, log_first, log_second = self.window_sums(s)
        log_n = math.log(self.big_n)
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

    def ensure_blocks(self, indices) -> None:
        """Evaluate every missing block among ``indices`` in one call and cache it.

        From n = ``_RUN_USERS`` on, each run of consecutive missing blocks is first tried by the
        recurrence (:func:`single_bin_runs.evaluate_run`); blocks it does not certify are summed by windows.
        """
        missing = sorted(
            {int(i) for i in indices if int(i) not in self._blocks and 0 <= int(i) * _BLOCK <= self.n}
        )
        if missing and self.n >= _RUN_USERS:
            missing = self._ensure_runs(missing)
        if not missing:
            return
        ranges = [np.arange(i * _BLOCK, min((i + 1) * _BLOCK, self.n + 1), dtype=np.int64) for i in missing]
        values = self.evaluate(np.concatenate(ranges))
        self._store(missing, ranges, values)

    def _ensure_runs(self, missing: list[int]) -> list[int]:
        """Cache the runs of consecutive blocks the recurrence certifies; return the other blocks."""
        left, start = [], 0
        for end in range(1, len(missing) + 1):
            if end < len(missing) and missing[end] == missing[end - 1] + 1:
                continue
            run = missing[start:end]
            first, last = run[0] * _BLOCK, min((run[-1] + 1) * _BLOCK, self.n + 1) - 1
            values = evaluate_run(self, first, last)
            if values is None:
                left.extend(run)
            else:
                ranges = [
                    np.arange(i * _BLOCK, min((i + 1) * _BLOCK, self.n + 1), dtype=np.int64) for i in run
                ]
                self._store(run, ranges, values)
            start = end
        return left

    def _store(self, indices, ranges, values) -> None:
        offset = 0
        for index, s in zip(indices, ranges):
            part = slice(offset, offset + s.size)
            self._blocks[index] = (s, *(v[part] for v in values))
            offset += s.size

    def block(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Cached (s, log P1, L, v) for s in [index * B, (index + 1) * B) intersected with [0, n]."""
        self.ensure_blocks([index])
        return self._blocks[index]

    # -- delta ------------------------------------------------------------------------------
    def _bulk(self, sign: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(s, log P1, L, v) on the blocks covering the bulk of S on the side the tail sums need.

        Forward tails lie above the mean, reverse tails below: [mean - 3 sd, mean + _BULK_SDS sd] or
        its mirror image, evaluated in one call (it only narrows the threshold search and pre-fills
        the cache, so its extent does not affect the result).
        """
        cache = getattr(self, "_bulk_cache", {})
        if sign not in cache:
            p, q = math.exp(self.log_p), math.exp(self.log_q)
            mean = self.a * p + self.big_n * q
            sd = math.sqrt(self.a * p * (1 - p) + self.big_n * q * (1 - q))
            below, above = (3.0, _BULK_SDS) if sign > 0 else (_BULK_SDS, 3.0)
            first = max(0, int(mean - below * sd)) // _BLOCK
            last = min(self.n, int(mean + above * sd) + 1) // _BLOCK
            self.ensure_blocks(range(first, last + 1))
            parts = [self._blocks[i] for i in range(first, last + 1)]
            cache[sign] = tuple(np.concatenate([part[j] for part in parts]) for j in range(4))
            self._bulk_cache = cache
        return cache[sign]

    def _cached(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(s, log P1, L, v) over every cached block in order of s (rebuilt when blocks were added)."""
        kept = getattr(self, "_cached_merge", None)
        if kept is None or kept[0] != len(self._blocks):
            keys = sorted(self._blocks)
            kept = (
                len(self._blocks),
                *(np.concatenate([self._blocks[i][j] for i in keys]) for j in range(4)),
            )
            self._cached_merge = kept
        return kept[1:]

    @staticmethod
    def _narrow(s, loss, epsilons, sign, lo, hi):
        """(lo, hi) from the losses of the counts s (ascending), the defaults where s has no bracket end."""
        if sign > 0:
            count = np.searchsorted(loss, epsilons, side="right")  # entries with loss <= eps
            hi = np.where(count < s.size, s[np.minimum(count, s.size - 1)], hi)
            lo = np.where(count > 0, s[np.maximum(count - 1, 0)], lo)
        else:
            count = np.searchsorted(loss, -epsilons, side="left")  # entries with loss < -eps
            lo = np.where(count > 0, s[np.maximum(count - 1, 0)], lo)
            hi = np.where(count < s.size, s[np.minimum(count, s.size - 1)], hi)
        return lo, hi

    def _threshold(self, epsilons: np.ndarray, loss_index: int, sign: int) -> np.ndarray:
        """Forward (sign=+1): smallest s with loss > eps. Reverse (sign=-1): largest s with L < -eps.

        Multisection: each round evaluates up to ``_SECTIONS`` points inside every open bracket, all
        epsilons at once, so a bracket of width n closes in about log(n)/log(_SECTIONS) rounds.
        """
        lo = np.full(epsilons.shape, -1 if sign > 0 else 0, dtype=np.int64)
        hi = np.full(epsilons.shape, self.n if sign > 0 else self.n + 1, dtype=np.int64)
        # narrow the brackets with the precomputed bulk (the loss is non-decreasing in s)
        bulk = self._bulk(sign)
        lo, hi = self._narrow(bulk[0], bulk[loss_index + 1], epsilons, sign, lo, hi)
        if self.n >= _RUN_USERS:
            # from _RUN_USERS on, with every cached block (those of earlier walks too: the thresholds
            # of neighbouring epsilons of a search often lie between two cached counts) where the two
            # cached losses are good to 1e-9 (far in a tail, at |log P1| > ~4,500, losses from window
            # sums are good to ~|log P1| ulps only, and the bracket stays the bulk's, as below _RUN_USERS)
            s_all, log_p1, *losses = self._cached()
            lo_c, hi_c = self._narrow(s_all, losses[loss_index - 1], epsilons, sign, lo, hi)
            index = np.searchsorted(s_all, np.stack([lo_c, hi_c]))
            found = (index < s_all.size) & (
                s_all[np.minimum(index, s_all.size - 1)] == np.stack([lo_c, hi_c])
            )
            error = np.where(found, loss_error(log_p1[np.minimum(index, s_all.size - 1)]), np.inf)
            good = np.all(error <= 1e-9, axis=0)
            lo, hi = np.where(good, lo_c, lo), np.where(good, hi_c, hi)
        if self.n >= _RUN_USERS:  # one window sum per step instead of _SECTIONS - 1 per round
            for i in np.flatnonzero(hi - lo > 1):
                lo[i], hi[i] = self._threshold_illinois(
                    float(epsilons[i]), int(lo[i]), int(hi[i]), loss_index, sign
                )
        fractions = np.arange(1, _SECTIONS) / _SECTIONS
        while np.any(hi - lo > 1):
            open_ = np.flatnonzero(hi - lo > 1)
            points = lo[open_, None] + np.floor((hi - lo)[open_, None] * fractions[None, :]).astype(np.int64)
            points = np.clip(points, lo[open_, None] + 1, hi[open_, None] - 1)
            unique, inverse = np.unique(points, return_inverse=True)
            values = self.evaluate(unique)[loss_index][inverse.reshape(points.shape)]
            if sign > 0:
                above = values > epsilons[open_, None]  # monotone along each row
                first_above = np.where(above.any(axis=1), np.argmax(above, axis=1), points.shape[1])
                new_hi = np.where(
                    first_above < points.shape[1],
                    points[np.arange(open_.size), np.minimum(first_above, points.shape[1] - 1)],
                    hi[open_],
                )
                new_lo = np.where(
                    first_above > 0, points[np.arange(open_.size), np.maximum(first_above - 1, 0)], lo[open_]
                )
            else:
                below = values < -epsilons[open_, None]
                count_below = below.sum(axis=1)  # a prefix of each row
                new_lo = np.where(
                    count_below > 0, points[np.arange(open_.size), np.maximum(count_below - 1, 0)], lo[open_]
                )
                new_hi = np.where(
                    count_below < points.shape[1],
                    points[np.arange(open_.size), np.minimum(count_below, points.shape[1] - 1)],
                    hi[open_],
                )
            lo[open_], hi[open_] = new_lo, new_hi
        return hi if sign > 0 else lo

    def _threshold_illinois(
        self, eps: float, lo: int, hi: int, loss_index: int, sign: int
    ) -> tuple[int, int]:
        """(lo, hi) = (s, s + 1) around the threshold, by Illinois steps on the loss (smooth in s).

        "High" at x means loss(floor x) > eps (forward) or not < -eps (reverse), so lo stays answered
        no and hi yes, as in the multisection (same integers: the loss is non-decreasing in s).
        """

        def evaluate(x):
            value = float(self.evaluate(np.array([math.floor(x)], dtype=np.int64))[loss_index][0])
            return (
                (value > eps if sign > 0 else not value < -eps),
                (value - eps if sign > 0 else value + eps),
                value,
            )

        final = illinois(evaluate, Bracket(float(lo), float(hi)), math.nan, math.nan, tolerance=1.0)
        return math.floor(final.low), math.floor(final.high)

    def log_delta_bound(self, eps: float) -> float:
        """Certified upper bound on the forward log delta at ``eps`` from the cached blocks (0 if none
        helps), from n = _RUN_USERS on (0 below: nothing changes there).

        If a cached count s has loss <= eps - 1e-9 - 1000 ulps of |log P1(s)| (the loss is a difference
        of logs of that size: far in a tail it is good to ~1e-7 only), its true loss is <= eps, so every
        count with loss > eps lies above s (the loss is non-decreasing): delta <= P0(S > s), bounded by
        Chernoff: log P0(S >= x) <= (a + 1) log(1 - p + p e^th) + (N - 1) log(1 - q + q e^th) - th x
        for any th >= 0 (S = Bin(a + 1, p) + Bin(N - 1, q) under D(x0)); th is put near the minimum
        by bisection on the derivative (any th gives a valid bound).
        """
        if self.n < _RUN_USERS or not self._blocks:
            return 0.0
        s, log_p1, loss, _ = self._cached()
        with np.errstate(invalid="ignore"):
            below = np.flatnonzero(loss <= eps - 1e-9 - loss_error(log_p1))
        if below.size == 0:
            return 0.0
        x = float(s[below[-1]]) + 1.0
        if x <= self.mean0:
            return 0.0
        if x > self.n:
            return -math.inf
        return chernoff_log_tail(self, x)

    def log_delta(
        self, epsilons: np.ndarray, *, direction: str = "forward", printed: bool = False
    ) -> np.ndarray:
        """log H_{e^eps}(P0 || P1) ("forward") or H(P1 || P0) ("reverse"); printed v_s if asked."""
        result = np.full(epsilons.shape, -np.inf)
        sign = +1 if direction == "forward" else -1
        loss_index = 2 if (printed and sign > 0) else 1
        # forward loss <= eps0 (= loss at s = n); reverse loss <= -ln kappa_2 (at s = 0)
        live = np.flatnonzero(epsilons < (self.epsilon_local if sign > 0 else self.max_reverse_loss))
        if live.size == 0:
            return result
        starts = self._threshold(epsilons[live], loss_index, sign)
        # batched walks: every round evaluates the next block of all unfinished epsilons at once
        cursors = {int(i): int(start) // _BLOCK for i, start in zip(live, starts)}
        start_of = {int(i): int(start) for i, start in zip(live, starts)}
        if self.n >= _RUN_USERS:
            self._sum_bulk(epsilons, start_of, cursors, loss_index, sign, result)
        while cursors:
            # from _RUN_USERS on, a missing block brings the next ones of a run with it (one
            # recurrence run, anchored once, instead of a run per block): 1,024 counts at a walk's
            # first block, 8,192 once it goes on
            self.ensure_blocks(
                c + sign * j
                for i, c in cursors.items()
                if c not in self._blocks
                for j in range(self._ahead(c == start_of[i] // _BLOCK))
            )
            for i in list(cursors):
                done = self._walk_block(i, epsilons[i], start_of[i], cursors[i], loss_index, sign, result)
                if done:
                    del cursors[i]
                else:
                    cursors[i] += sign
        return np.minimum(result, 0.0)  # delta <= 1; rounding of sum P0 ~ 1 may exceed it by 1e-15

    def _ahead(self, first: bool) -> int:
        """Blocks fetched together when a walk reaches a missing block (module constants)."""
        if self.n < _RUN_USERS:
            return 1
        return (_RUN_SPACING if first else RUN_SPACINGS[0]) // _BLOCK

    def _sum_bulk(self, epsilons, start_of, cursors, loss_index, sign, result) -> None:
        """From n = _RUN_USERS on: the terms of every walk starting inside the cached bulk, in one sum.

        The walk then resumes at the first block beyond the bulk (it ends there at once when the
        tail is negligible). Only the order of summation differs from block-wise walking.
        """
        s, log_p1, loss, printed = self._bulk(sign)
        chosen = printed if loss_index == 2 else loss
        with np.errstate(over="ignore"):
            log_weight = log_p1 + loss if sign > 0 else log_p1
        beyond = s[-1] // _BLOCK + 1 if sign > 0 else s[0] // _BLOCK - 1
        for i, start in start_of.items():
            if not s[0] <= start <= s[-1]:
                continue
            eps = epsilons[i]
            if sign > 0:
                mask = (s >= start) & (chosen > eps)
                terms = log_weight[mask] + log1mexp(eps - chosen[mask])
            else:
                mask = (s <= start) & (loss < -eps)
                terms = log_weight[mask] + log1mexp(eps + loss[mask])
            if terms.size:
                result[i] = float(logsumexp(terms))
            if (sign > 0 and s[-1] >= self.n) or (sign < 0 and s[0] <= 0):
                del cursors[i]
            else:
                cursors[i] = beyond

    def _walk_block(self, i, eps, start, index, loss_index, sign, result) -> bool:
        """Add one block's terms to result[i]; True when the remaining tail is negligible (module doc)."""
        s, log_p1, loss, printed = self._blocks[index]
        chosen = printed if loss_index == 2 else loss
        if sign > 0:
            with np.errstate(over="ignore"):  # log P1 + eps0 at eps0 ~ 1e308
                log_weight = log_p1 + loss  # log P0
            mask = (s >= start) & (chosen > eps)
            terms = log_weight[mask] + log1mexp(eps - chosen[mask])
        else:
            log_weight = log_p1
            mask = (s <= start) & (loss < -eps)
            terms = log_weight[mask] + log1mexp(eps + loss[mask])
        if terms.size:
            result[i] = float(np.logaddexp(result[i], logsumexp(terms)))
        total = result[i]
        if (sign > 0 and s[-1] >= self.n) or (sign < 0 and s[0] <= 0):
            return True
        edge = log_weight[-1] if sign > 0 else log_weight[0]
        inner = (log_weight[-2] if sign > 0 else log_weight[1]) if s.size > 1 else -np.inf
        if not np.isfinite(edge):
            # past the mode of the (log-concave) weights, an underflowed weight stays underflowed
            past_mode = s[0] > self.mean0 + 1.0 if sign > 0 else s[-1] < self.mean1 - 1.0
            return bool(np.isfinite(total) or past_mode)
        log_ratio = edge - inner
        if np.isfinite(total) and log_ratio < 0:
            # past the mode: remaining mass <= edge * r / (1 - r) (log-concave weights)
            tail = edge + log_ratio - float(log1mexp(log_ratio))
            return bool(tail < total - _TAIL_DROP)
        return False


def check_size(name: str, n_users: int) -> None:
    """Refuse n above :data:`MAX_USERS_SINGLE_BIN` before any allocation."""
    if n_users > MAX_USERS_SINGLE_BIN:
        raise ValueError(
            f"`n_users` must be an integer in [1, {MAX_USERS_SINGLE_BIN}] for accountant {name!r} (its work grows as "
            f"n p q: windows of O(sqrt n) counts for O(sqrt n) outputs); got {n_users}."
        )
