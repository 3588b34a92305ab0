"""Log-space numerical helpers used by the accountants.

Everything here works with natural logarithms. ``-inf`` stands for log(0). No function returns NaN
for valid input.
"""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln, logsumexp

__all__ = [
    "log_binom",
    "log_binom_pmf",
    "log1mexp",
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


def log_add(a, b):
    """log(exp(a) + exp(b)) elementwise."""
    return np.logaddexp(a, b)


def log_sub(a, b):
    """log(exp(a) - exp(b)) elementwise for a >= b; -inf where a == b."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(b), a, a + log1mexp(b - a))
