"""The strong adversary's view (Balle, Bell, Gascon, Nissim 2019, Thm 3.1 proof; Koskela, Heikkila,
Honkela 2021, Def. 1 and eq. (4.3)): the view's outcomes (:class:`StrongView`), from which its binned privacy
loss distribution, Renyi moments and composed tail are derived (:mod:`shuffledp.accounting.views.derived`);
its exact delta is the override :meth:`StrongView.log_delta` (used by ``strong-adversary``); a direct O(n^2)
evaluation for tests is :func:`log_delta_direct`.

The adversary sees the shuffled reports and learns every user's blanket bit and the data of the other
users. If the differing user drew from the blanket (probability gamma) both views have the same law;
otherwise, after removing the known truthful reports, it sees (A + 1, C) under D(x0) and (A, C + 1)
under D(x1), (A, C) the trinomial counts of the others' blanket reports on x0 and x1 (n - 1 trials,
probability q each). So delta(eps) = (1 - gamma) H_{e^eps}((A + 1, C) || (A, C + 1)), the split pair of
:mod:`shuffledp.accounting.views.split_pair` with S = A + C ~ Bin(n - 1, 2q), A | S ~ Bin(S, 1/2), the
same in both directions. Binned: L = log((a + 1) / c); c = 0 is an infinite loss (P-mass
(1 - gamma)(1 - q)^(n - 1), the same Q-mass on a + 1 = 0 by symmetry).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.params import Direction, KrrParams, ShuffleSetting
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View
from shuffledp.accounting.views.binned import (
    LOG_HALF,
    ROWS_PER_CHUNK,
    flat_rows,
    log_a_outside,
    split_pair_rows,
)
from shuffledp.accounting.views.split_pair import log_split_pair_delta

__all__ = ["StrongView", "log_delta_direct"]


def log_delta_direct(
    epsilons, setting: ShuffleSetting, *, direction: Direction = Direction.REMOVE
) -> np.ndarray:
    """Straightforward O(n^2) evaluation of the strong-adversary delta (tests, benchmarks).

    Sums (1 - gamma) max(P(a, c) - e^eps Q(a, c), 0) over every pair of counts (a, c) of the two
    distinguishing values, with P(a, c) = T(a - 1, c) and Q(a, c) = T(a, c - 1), T the trinomial law
    of (A, C) over n - 1 users with probabilities (q, q, 1 - 2q); ``direction=Direction.ADD`` swaps P, Q
    (``Direction.BOTH`` is refused).
    Independent of the split-pair decomposition used by :class:`StrongAdversary`.
    """
    from scipy.special import gammaln

    from shuffledp._numerics import logsumexp

    epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))
    logs = setting.krr
    n_trials = setting.n_users - 1
    a = np.arange(n_trials + 2, dtype=float)[:, None]
    c = np.arange(n_trials + 2, dtype=float)[None, :]

    def log_trinomial(x, y):
        valid = (x >= 0) & (y >= 0) & (x + y <= n_trials)
        xs, ys = np.where(valid, x, 0.0), np.where(valid, y, 0.0)
        rest = n_trials - xs - ys
        value = (
            gammaln(n_trials + 1.0)
            - gammaln(xs + 1.0)
            - gammaln(ys + 1.0)
            - gammaln(rest + 1.0)
            + (xs + ys) * logs.log_q
            + np.where(rest > 0, rest * logs.log_1m2q, 0.0)
        )
        return np.where(valid, value, -np.inf)

    log_p = log_trinomial(a - 1.0, c)
    log_q = log_trinomial(a, c - 1.0)
    direction = Direction.parse(direction)
    if direction is Direction.BOTH:
        raise ValueError(f"`direction` must be one of 'forward', 'reverse'; got {direction.value!r}.")
    if direction is Direction.ADD:
        log_p, log_q = log_q, log_p
    out = np.empty(epsilons.shape)
    for i, eps in enumerate(epsilons):
        with np.errstate(invalid="ignore"):
            gap = eps + log_q - log_p
            positive = np.isfinite(log_p) & (gap < 0)
            terms = np.where(positive, log_p + log1mexp(np.where(positive, gap, -1.0)), -np.inf)
        out[i] = min(0.0, logs.log_1mgamma + float(logsumexp(terms.ravel())))
    return out


class StrongView(View):
    """The strong adversary's pair as a view (module docstring): its outcomes are the blanket atom (both
    laws equal, loss 0), the P-outcomes (a + 1, s - a) in the split-pair windows with Q = P (s - a) / (a + 1),
    and the two infinite-loss outcomes (c = 0 under P, a + 1 = 0 under Q; merged per side). Symmetric.
    :meth:`log_delta` is the exact split-pair sum (an override held to the stream by
    tests/accounting/test_view_overrides.py)."""

    name = "strong"
    symmetric = True

    def __init__(self, setting):
        super().__init__(setting)
        self._rows_by_window: dict[float, tuple] = {}  # the rows of each window K used so far

    def _rows(self, K: float):
        """The rows of window K (:meth:`_window_rows`), computed once per K."""
        if K not in self._rows_by_window:
            self._rows_by_window[K] = self._window_rows(K)
        return self._rows_by_window[K]

    def _window_rows(self, K: float):
        """(s, log w, a_lo, a_hi, log P-mass left out, log Q-mass left out), both without 1 - gamma."""
        s, log_w, a_lo, a_hi, log_s_out = split_pair_rows(
            self.setting.n_users - 1, self.setting.krr.log_2q, self.setting.krr.log_1m2q, K
        )
        # P-outcomes (a + 1, s - a), a in [lo, hi]; a = s (c = 0, infinite loss) is in the infinity outcome,
        # so neither yielded in the rows nor left out. Their Q-mass is Tri(a + 1, s - a - 1), i.e. A in
        # [lo + 1, hi + 1] (A <= s), and the Q-mass on A = 0 (P = 0) is the Q-infinity outcome.
        log_out_p = log_a_outside(s, log_w, a_lo, a_hi, log_s_out)
        a_hi = np.minimum(a_hi, s - 1.0)
        log_out_q = log_a_outside(s, log_w, np.where(a_lo == 0, 0.0, a_lo + 1.0), a_hi + 1.0, log_s_out)
        return s, log_w, a_lo, a_hi, log_out_p, log_out_q

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        krr = self.setting.krr
        n_users, log_1mgamma = self.setting.n_users, krr.log_1mgamma
        yield OutcomeChunk(np.array([krr.log_gamma]), np.array([krr.log_gamma]), np.array([0.0]))
        if n_users > 1:
            s, log_w, a_lo, a_hi, _, _ = self._rows(K)
            step = max(1, ROWS_PER_CHUNK // max(1, int(np.max(a_hi - a_lo + 1))))
            for start in range(0, s.size, step):
                stop = min(s.size, start + step)
                ss, a, pos = flat_rows(s[start:stop], a_lo[start:stop], a_hi[start:stop])
                log_p = log_1mgamma + log_w[start:stop][pos] + log_binom_pmf_loader(a, ss, LOG_HALF, LOG_HALF)
                loss = np.log((a + 1.0) / (ss - a))
                yield OutcomeChunk(log_p, log_p - loss, loss)
        # c = 0 under P (C ~ Bin(n - 1, q_k) marginally), and a + 1 = 0 under Q by symmetry
        log_infinity = log_1mgamma + (n_users - 1) * float(np.log1p(-math.exp(krr.log_q)))
        yield OutcomeChunk(np.array([log_infinity, -np.inf]), np.array([-np.inf, log_infinity]))

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        if self.setting.n_users == 1:
            return LeftOut()
        _, _, _, _, log_out_p, log_out_q = self._rows(K)
        log_1mgamma = self.setting.krr.log_1mgamma
        return LeftOut(log_1mgamma + log_out_p, log_1mgamma + log_out_q)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: with ``upper`` the exact split-pair sum, (1 - gamma) H_{e^eps}((A + 1, C) || (A, C + 1))
        (O(sqrt(n)) per epsilon, at every eps0; ``K`` is not used: the sum certifies its own windows); without it
        the generic lower value from the stream.

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).
            K: half-width of the stream's windows (``upper=False`` only).
            upper: the exact sum (True) or the stream's sum without its left-out mass (False).

        Returns:
            log delta at each epsilon (1-D).
        """
        if not upper:
            return super().log_delta(epsilons, K=K, upper=False)
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        krr = KrrParams.of(self.setting.epsilon_local, self.setting.required_k)
        inner = log_split_pair_delta(
            eps, n_trials=self.setting.n_users - 1, log_r=krr.log_2q, log_1mr=krr.log_1m2q
        )
        return np.minimum(0.0, krr.log_1mgamma + inner)
