"""The clones pair of Feldman, McMillan, Talwar (FOCS 2021, Thm 3.2): exact delta (:func:`log_delta`, used
by ``feldman-numerical`` and ``clones-krr``), a direct O(n^2) enumeration for tests
(:func:`log_delta_direct`) and the binned privacy loss distribution for composition (:func:`binned`).

C ~ Bin(n - 1, r), A | C ~ Bin(C, 1/2), Delta ~ Bern(alpha), alpha = e^eps0 / (e^eps0 + 1);
P = (A + Delta, C + 1 - A - Delta), Q the swap. Generic pair (any eps0-LDP randomizer): r = e^-eps0,
weight 1. k-RR pair (our derivation, docs/reproduction-notes.md): r = 2q, and with probability
1 - (e^eps0 + 1) q both views are equal (joint convexity: delta <= (e^eps0 + 1) q H_{e^eps}(P || Q)).
With x the first coordinate the loss is log((alpha x + (1 - alpha)(c + 1 - x)) / (alpha (c + 1 - x) +
(1 - alpha) x)). Symmetric pair: one direction suffices.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, log_binom_pmf_loader
from shuffledp.accounting.params import KrrParams
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
from shuffledp.accounting.views.split_pair import log_split_pair_delta, log_split_pair_delta_direct

__all__ = ["pair_parameters", "log_delta", "log_delta_direct", "binned"]


def pair_parameters(epsilon_local: float, n_users: int, k: int | None = None) -> dict:
    """Parameters of the clones split pair (generic when ``k`` is None, k-RR otherwise), in logs.

    Returns keyword arguments for :func:`~shuffledp.accounting.views.split_pair.log_split_pair_delta` plus
    ``log_weight``: the log factor multiplying the divergence (0 for the generic pair).
    """
    binary = KrrParams.of(epsilon_local, 2)  # alpha = e^eps0 / (e^eps0 + 1) does not depend on k
    log_alpha, log_1malpha = binary.log_alpha, binary.log_1malpha
    if k is None:
        log_r, log_1mr, log_weight = -epsilon_local, float(log1mexp(-epsilon_local)), 0.0
    else:
        krr = KrrParams.of(epsilon_local, k)
        log_r, log_1mr = krr.log_2q, krr.log_1m2q
        log_weight = min(0.0, float(np.logaddexp(epsilon_local, 0.0)) + krr.log_q)
    return {
        "n_trials": n_users - 1,
        "log_r": log_r,
        "log_1mr": log_1mr,
        "log_alpha": log_alpha,
        "log_1malpha": log_1malpha,
        "log_odds": float(epsilon_local),  # log(alpha / (1 - alpha)), exact
        "log_weight": log_weight,
    }


def log_delta(epsilons: np.ndarray, epsilon_local: float, n_users: int, k: int | None) -> np.ndarray:
    """Exact log delta of the pair (generic when ``k`` is None), 0 (log -inf) from eps0 on."""
    parameters = pair_parameters(epsilon_local, n_users, k)
    log_weight = parameters.pop("log_weight")
    out = np.minimum(0.0, log_weight + log_split_pair_delta(epsilons, **parameters))
    # exactly 0 from eps0 on (the pair's largest likelihood ratio is e^eps0; rounding of
    # log(alpha / (1 - alpha)) must not leave a 1e-16 residue at eps = eps0)
    return np.where(epsilons >= epsilon_local, -np.inf, out)


def log_delta_direct(epsilons: np.ndarray, epsilon_local: float, n_users: int, k: int | None) -> np.ndarray:
    """Straightforward O(n^2) enumeration of the same pair (tests, benchmarks)."""
    parameters = pair_parameters(epsilon_local, n_users, k)
    log_weight = parameters.pop("log_weight")
    return np.minimum(0.0, log_weight + log_split_pair_delta_direct(epsilons, **parameters))


def binned(*, epsilon_local, n_users, k=None, interval, pessimistic, K=9.0, log_masses=False) -> BinnedView:
    """Binned privacy loss distribution of the pair (generic when ``k`` is None, k-RR otherwise); with
    ``log_masses`` also in log space (``BinnedView.logs``)."""
    pair = pair_parameters(epsilon_local, n_users, k)
    log_alpha, log_1malpha, log_r, log_1mr, log_weight = (
        pair["log_alpha"], pair["log_1malpha"], pair["log_r"], pair["log_1mr"], pair["log_weight"])
    alpha, one_minus_alpha = math.exp(log_alpha), math.exp(log_1malpha)
    weight = math.exp(log_weight)
    bins = Bins(log_space=log_masses)
    if weight < 1.0:
        bins.add(np.array([0]), np.array([1.0 - weight]), np.array([1.0 - weight]))
    s, log_w, a_lo, a_hi, log_s_out = split_pair_rows(n_users - 1, log_r, log_1mr, K)
    # x in [lo, hi + 1] leaves out P-mass alpha Pr(A outside [lo - 1, hi]) + (1 - alpha) Pr(A outside
    # [lo, hi + 1]) <= Pr(A outside [lo, hi]); the same for Q
    log_out = log_a_outside(s, log_w, a_lo, a_hi, log_s_out)
    width = int(np.max(a_hi - a_lo + 2))
    step = max(1, ROWS_PER_CHUNK // width)
    for start in range(0, s.size, step):
        stop = min(s.size, start + step)
        cc, x, pos = flat_rows(s[start:stop], a_lo[start:stop], a_hi[start:stop] + 1.0)  # x in [lo, hi + 1]
        log_b_x = log_binom_pmf_loader(x, cc, LOG_HALF, LOG_HALF)
        log_b_xm1 = log_binom_pmf_loader(x - 1.0, cc, LOG_HALF, LOG_HALF)
        base = log_weight + log_w[start:stop][pos]
        log_p = base + np.logaddexp(log_alpha + log_b_xm1, log_1malpha + log_b_x)
        log_q = base + np.logaddexp(log_alpha + log_b_x, log_1malpha + log_b_xm1)
        y = cc + 1.0 - x
        loss = np.log((alpha * x + one_minus_alpha * y) / (alpha * y + one_minus_alpha * x))
        bins.add(bin_index(loss, interval, pessimistic), np.exp(log_p), np.exp(log_q), log_p, log_q)
    label = "clones" if k is None else "clones-krr"
    return bins.view(interval, pessimistic, 0.0, 0.0, weight * math.exp(log_out), True, label,
                     (-math.inf, -math.inf, log_weight + log_out))
