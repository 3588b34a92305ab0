"""Windows of a binomial law: which counts a sum visits, and what it certifies about the rest.

Every view sums a binomial (or a mixture over one) only inside an integer window; what the window
leaves out is either bounded *above* (and added to the result of an upper bound) or dropped (lower
bounds). Two kinds of window are used:

* **Bernstein windows** (:func:`bernstein_half_width`, :func:`sd_window`, :func:`bernstein_window`):
  mean +- K^2 / 6 + sqrt(K^4 / 36 + K^2 var). By Bernstein's inequality each side leaves at most
  e^(-K^2 / 2) of the mass outside, for skewed binomials (small variance) as well as near-Gaussian
  ones. The window itself certifies nothing: callers that need the left-out mass compute it exactly
  (:func:`log_outside`) or bound it separately.
* **Standard-deviation windows with their exact outside mass** (:func:`log_window`, :func:`pmf_window`):
  mean +- (sds sd + 30), returned together with the exact log mass outside (binomial tails).

:func:`sd_window` (p given as a probability) and :func:`bernstein_window` (p given by its logs, the
variance formed as n p (1 - p) directly) are the same window; they are kept apart because their
roundings differ in the last bit and the windows' ends are floors and ceilings of them. Likewise
:func:`log_outside` (elementwise, ``np.logaddexp``) and the outside mass of :func:`log_window` (scalar,
``logsumexp``) are the same exact quantity, combined with different roundings.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import logsumexp
from shuffledp.accounting.numerics.binomial import log_pmf, log_sf

__all__ = ["bernstein_half_width", "sd_window", "bernstein_window", "log_outside", "log_window", "pmf_window"]


def _half_width_of_variance(var, K):
    return K * K / 6.0 + np.sqrt(K**4 / 36.0 + K * K * var)


def _clipped(n, mean, half):
    return np.clip(np.floor(mean - half), 0.0, n), np.clip(np.ceil(mean + half), 0.0, n)


def bernstein_half_width(sd, K):
    """Half-width around the mean of a binomial with standard deviation ``sd`` outside which
    Bernstein's inequality leaves at most e^(-K^2 / 2) of the mass on each side."""
    return _half_width_of_variance(np.asarray(sd, dtype=float) ** 2, K)


def sd_window(n, p, K):
    """Integer Bernstein window [lo, hi] of Bin(n, p) (arrays), clipped to [0, n]: at most e^(-K^2 / 2)
    of the mass lies outside on each side (not computed here; see :func:`log_outside`)."""
    n = np.asarray(n, dtype=float)
    return _clipped(n, n * p, bernstein_half_width(np.sqrt(n * p * (1.0 - p)), K))


def bernstein_window(n, log_p, log_1mp, K):
    """Integer Bernstein window [lo, hi] of Bin(n, p), p = e^log_p, clipped to [0, n]: at most
    e^(-K^2 / 2) of the mass lies outside on each side. Closed form; the callers bound what it leaves
    out separately, so it only decides how much is summed exactly."""
    n = np.asarray(n, dtype=float)
    mean = n * math.exp(log_p)
    return _clipped(n, mean, _half_width_of_variance(mean * math.exp(log_1mp), K))


def log_outside(lo, hi, n, log_p, log_1mp):
    """log Pr(X < lo or X > hi), X ~ Bin(n, p), exact (elementwise): the mass outside [lo, hi]."""
    lo, hi, n = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (lo, hi, n)))
    upper = np.where(hi < n, log_sf(hi + 1.0, n, log_p, log_1mp), -np.inf)
    lower = np.where(lo > 0, log_sf(n - lo + 1.0, n, log_1mp, log_p), -np.inf)  # Pr(n - X >= n - lo + 1)
    return np.logaddexp(upper, lower)


def log_window(N: int, log_pi: float, log_1mpi: float, sds: float) -> tuple[int, np.ndarray, float]:
    """(lo, log pmf of Bin(N, pi) on lo..hi, log of the exact mass outside): mean +- (sds sd + 30), clipped
    to 0..N (the whole support when narrow). The mass outside is exact, not a bound."""
    sd = math.sqrt(N * math.exp(log_pi + log_1mpi))
    mean, half = N * math.exp(log_pi), sds * sd + 30.0
    lo, hi = max(0, int(math.floor(mean - half))), min(N, int(math.ceil(mean + half)))
    log_w = log_pmf(np.arange(lo, hi + 1, dtype=float), N, log_pi, log_1mpi)
    outside = []
    if hi < N:
        outside.append(float(log_sf(hi + 1, N, log_pi, log_1mpi)))
    if lo > 0:
        outside.append(float(log_sf(N - lo + 1, N, log_1mpi, log_pi)))
    return lo, log_w, (float(logsumexp(np.array(outside))) if outside else -np.inf)


def pmf_window(N: int, log_p: float, log_q: float, sds: float) -> tuple[int, int, np.ndarray, float]:
    """:func:`log_window` in linear space: (lo, hi, pmf on lo..hi, exact mass outside) of Bin(N, p),
    q = 1 - p (whole support when narrow)."""
    lo, log_w, log_out = log_window(N, log_p, log_q, sds)
    return lo, lo + log_w.size - 1, np.exp(log_w), math.exp(log_out)
