"""Binomial pieces of the k = 2 pair sums: pmf ranges kept across epsilons
(:class:`~shuffledp.accounting.numerics.binomial.LogPmfRange`), the
summation windows (:func:`window_size`) and the keys' windows whose outside mass is bounded by Bernstein's
inequality (:func:`key_window`), and bounds on a binomial tail beyond a window: a geometric lower bound
(:func:`log_tail_below`, raising a key) and a Chernoff upper bound (:func:`log_tail_above`, for a key's
lower value). Each is an upper bound on the pair sum's delta once used there
(:mod:`~shuffledp.accounting.worst_case.k2.pair_search`, "Lazy bounds", "Deciding with keys")."""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import LogPmfRange, log_pmf

__all__ = ["WINDOW_SDS", "key_window", "log_tail_above", "log_tail_below", "window_size"]

#: the half-width of the pair sums' windows in standard deviations (plus 30)
WINDOW_SDS = 20.0


def key_window(n_trials: int, log_pi: float, log_1mpi: float, sds: float) -> tuple[int, np.ndarray, float]:
    """:func:`~shuffledp.accounting.numerics.windows.log_window`'s window with an upper bound on the mass
    outside it instead of the exact mass: Bernstein, Pr(|X - mean| > t) <= 2 e^(-t^2 / (2 (var + t / 3)))
    (every count outside lies more than t = sds sd + 30 from the mean; a side clipped at 0 or n_trials has none)."""
    sd = math.sqrt(n_trials * math.exp(log_pi + log_1mpi))
    mean, half = n_trials * math.exp(log_pi), sds * sd + 30.0
    lo, hi = max(0, int(math.floor(mean - half))), min(n_trials, int(math.ceil(mean + half)))
    log_w = log_pmf(np.arange(lo, hi + 1, dtype=float), n_trials, log_pi, log_1mpi)
    sides = (lo > 0) + (hi < n_trials)
    log_out = math.log(sides) - half * half / (2.0 * (sd * sd + half / 3.0)) if sides else -np.inf
    return lo, log_w, log_out


def window_size(n_trials: int, log_pi: float, log_1mpi: float, sds: float = WINDOW_SDS) -> int:
    """The number of values of :func:`~shuffledp.accounting.numerics.windows.log_window`'s window."""
    sd = math.sqrt(n_trials * math.exp(log_pi + log_1mpi))
    mean, half = n_trials * math.exp(log_pi), sds * sd + 30.0
    return min(n_trials, int(math.ceil(mean + half))) - max(0, int(math.floor(mean - half))) + 1


def log_tail_below(y: int, other: LogPmfRange) -> float:
    """A lower bound on log Pr(L >= y), L ~ Bin(N, pi) (for keys): the pmf at y times the geometric sum
    of the next M - 1 terms (M ~ one sd) at the smallest ratio among them, pmf(k + 1) / pmf(k) =
    (N - k) pi / ((k + 1) (1 - pi)) falling in k, lowered by a relative 1e-9 for rounding."""
    N = other.n_trials
    if y > N:
        return -np.inf
    if y <= 0:
        return 0.0
    M = max(1, min(int(math.sqrt(N * math.exp(other.log_pi + other.log_1mpi))), N - y + 1))
    k = y + M - 2  # the last ratio used
    log_r = math.log(N - k) - math.log(k + 1) + other.log_pi - other.log_1mpi if M > 1 else 0.0
    if M == 1:
        log_sum = 0.0
    elif log_r >= 0.0:
        log_sum = math.log(M)
    else:
        log_sum = float(log1mexp(M * log_r)) - float(log1mexp(log_r))
    return float(other(y, y)[0]) + log_sum - 1e-9


def log_tail_above(y: int, other: LogPmfRange) -> float:
    """An upper bound on log Pr(L >= y), L ~ Bin(N, pi) (for keys' lower values): Chernoff,
    Pr(L >= y) <= e^(-N KL(y / N || pi)) for y >= N pi (else 1), raised by a relative 1e-6 for rounding."""
    N = other.n_trials
    if y > N:
        return -np.inf
    if y <= N * math.exp(other.log_pi):
        return 0.0
    x = y / N
    kl = x * (math.log(x) - other.log_pi) + ((1.0 - x) * (math.log1p(-x) - other.log_1mpi) if y < N else 0.0)
    return min(0.0, -N * kl * (1.0 - 1e-6) + 1e-6)
