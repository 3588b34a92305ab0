"""Log-space numerical helpers used by the accountants.

Everything here works with natural logarithms. ``-inf`` stands for log(0). No function returns NaN
for valid input.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = [
    "log_binom",
    "log_binom_pmf",
    "log_binom_pmf_loader",
    "log1mexp",
    "log_expm1",
    "log_add",
    "log_sub",
    "logsumexp",
]


def log_binom(n, k):
    """log C(n, k) elementwise; -inf where k < 0 or k > n (the coefficient is 0)."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    valid = (k >= 0) & (k <= n)
    ks = np.where(valid, k, 0.0)
    ns = np.where(valid, n, 0.0)
    out = gammaln(ns + 1.0) - gammaln(ks + 1.0) - gammaln(ns - ks + 1.0)
    return np.where(valid, out, -np.inf)


def log_binom_pmf(k, n, log_p, log_q):
    """log of C(n, k) p^k q^(n-k) given log p and log q = log(1-p), elementwise.

    Passing both logs lets callers keep full precision when p is tiny or close to 1.
    Terms 0 * log 0 are treated as 0 (so p = 0 gives the point mass at k = 0).
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore"):
        term_p = np.where(k == 0, 0.0, k * log_p)
        term_q = np.where(n - k == 0, 0.0, (n - k) * log_q)
    return log_binom(n, k) + term_p + term_q


_STIRLING = (1.0 / 12.0, 1.0 / 360.0, 1.0 / 1260.0, 1.0 / 1680.0, 1.0 / 1188.0)
_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))


def _stirling_error_formula(n):
    """log(n!) - log(sqrt(2 pi n) (n/e)^n) for n >= 1 (Loader 2000): series above 15, gammaln below."""
    n = np.asarray(n, dtype=float)
    s0, s1, s2, s3, s4 = _STIRLING
    nn = n * n
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(
            n > 500,
            (s0 - s1 / nn) / n,
            np.where(
                n > 80,
                (s0 - (s1 - s2 / nn) / nn) / n,
                np.where(
                    n > 35,
                    (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n,
                    (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n,
                ),
            ),
        )
        direct = gammaln(n + 1.0) - (n + 0.5) * np.log(n) + n - _LOG_SQRT_2PI
    return np.where(n <= 15, direct, value)


_STIRLING_TABLE_SIZE = 4097
_STIRLING_TABLE = np.concatenate(
    [[0.0], _stirling_error_formula(np.arange(1, _STIRLING_TABLE_SIZE, dtype=float))]
)


def _stirling_error(n):
    """Stirling error at integer n >= 1 (table below 4097, two-term series above)."""
    n = np.asarray(n, dtype=float)
    s0, s1 = _STIRLING[0], _STIRLING[1]
    out = np.asarray((s0 - s1 / (n * n)) / n, dtype=float)
    small = n < _STIRLING_TABLE_SIZE
    if small.any():
        out = out.copy() if out.ndim else out.reshape(1).copy()
        out.reshape(-1)[small.reshape(-1)] = _STIRLING_TABLE[n[small].astype(np.int64)]
        out = out.reshape(n.shape)
    return out


def _deviance(x, n, log_p, difference):
    """bd0(x, M) = x log(x / M) + M - x >= 0 with M = n p, p = e^log_p, for x >= 1 (Loader 2000).

    ``difference`` is x - M computed by the caller without cancellation. Near x = M the series in
    v = (x - M) / (x + M) is summed; elsewhere bd0 = x log1p((x - M) / M) - (x - M), or with logs when
    M underflows. No log of a large number is ever subtracted.
    """
    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    mean = n * np.exp(log_p)
    tiny = mean < 1e-280  # p underflows or nearly: logs (x >= 1 is then far from M)
    close = ~tiny & (np.abs(difference) < 0.1 * (x + mean))
    every = bool(close.all())  # then the general form is not needed (each value is computed on its own)
    if not every:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            safe_mean = np.where(tiny, 1.0, mean)
            general = np.where(
                tiny,
                x * (np.log(x) - np.log(n) - log_p) - x,
                x * np.log1p(difference / safe_mean) - difference,
            )
        if not close.any():
            return general
    if every and x.ndim == 1 and np.shape(difference) == x.shape:  # the same values as the masked copies
        xc, dc = x, np.asarray(difference, dtype=float)
    else:
        xc, dc = x[close], np.broadcast_to(difference, x.shape)[close]
    v = dc / (2.0 * xc - dc)  # (x - M) / (x + M)
    total = dc * v
    term = 2.0 * xc * v
    v2 = v * v
    # The test below is first made at the term where the largest |v| should pass it (step / total ~
    # v^(2j) / (2j + 1)); the values do not depend on that: once a value's step is below 1e-17 of its
    # total (half an ulp), every later step is 100 times smaller still and leaves it unchanged.
    largest = float(np.max(np.abs(v))) if v.size else 0.0
    first_test = min(39, max(1, int(-39.0 / (2.0 * math.log(largest))))) if 0.0 < largest < 1.0 else 1
    for j in range(1, 40):  # |v| < 0.1: each term is at least 100 times smaller
        term = term * v2
        step = term / (2 * j + 1)
        total = total + step
        if j >= first_test and not np.any(np.abs(step) > 1e-17 * np.abs(total)):
            break
    if every:
        return np.asarray(total, dtype=float).reshape(close.shape)
    out = np.array(general, dtype=float)
    out[close] = total
    return out


def log_binom_pmf_loader(k, n, log_p, log_q):
    """log of C(n, k) p^k q^(n-k) to full relative precision for every n (Loader 2000, "saddle point").

    ``log_binom_pmf`` subtracts log-gamma values of size n log n, which leaves an absolute error of
    about n log n * 1e-16 in the log (2e-6 at n = 1e9); here the binomial coefficient and the powers
    are combined into Stirling-error and deviance terms that are each small, so the error stays
    ~1e-15 relative. ``log_p`` and ``log_q`` = log(1 - p) are given as logs (p may be e^-1e300);
    ``k`` outside [0, n] gives -inf. Elementwise over arrays ``k`` and ``n``.
    """
    k, n = np.broadcast_arrays(np.asarray(k, dtype=float), np.asarray(n, dtype=float))
    inner = (k > 0) & (k < n)
    every = bool(inner.all())  # then no value is set by the edge cases, and no masked copies are needed
    if every:
        out = None
        kk, nn = k.ravel(), n.ravel()  # C order, as the masked copies k[inner], n[inner]
    else:
        out = np.full(k.shape, -np.inf)
        with np.errstate(invalid="ignore", over="ignore"):  # n log q may be below -1.8e308: -inf
            lower = (k == 0) & (n >= 0)
            out[lower] = np.where(n[lower] == 0, 0.0, n[lower] * log_q)
            upper = (k == n) & (n > 0)
            out[upper] = n[upper] * log_p
        if not inner.any():
            return out
        kk, nn = k[inner], n[inner]
    rest = nn - kk  # n - k is exact (integers below 2^53)
    # k - n p without cancellation: from p when p <= 1/2, from q = 1 - p otherwise
    if log_p <= log_q:
        difference = kk - nn * np.exp(log_p)
    else:
        difference = nn * np.exp(log_q) - rest
    value = (
        _stirling_error(nn)
        - _stirling_error(kk)
        - _stirling_error(rest)
        - _deviance(kk, nn, log_p, difference)
        - _deviance(rest, nn, log_q, -difference)
    )
    # log(2 pi k (n - k) / n)
    value = value - 0.5 * (np.log(2.0 * np.pi) + np.log(kk) + np.log(rest) - np.log(nn))
    if every:
        return value.reshape(k.shape)
    out[inner] = value
    return out


def log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate everywhere (Maechler 2012); -inf at x = 0."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(
            x > -np.log(2.0),
            np.log(-np.expm1(np.minimum(x, 0.0))),
            np.log1p(-np.exp(np.minimum(x, 0.0))),
        )
    return np.where(x >= 0, -np.inf, out)


def log_expm1(x):
    """log(e^x - 1) for x >= 0, accurate for every finite x (no overflow above x = 709); -inf at 0.

    Small x: log(expm1(x)) (expm1 keeps full precision); large x: x + log(1 - e^-x).
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        small = np.log(np.expm1(np.minimum(x, 1.0)))
        large = x + np.log1p(-np.exp(-np.maximum(x, 1.0)))
    return np.where(x > 1.0, large, small)


def log_add(a, b):
    """log(exp(a) + exp(b)) elementwise."""
    return np.logaddexp(a, b)


def log_sub(a, b):
    """log(exp(a) - exp(b)) elementwise for a >= b; -inf where a == b."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(b), a, a + log1mexp(b - a))
