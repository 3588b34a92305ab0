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
variance formed as n_trials p (1 - p) directly) are the same window; they are kept apart because their
roundings differ in the last bit and the windows' ends are floors and ceilings of them. Likewise
:func:`log_outside` (elementwise, ``np.logaddexp``) and the outside mass of :func:`log_window` (scalar,
``logsumexp``) are the same exact quantity, combined with different roundings.

The binomial's number of trials is ``n_trials`` (the user count is ``n_users``; the views pass n - 1,
n - s, s, ...).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import logsumexp
from shuffledp.accounting.numerics.binomial import log_pmf, log_sf

__all__ = [
    "bernstein_half_width",
    "sd_window",
    "bernstein_window",
    "log_outside",
    "log_window",
    "pmf_window",
    "pmf_windows",
]


def _half_width_of_variance(var, K):
    return K * K / 6.0 + np.sqrt(K**4 / 36.0 + K * K * var)


def _clipped(n_trials, mean, half):
    return np.clip(np.floor(mean - half), 0.0, n_trials), np.clip(np.ceil(mean + half), 0.0, n_trials)


def bernstein_half_width(sd, K):
    """Half-width around the mean of a binomial with standard deviation ``sd`` outside which
    Bernstein's inequality leaves at most e^(-K^2 / 2) of the mass on each side."""
    return _half_width_of_variance(np.asarray(sd, dtype=float) ** 2, K)


def sd_window(n_trials, p, K):
    """Integer Bernstein window [lo, hi] of Bin(n_trials, p) (arrays), clipped to [0, n_trials]: at most e^(-K^2 / 2)
    of the mass lies outside on each side (not computed here; see :func:`log_outside`)."""
    n_trials = np.asarray(n_trials, dtype=float)
    return _clipped(n_trials, n_trials * p, bernstein_half_width(np.sqrt(n_trials * p * (1.0 - p)), K))


def bernstein_window(n_trials, log_p, log_1mp, K):
    """Integer Bernstein window [lo, hi] of Bin(n_trials, p), p = e^log_p, clipped to [0, n_trials]: at most
    e^(-K^2 / 2) of the mass lies outside on each side. Closed form; the callers bound what it leaves
    out separately, so it only decides how much is summed exactly."""
    n_trials = np.asarray(n_trials, dtype=float)
    mean = n_trials * math.exp(log_p)
    return _clipped(n_trials, mean, _half_width_of_variance(mean * math.exp(log_1mp), K))


def log_outside(lo, hi, n_trials, log_p, log_1mp):
    """log Pr(X < lo or X > hi), X ~ Bin(n_trials, p), exact (elementwise): the mass outside [lo, hi]."""
    lo, hi, n_trials = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (lo, hi, n_trials)))
    upper = np.where(hi < n_trials, log_sf(hi + 1.0, n_trials, log_p, log_1mp), -np.inf)
    lower = np.where(
        lo > 0, log_sf(n_trials - lo + 1.0, n_trials, log_1mp, log_p), -np.inf
    )  # Pr(n_trials - X >= n_trials - lo + 1)
    return np.logaddexp(upper, lower)


def _window_ends(n_trials: int, log_pi: float, log_1mpi: float, sds: float) -> tuple[int, int]:
    """(lo, hi) of :func:`log_window`: mean +- (sds sd + 30), clipped to 0..n_trials."""
    sd = math.sqrt(n_trials * math.exp(log_pi + log_1mpi))
    mean, half = n_trials * math.exp(log_pi), sds * sd + 30.0
    return max(0, int(math.floor(mean - half))), min(n_trials, int(math.ceil(mean + half)))


def log_window(n_trials: int, log_pi: float, log_1mpi: float, sds: float) -> tuple[int, np.ndarray, float]:
    """(lo, log pmf of Bin(n_trials, pi) on lo..hi, log of the exact mass outside): mean +- (sds sd + 30), clipped
    to 0..n_trials (the whole support when narrow). The mass outside is exact, not a bound."""
    lo, hi = _window_ends(n_trials, log_pi, log_1mpi, sds)
    log_w = log_pmf(np.arange(lo, hi + 1, dtype=float), n_trials, log_pi, log_1mpi)
    outside = []
    if hi < n_trials:
        outside.append(float(log_sf(hi + 1, n_trials, log_pi, log_1mpi)))
    if lo > 0:
        outside.append(float(log_sf(n_trials - lo + 1, n_trials, log_1mpi, log_pi)))
    return lo, log_w, (float(logsumexp(np.array(outside))) if outside else -np.inf)


def pmf_window(n_trials: int, log_p: float, log_q: float, sds: float) -> tuple[int, int, np.ndarray, float]:
    """:func:`log_window` in linear space: (lo, hi, pmf on lo..hi, exact mass outside) of Bin(n_trials, p),
    q = 1 - p (whole support when narrow)."""
    lo, log_w, log_out = log_window(n_trials, log_p, log_q, sds)
    return lo, lo + log_w.size - 1, np.exp(log_w), math.exp(log_out)


def pmf_windows(trials: list[int], log_p: float, log_q: float, sds: float) -> list[tuple]:
    """:func:`pmf_window` of Bin(t, p) for each t in ``trials`` at once: the same windows and the same values
    (each log pmf, tail and exponential is elementwise), from one call of :func:`log_pmf` over every window's
    counts and one :func:`log_sf` per side over every window's tail, instead of up to three calls a window.

    Args:
        trials: the numbers of trials, one window each.
        log_p: log p.
        log_q: log (1 - p).
        sds: the window's half width in standard deviations (plus 30), as :func:`log_window`'s.

    Returns:
        One (lo, hi, pmf on lo..hi, exact mass outside) per entry of ``trials``, as :func:`pmf_window` gives it.
    """
    ends = [_window_ends(t, log_p, log_q, sds) for t in trials]
    counts = np.concatenate([np.arange(lo, hi + 1, dtype=float) for lo, hi in ends])
    sizes = [hi - lo + 1 for lo, hi in ends]
    pmf = np.exp(log_pmf(counts, np.repeat(np.array(trials, dtype=float), sizes), log_p, log_q))
    above = [i for i, (t, (_, hi)) in enumerate(zip(trials, ends)) if hi < t]
    below = [i for i, (lo, _) in enumerate(ends) if lo > 0]
    outside: list[list[float]] = [[] for _ in trials]
    if above:
        upper_tails = log_sf(
            np.array([ends[i][1] + 1 for i in above], dtype=float),
            np.array([trials[i] for i in above], dtype=float),
            log_p,
            log_q,
        )
        for i, value in zip(above, upper_tails):
            outside[i].append(float(value))
    if below:
        lower_tails = log_sf(
            np.array([trials[i] - ends[i][0] + 1 for i in below], dtype=float),
            np.array([trials[i] for i in below], dtype=float),
            log_q,
            log_p,
        )
        for i, value in zip(below, lower_tails):
            outside[i].append(float(value))
    windows, start = [], 0
    for (lo, hi), size, out in zip(ends, sizes, outside):
        # one tail: its log, as logsumexp gives it (log1p(0) + log(1) + v = v, and the same exp at v = -0.0)
        log_out = (float(logsumexp(np.array(out))) if len(out) > 1 else out[0]) if out else -np.inf
        windows.append((lo, hi, pmf[start : start + size], math.exp(log_out)))
        start += size
    return windows
