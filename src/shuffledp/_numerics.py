"""Log-space numerical helpers shared across the package (the accountants, the mechanisms).

Everything here works with natural logarithms. ``-inf`` stands for log(0). No function returns NaN
for valid input. The binomial pmf lives in :mod:`shuffledp.accounting.numerics.binomial`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "log1mexp",
    "log_expm1",
    "log_add",
    "log_sub",
    "logsumexp",
]


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
