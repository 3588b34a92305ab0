"""Theorem IV.1 of Biswas, Jung & Palamidessi: delta of one bin's count, as printed and exact.

Setting (paper, Section IV): n users apply k-RR with local parameter eps0, p = e^eps0 / (e^eps0 + k - 1)
(report the true value), q = 1 / (e^eps0 + k - 1) (each other value). User u holds x0 in D(x0) and
x1 in D(x1); ``n_x0`` of the other n - 1 users hold x0 and the remaining N - 1 = n - 1 - n_x0 hold
values other than x0 (which ones does not matter for this query). The released statistic is the
count S of reports equal to x0:

    S = I + R + T,  R ~ Bin(n_x0, p),  T ~ Bin(N - 1, q),  I ~ Bern(p) under D(x0), Bern(q) under D(x1).

Under D(x1), S = R + T' with T' ~ Bin(N, q) (u is then one more user off x0), so P1 is the
convolution of Bin(n_x0, p) and Bin(N, q); and with the identity C(N - 1, j - 1) = (j / N) C(N, j)
the paper's eq. (11)-(13) give the likelihood ratio

    P0(s) / P1(s) = kappa_2 + (e^eps0 - kappa_2) * E[(s - R) / N | S = s]          (exact)

where the expectation is under P1 (R given R + T' = s). Theorem IV.1 *as printed* multiplies by
(s - r)/(n - n_x0) **and** keeps C(n - 1 - n_x0, s - 1 - r), i.e. applies the identity twice, which
gives

    v_s(printed) = ln(kappa_2 + (e^eps0 - kappa_2) * E[((s - R) / N)^2 | S = s]).

Since 0 <= (s - R)/N <= 1 the printed v_s is <= the true privacy loss, so the printed delta is never
larger than the exact one (it understates by many orders of magnitude in Tables II and IV). The
weights of eq. (6), kappa_3 / (n - n_x0) * sum_r mu(s, r) tau_r, equal the correct P0(s) (eq. 12).

Numerics. Both ratios are conditional expectations of non-negative quantities, so everything is
computed as log-sum-exp of positive terms: no cancellation. For each s the conditional law of R
given S = s is log-concave in r (a product of two binomial pmfs), so it is summed over a window
around its mode whose ends are at least ``_WINDOW_DROP`` nats below the mode (the omitted mass is
< 1e-20 relative, by log-concavity). The privacy loss L_s is non-decreasing in s (Efron's theorem for
sums of log-concave variables), so delta(eps) = sum_{s >= s*} P0(s) (1 - e^(eps - L_s)) is a tail
sum: s* is found by bisection and the tail is summed in blocks until the remaining mass (bounded by
a geometric series, P0 being log-concave) is ``_TAIL_DROP`` nats below the running sum. Each term
is ``log P0(s) + log1mexp(eps - L_s)``. No FFT anywhere (it cannot resolve 1e-300 tails).

Edge cases: the loss never exceeds eps0 (L_n = eps0 exactly: all users reported x0), so the forward
delta is 0 for eps >= eps0; the reverse loss never exceeds -ln kappa_2 = ln((e^eps0 + k - 2)/(k - 1)),
so the reverse delta is 0 beyond it (for k = 2 that is eps0 as well).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, log_binom_pmf, logsumexp
from shuffledp._validation import check_choice
from shuffledp.accounting._base import Accountant, BoundKind

__all__ = ["BiswasPrinted", "BiswasExact", "SingleBinLaw", "DIRECTIONS"]

#: directions of the hockey-stick divergence: "forward" = H(P0 || P1) (the paper's: D(x0) vs D(x1)),
#: "reverse" = H(P1 || P0), "both" = the larger of the two
DIRECTIONS = ("forward", "reverse", "both")

_WINDOW_DROP = 50.0  # nats below the conditional mode at which a window may end
_TAIL_DROP = 40.0  # stop summing when the remaining tail is this many nats below the running sum
_BLOCK = 256  # s values per cached block
_MAX_CELLS = 4_000_000  # largest (s, r) matrix evaluated at once


def _log_pmf_table(n: int, log_p: float, log_q: float) -> np.ndarray:
    return log_binom_pmf(np.arange(n + 1), n, log_p, log_q)


class SingleBinLaw:
    """Law of the x0-bin count under D(x1) and the two privacy losses, for arrays of outputs s.

    ``evaluate(s)`` returns ``(log P1(s), L_exact(s), L_printed(s))``; ``log P0(s)`` is
    ``log P1(s) + L_exact(s)``. Blocks of consecutive s are cached.
    """

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int):
        self.n = n_users
        self.a = n_x0
        self.big_n = n_users - n_x0  # N: users off x0 under D(x1), u included
        log_denominator = np.logaddexp(epsilon_local, math.log(k - 1))
        self.log_p = epsilon_local - log_denominator
        self.log_q = -log_denominator
        self.log_1mp = math.log(k - 1) - log_denominator
        self.log_1mq = float(np.logaddexp(epsilon_local, math.log(k - 2)) if k > 2 else epsilon_local) - log_denominator
        # kappa_2 = (k-1)/(e^eps0 + k - 2); e^eps0 - kappa_2 > 0
        self.log_kappa2 = math.log(k - 1) - (self.log_1mq + log_denominator)
        self.log_gap = float(epsilon_local + log1mexp(self.log_kappa2 - epsilon_local))
        self.log_pmf_r = _log_pmf_table(self.a, self.log_p, self.log_1mp)
        self.log_pmf_t = _log_pmf_table(self.big_n, self.log_q, self.log_1mq)
        self._blocks: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    # -- conditional sums -------------------------------------------------------------------
    def _g(self, s: np.ndarray, r: np.ndarray) -> np.ndarray:
        """log Bin(a, p)(r) + log Bin(N, q)(s - r); -inf outside the support."""
        valid = (r >= 0) & (r <= self.a) & (s - r >= 0) & (s - r <= self.big_n)
        rr = np.where(valid, r, 0)
        tt = np.where(valid, s - r, 0)
        return np.where(valid, self.log_pmf_r[rr] + self.log_pmf_t[tt], -np.inf)

    def _modes(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        low = np.maximum(0, s - self.big_n)
        high = np.minimum(self.a, s)
        lo, hi = low.copy(), high.copy()
        # smallest r in [low, high] with g(r + 1) <= g(r) (log-concave: that is the mode)
        while True:
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            rising = self._g(s, mid + 1) > self._g(s, mid)
            lo = np.where(active & rising, mid + 1, lo)
            hi = np.where(active & ~rising, mid, hi)
        return lo, low, high

    def _sums(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """log sum_r w, log sum_r w (s-r), log sum_r w (s-r)^2 with w = e^g, for each s."""
        mode, low, high = self._modes(s)
        g_mode = self._g(s, mode)
        curvature = 2.0 * g_mode - self._g(s, mode - 1) - self._g(s, mode + 1)
        # Gaussian guess from the curvature at the mode (where both neighbours exist); the loop
        # below widens the window until both ends are _WINDOW_DROP nats down (or at the support).
        usable = np.isfinite(curvature) & (curvature > 0)
        guess = np.sqrt(2.2 * _WINDOW_DROP / curvature[usable]) if usable.any() else np.array([0.0])
        half = int(min(np.ceil(guess.max()) + 8, self.a + 1))
        while True:
            left = np.maximum(mode - half, low)
            right = np.minimum(mode + half, high)
            ok_left = (left == low) | (self._g(s, left) <= g_mode - _WINDOW_DROP)
            ok_right = (right == high) | (self._g(s, right) <= g_mode - _WINDOW_DROP)
            if np.all(ok_left & ok_right) or half > self.a:
                break
            half *= 2
        offsets = np.arange(-half, half + 1)
        out0 = np.empty(s.shape)
        out1 = np.empty(s.shape)
        out2 = np.empty(s.shape)
        chunk = max(1, _MAX_CELLS // offsets.size)
        for start in range(0, s.size, chunk):
            sl = slice(start, start + chunk)
            r = mode[sl, None] + offsets[None, :]
            clipped = np.clip(r, left[sl, None], right[sl, None])
            distance = s[sl, None] - clipped
            g = self.log_pmf_r[clipped] + self.log_pmf_t[distance]
            top = g.max(axis=1)
            weights = np.exp(g - top[:, None])
            weights *= r == clipped  # entries clipped to the window's ends are duplicates: drop them
            distance = distance.astype(float)
            first = weights * distance
            with np.errstate(divide="ignore"):
                out0[sl] = top + np.log(weights.sum(axis=1))
                out1[sl] = top + np.log(first.sum(axis=1))
                out2[sl] = top + np.log((first * distance).sum(axis=1))
        return out0, out1, out2

    def evaluate(self, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(log P1(s), exact loss L_s, printed loss v_s) for an integer array s in [0, n]."""
        s = np.asarray(s, dtype=np.int64)
        log_p1, log_first, log_second = self._sums(s)
        log_n = math.log(self.big_n)
        log_m1 = log_first - log_p1 - log_n
        log_m2 = log_second - log_p1 - 2.0 * log_n
        loss = np.logaddexp(self.log_kappa2, self.log_gap + log_m1)
        printed = np.logaddexp(self.log_kappa2, self.log_gap + log_m2)
        return log_p1, loss, printed

    def block(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Cached (s, log P1, L, v) for s in [index * B, (index + 1) * B) intersected with [0, n]."""
        if index not in self._blocks:
            s = np.arange(index * _BLOCK, min((index + 1) * _BLOCK, self.n + 1), dtype=np.int64)
            self._blocks[index] = (s, *self.evaluate(s))
        return self._blocks[index]

    # -- delta ------------------------------------------------------------------------------
    def _threshold(self, epsilons: np.ndarray, loss_index: int, sign: int) -> np.ndarray:
        """Forward (sign=+1): smallest s with loss > eps. Reverse (sign=-1): largest s with L < -eps."""
        lo = np.full(epsilons.shape, -1 if sign > 0 else 0, dtype=np.int64)
        hi = np.full(epsilons.shape, self.n if sign > 0 else self.n + 1, dtype=np.int64)
        while np.any(hi - lo > 1):
            mid = (lo + hi) // 2
            unique, inverse = np.unique(mid, return_inverse=True)
            values = self.evaluate(unique)[loss_index][inverse]
            if sign > 0:
                above = values > epsilons
                hi = np.where(above, mid, hi)
                lo = np.where(above, lo, mid)
            else:
                below = values < -epsilons
                lo = np.where(below, mid, lo)
                hi = np.where(below, hi, mid)
        return hi if sign > 0 else lo

    def log_delta(self, epsilons: np.ndarray, *, direction: str = "forward", printed: bool = False) -> np.ndarray:
        """log H_{e^eps}(P0 || P1) ("forward") or H(P1 || P0) ("reverse"); printed v_s if asked."""
        result = np.full(epsilons.shape, -np.inf)
        if direction == "forward":
            loss_index = 2 if printed else 1
            live = epsilons < self._max_forward_loss
            starts = self._threshold(epsilons[live], loss_index, +1) if live.any() else np.array([], int)
            for position, eps, start in zip(np.flatnonzero(live), epsilons[live], starts):
                result[position] = self._walk(eps, int(start), loss_index, +1)
        else:
            live = epsilons < -self.log_kappa2
            starts = self._threshold(epsilons[live], 1, -1) if live.any() else np.array([], int)
            for position, eps, start in zip(np.flatnonzero(live), epsilons[live], starts):
                if start >= 0:
                    result[position] = self._walk(eps, int(start), 1, -1)
        return result

    @property
    def _max_forward_loss(self) -> float:
        return self.log_p - self.log_q  # = eps0: the loss at s = n

    def _walk(self, eps: float, start: int, loss_index: int, sign: int) -> float:
        """Sum the tail from ``start`` in direction ``sign`` block by block (see module doc)."""
        total = -np.inf
        index = start // _BLOCK
        while 0 <= index * _BLOCK <= self.n:
            s, log_p1, loss, printed = self.block(index)
            chosen = printed if loss_index == 2 else loss
            log_weight = log_p1 + loss if sign > 0 else log_p1  # P0 forward, P1 reverse
            mask = (s >= start) if sign > 0 else (s <= start)
            if sign > 0:
                mask &= chosen > eps
                terms = log_weight[mask] + log1mexp(eps - chosen[mask])
            else:
                mask &= loss < -eps
                terms = log_weight[mask] + log1mexp(eps + loss[mask])
            if terms.size:
                total = float(np.logaddexp(total, logsumexp(terms)))
            # stopping rule: past the mode, remaining mass <= geometric tail, negligible vs total
            if sign > 0:
                if s[-1] >= self.n:
                    break
                edge, inner = log_weight[-1], log_weight[-2] if s.size > 1 else -np.inf
            else:
                if s[0] <= 0:
                    break
                edge, inner = log_weight[0], log_weight[1] if s.size > 1 else -np.inf
            log_ratio = edge - inner
            if np.isfinite(total) and log_ratio < 0:
                tail = edge + log_ratio - float(log1mexp(log_ratio))
                if tail < total - _TAIL_DROP:
                    break
            if not np.isfinite(edge) and np.isfinite(total):
                break
            index += sign
        return total


class _SingleBinAccountant(Accountant):
    needs_n_x0 = True

    def _law(self) -> SingleBinLaw:
        if getattr(self, "_cached_law", None) is None:
            s = self.setting
            self._cached_law = SingleBinLaw(epsilon_local=s.epsilon_local, n_users=s.n_users, k=s.k, n_x0=s.n_x0)
        return self._cached_law


class BiswasPrinted(_SingleBinAccountant):
    """Eq. (6) with v_s exactly as printed in Theorem IV.1 (arXiv 2022), in log space.

    ``delta_hat(eps) = sum_s 1{v_s > eps} (1 - e^(eps - v_s)) P0(s)``, with the printed v_s (see the
    module docstring: it understates the privacy loss, so this delta is <= ``biswas-exact``'s).
    Reproduces the paper's Tables II ("Our delta", n = 100) and IV.
    """

    name = "biswas-printed"
    kind = BoundKind.AS_PRINTED
    scope = (
        "the paper's eq. (6) with Theorem IV.1's v_s as printed (erroneous): x0-bin count only, "
        "one dataset (n_x0 others on x0), direction D(x0) vs D(x1); understates the exact value"
    )
    reference = "Biswas, Jung, Palamidessi (arXiv 2022), Theorem IV.1, Definition IV.2, eq. (3)-(6)"

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        return self._law().log_delta(epsilons, direction="forward", printed=True)


class BiswasExact(_SingleBinAccountant):
    """Exact delta of the x0-bin count: hockey-stick divergence of its laws under D(x0) and D(x1).

    ``direction="forward"`` (default, the paper's): H_{e^eps}(P0 || P1); ``"reverse"``:
    H_{e^eps}(P1 || P0); ``"both"``: the larger. Exact for the stated dataset (n_x0 others on x0, the
    rest anywhere off x0). As a delta of the whole k-bin histogram it is a *lower bound* (the x0
    count is a post-processing of the histogram), not a DP guarantee.
    """

    name = "biswas-exact"
    kind = BoundKind.EXACT
    scope = (
        "x0-bin count only, one dataset (n_x0 other users on x0, the rest off x0), the chosen "
        "direction; a lower bound on the full histogram's delta for that dataset"
    )
    reference = "hockey-stick divergence of the count law of Biswas et al. (arXiv 2022) eq. (11)-(13), corrected"

    def __init__(self, *, epsilon_local, n_users, k, n_x0=None, direction: str = "forward"):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        self.direction = check_choice(direction, "direction", DIRECTIONS)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        law = self._law()
        if self.direction == "both":
            return np.maximum(law.log_delta(epsilons, direction="forward"), law.log_delta(epsilons, direction="reverse"))
        return law.log_delta(epsilons, direction=self.direction)

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", direction={self.direction!r})"
