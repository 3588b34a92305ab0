"""The strong adversary's view (Balle, Bell, Gascon, Nissim 2019, Thm 3.1 proof; Koskela, Heikkila,
Honkela 2021, Def. 1 and eq. (4.3)): exact delta (:func:`log_delta`, used by ``strong-adversary``), a
direct O(n^2) evaluation for tests (:func:`log_delta_direct`) and the binned privacy loss distribution
for composition (:func:`binned`).

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

import numpy as np

from shuffledp._numerics import log1mexp, log_binom_pmf_loader
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.views.binned import (
    LOG_HALF,
    ROWS_PER_CHUNK,
    BinnedView,
    Bins,
    bin_index,
    flat_rows,
    log_a_outside,
    split_pair_rows,
)
from shuffledp.accounting.views import own_report
from shuffledp.accounting.views.split_pair import log_split_pair_delta

__all__ = ["log_delta", "log_delta_direct", "binned"]


def log_delta(epsilons: np.ndarray, setting: ShuffleSetting) -> np.ndarray:
    """Exact log delta of the strong adversary at each epsilon (O(sqrt(n)) per epsilon); above
    :data:`~shuffledp.accounting.views.own_report.MAX_EPSILON_LOCAL_SUMMED` the differing user's own report's
    delta (its sum was measured below the truth there)."""
    if setting.epsilon_local > own_report.MAX_EPSILON_LOCAL_SUMMED:
        return own_report.log_delta(epsilons, epsilon_local=setting.epsilon_local, k=setting.k)
    krr = KrrParams.of(setting.epsilon_local, setting.k)
    inner = log_split_pair_delta(epsilons, n_trials=setting.n_users - 1, log_r=krr.log_2q, log_1mr=krr.log_1m2q)
    return np.minimum(0.0, krr.log_1mgamma + inner)


def log_delta_direct(epsilons, *, epsilon_local: float, n_users: int, k: int,
                     direction: str = "x0|x1") -> np.ndarray:
    """Straightforward O(n^2) evaluation of the strong-adversary delta (tests, benchmarks).

    Sums (1 - gamma) max(P(a, c) - e^eps Q(a, c), 0) over every pair of counts (a, c) of the two
    distinguishing values, with P(a, c) = T(a - 1, c) and Q(a, c) = T(a, c - 1), T the trinomial law
    of (A, C) over n - 1 users with probabilities (q, q, 1 - 2q); ``direction="x1|x0"`` swaps P, Q.
    Independent of the split-pair decomposition used by :class:`StrongAdversary`.
    """
    from scipy.special import gammaln

    from shuffledp._numerics import logsumexp

    epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))
    logs = KrrParams.of(epsilon_local, k)
    n_trials = n_users - 1
    a = np.arange(n_trials + 2, dtype=float)[:, None]
    c = np.arange(n_trials + 2, dtype=float)[None, :]

    def log_trinomial(x, y):
        valid = (x >= 0) & (y >= 0) & (x + y <= n_trials)
        xs, ys = np.where(valid, x, 0.0), np.where(valid, y, 0.0)
        rest = n_trials - xs - ys
        value = (gammaln(n_trials + 1.0) - gammaln(xs + 1.0) - gammaln(ys + 1.0) - gammaln(rest + 1.0)
                 + (xs + ys) * logs.log_q + np.where(rest > 0, rest * logs.log_1m2q, 0.0))
        return np.where(valid, value, -np.inf)

    log_p = log_trinomial(a - 1.0, c)
    log_q = log_trinomial(a, c - 1.0)
    if direction == "x1|x0":
        log_p, log_q = log_q, log_p
    elif direction != "x0|x1":
        raise ValueError(f"`direction` must be one of 'x0|x1', 'x1|x0'; got {direction!r}.")
    out = np.empty(epsilons.shape)
    for i, eps in enumerate(epsilons):
        with np.errstate(invalid="ignore"):
            gap = eps + log_q - log_p
            positive = np.isfinite(log_p) & (gap < 0)
            terms = np.where(positive, log_p + log1mexp(np.where(positive, gap, -1.0)), -np.inf)
        out[i] = min(0.0, logs.log_1mgamma + float(logsumexp(terms.ravel())))
    return out


def binned(*, epsilon_local, n_users, k, interval, pessimistic, K=9.0, log_masses=False) -> BinnedView:
    """Binned privacy loss distribution of the strong adversary's view (module docstring); with
    ``log_masses`` also in log space (``BinnedView.logs``)."""
    krr = KrrParams.of(epsilon_local, k)
    log_q, log_1m2q, log_1mgamma = krr.log_q, krr.log_1m2q, krr.log_1mgamma
    bins = Bins(log_space=log_masses)
    gamma = -math.expm1(log_1mgamma)
    bins.add(np.array([0]), np.array([gamma]), np.array([gamma]))
    if n_users == 1:
        return bins.view(interval, pessimistic, math.exp(log_1mgamma), math.exp(log_1mgamma), 0.0, True, "strong")
    s, log_w, a_lo, a_hi, log_s_out = split_pair_rows(n_users - 1, math.log(2.0) + log_q, log_1m2q, K)
    # P-outcomes (a + 1, s - a), a in [lo, hi]; a = s (c = 0, infinite loss) is counted in the infinity
    # mass, so it is neither binned nor counted as left out. Their Q-mass is Tri(a + 1, s - a - 1), i.e.
    # A in [lo + 1, hi + 1] (A <= s), and the Q-mass on A = 0 (P = 0) is the Q-infinity mass.
    log_out_p = log_a_outside(s, log_w, a_lo, a_hi, log_s_out)
    a_hi = np.minimum(a_hi, s - 1.0)
    log_out_q = log_a_outside(s, log_w, np.where(a_lo == 0, 0.0, a_lo + 1.0), a_hi + 1.0, log_s_out)
    log_out = max(log_out_p, log_out_q)
    step = max(1, ROWS_PER_CHUNK // max(1, int(np.max(a_hi - a_lo + 1))))
    for start in range(0, s.size, step):
        stop = min(s.size, start + step)
        ss, a, pos = flat_rows(s[start:stop], a_lo[start:stop], a_hi[start:stop])
        log_p = log_1mgamma + log_w[start:stop][pos] + log_binom_pmf_loader(a, ss, LOG_HALF, LOG_HALF)
        loss = np.log((a + 1.0) / (ss - a))
        bins.add(bin_index(loss, interval, pessimistic), np.exp(log_p), np.exp(log_p - loss), log_p, log_p - loss)
    # P-mass with c = 0: C ~ Bin(n - 1, q_k) marginally
    log_inf = log_1mgamma + (n_users - 1) * float(np.log1p(-math.exp(log_q)))
    dropped = math.exp(log_1mgamma + log_out)
    return bins.view(interval, pessimistic, math.exp(log_inf), math.exp(log_inf), dropped, True, "strong",
                     (log_inf, log_inf, log_1mgamma + log_out))
