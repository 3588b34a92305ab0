"""The tail sums of the single-bin view (:class:`TailSums`): delta of one direction at many epsilons.

The privacy loss L_s is non-decreasing in s, so delta(eps) = sum_{s >= s*} P0(s) (1 - e^(eps - L_s)) (forward;
the reverse tail lies below the mean) is a tail sum: the threshold s* is found by multisection (Illinois steps
on the smooth loss from n = RUN_USERS on), and the tail is walked block by block
(:class:`~shuffledp.accounting.views.single_bin.blocks.CountBlocks`) until the remaining mass, bounded by a
geometric series (P0 is log-concave), is ``_TAIL_DROP`` nats below the running sum. The derivation is in
:mod:`shuffledp.accounting.accountants.biswas`'s docstring.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.search import Bracket, illinois
from shuffledp.accounting.params import Direction
from shuffledp.accounting.views.single_bin.blocks import BLOCK, CountBlocks
from shuffledp.accounting.views.single_bin.runs import chernoff_log_tail, loss_error

__all__ = ["TailSums"]

_TAIL_DROP = 40.0  # stop summing when the remaining tail is this many nats below the running sum
_SECTIONS = 8  # points per bracket and round in the threshold search


class TailSums:
    """Delta of the count law of ``blocks`` in one direction, by threshold and tail walks (module docstring)."""

    def __init__(self, blocks: CountBlocks):
        """The sums read the blocks' cache and their law.

        Args:
            blocks: the cached blocks of the count law (their law is read as ``law``).
        """
        self.blocks = blocks
        self.law = blocks.law

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
        hi = np.full(epsilons.shape, self.law.n_users if sign > 0 else self.law.n_users + 1, dtype=np.int64)
        # narrow the brackets with the precomputed bulk (the loss is non-decreasing in s)
        bulk = self.blocks.bulk(sign)
        lo, hi = self._narrow(bulk[0], bulk[loss_index + 1], epsilons, sign, lo, hi)
        if self.blocks.by_runs:
            # from RUN_USERS on, with every cached block (those of earlier walks too: the thresholds
            # of neighbouring epsilons of a search often lie between two cached counts) where the two
            # cached losses are good to 1e-9 (far in a tail, at |log P1| > ~4,500, losses from window
            # sums are good to ~|log P1| ulps only, and the bracket stays the bulk's, as below RUN_USERS)
            s_all, log_p1, *losses = self.blocks.merged()
            lo_c, hi_c = self._narrow(s_all, losses[loss_index - 1], epsilons, sign, lo, hi)
            index = np.searchsorted(s_all, np.stack([lo_c, hi_c]))
            found = (index < s_all.size) & (
                s_all[np.minimum(index, s_all.size - 1)] == np.stack([lo_c, hi_c])
            )
            error = np.where(found, loss_error(log_p1[np.minimum(index, s_all.size - 1)]), np.inf)
            good = np.all(error <= 1e-9, axis=0)
            lo, hi = np.where(good, lo_c, lo), np.where(good, hi_c, hi)
        if self.blocks.by_runs:  # one window sum per step instead of _SECTIONS - 1 per round
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
            values = self.law.evaluate(unique)[loss_index][inverse.reshape(points.shape)]
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
            value = float(self.law.evaluate(np.array([math.floor(x)], dtype=np.int64))[loss_index][0])
            return (
                (value > eps if sign > 0 else not value < -eps),
                (value - eps if sign > 0 else value + eps),
                value,
            )

        final = illinois(evaluate, Bracket(float(lo), float(hi)), math.nan, math.nan, tolerance=1.0)
        return math.floor(final.low), math.floor(final.high)

    def log_delta_bound(self, eps: float) -> float:
        """Certified upper bound on the forward log delta at ``eps`` from the cached blocks (0 if none
        helps), from n = RUN_USERS on (0 below: nothing changes there).

        If a cached count s has loss <= eps - 1e-9 - 1000 ulps of |log P1(s)| (the loss is a difference
        of logs of that size: far in a tail it is good to ~1e-7 only), its true loss is <= eps, so every
        count with loss > eps lies above s (the loss is non-decreasing): delta <= P0(S > s), bounded by
        Chernoff: log P0(S >= x) <= (a + 1) log(1 - p + p e^th) + (N - 1) log(1 - q + q e^th) - th x
        for any th >= 0 (S = Bin(a + 1, p) + Bin(N - 1, q) under D(x0)); th is put near the minimum
        by bisection on the derivative (any th gives a valid bound).
        """
        if not self.blocks.by_runs or not self.blocks.cache:
            return 0.0
        s, log_p1, loss, _ = self.blocks.merged()
        with np.errstate(invalid="ignore"):
            below = np.flatnonzero(loss <= eps - 1e-9 - loss_error(log_p1))
        if below.size == 0:
            return 0.0
        x = float(s[below[-1]]) + 1.0
        if x <= self.law.mean0:
            return 0.0
        if x > self.law.n_users:
            return -math.inf
        return chernoff_log_tail(self.law, x)

    def log_delta_one_direction(
        self, epsilons: np.ndarray, direction: Direction | str = Direction.REMOVE, *, printed: bool = False
    ) -> np.ndarray:
        """log H_{e^eps}(P0 || P1) ("forward") or H(P1 || P0) ("reverse"); printed v_s if asked.

        Args:
            epsilons: a 1-D array of epsilons in [0, inf].
            direction: :attr:`Direction.REMOVE` ("forward") or :attr:`Direction.ADD` ("reverse").
            printed: with Theorem IV.1's printed v_s instead of the exact loss (forward only).

        Returns:
            log delta at each epsilon.
        """
        result = np.full(epsilons.shape, -np.inf)
        sign = +1 if direction == Direction.REMOVE else -1
        loss_index = 2 if (printed and sign > 0) else 1
        # forward loss <= eps0 (= loss at s = n); reverse loss <= -ln kappa_2 (at s = 0)
        live = np.flatnonzero(epsilons < (self.law.epsilon_local if sign > 0 else self.law.max_reverse_loss))
        if live.size == 0:
            return result
        starts = self._threshold(epsilons[live], loss_index, sign)
        # batched walks: every round evaluates the next block of all unfinished epsilons at once
        cursors = {int(i): int(start) // BLOCK for i, start in zip(live, starts)}
        start_of = {int(i): int(start) for i, start in zip(live, starts)}
        if self.blocks.by_runs:
            self._sum_bulk(epsilons, start_of, cursors, loss_index, sign, result)
        while cursors:
            # from RUN_USERS on, a missing block brings the next ones of a run with it (one
            # recurrence run, anchored once, instead of a run per block): 1,024 counts at a walk's
            # first block, 8,192 once it goes on
            self.blocks.ensure(
                c + sign * j
                for i, c in cursors.items()
                if c not in self.blocks.cache
                for j in range(self.blocks.ahead(c == start_of[i] // BLOCK))
            )
            for i in list(cursors):
                done = self._walk_block(i, epsilons[i], start_of[i], cursors[i], loss_index, sign, result)
                if done:
                    del cursors[i]
                else:
                    cursors[i] += sign
        return np.minimum(result, 0.0)  # delta <= 1; rounding of sum P0 ~ 1 may exceed it by 1e-15

    def _sum_bulk(self, epsilons, start_of, cursors, loss_index, sign, result) -> None:
        """From n = RUN_USERS on: the terms of every walk starting inside the cached bulk, in one sum.

        The walk then resumes at the first block beyond the bulk (it ends there at once when the
        tail is negligible). Only the order of summation differs from block-wise walking.
        """
        s, log_p1, loss, printed = self.blocks.bulk(sign)
        chosen = printed if loss_index == 2 else loss
        with np.errstate(over="ignore"):
            log_weight = log_p1 + loss if sign > 0 else log_p1
        beyond = s[-1] // BLOCK + 1 if sign > 0 else s[0] // BLOCK - 1
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
            if (sign > 0 and s[-1] >= self.law.n_users) or (sign < 0 and s[0] <= 0):
                del cursors[i]
            else:
                cursors[i] = beyond

    def _walk_block(self, i, eps, start, index, loss_index, sign, result) -> bool:
        """Add one block's terms to result[i]; True when the remaining tail is negligible (module doc)."""
        s, log_p1, loss, printed = self.blocks.cache[index]
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
        if (sign > 0 and s[-1] >= self.law.n_users) or (sign < 0 and s[0] <= 0):
            return True
        edge = log_weight[-1] if sign > 0 else log_weight[0]
        inner = (log_weight[-2] if sign > 0 else log_weight[1]) if s.size > 1 else -np.inf
        if not np.isfinite(edge):
            # past the mode of the (log-concave) weights, an underflowed weight stays underflowed
            past_mode = s[0] > self.law.mean0 + 1.0 if sign > 0 else s[-1] < self.law.mean1 - 1.0
            return bool(np.isfinite(total) or past_mode)
        log_ratio = edge - inner
        if np.isfinite(total) and log_ratio < 0:
            # past the mode: remaining mass <= edge * r / (1 - r) (log-concave weights)
            tail = edge + log_ratio - float(log1mexp(log_ratio))
            return bool(tail < total - _TAIL_DROP)
        return False
