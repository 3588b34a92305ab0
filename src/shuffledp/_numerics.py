"""Log-space numerical helpers shared across the package (the accountants, the mechanisms).

Everything here works with natural logarithms. ``-inf`` stands for log(0). No function returns NaN
for valid input. The binomial pmf lives in :mod:`shuffledp.accounting.numerics.binomial`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp as _scipy_logsumexp

__all__ = [
    "log1mexp",
    "log_expm1",
    "log_add",
    "log_sub",
    "logsumexp",
]


_LOG_2 = float(np.log(2.0))


def _log1mexp_near_zero(x):
    return np.log(-np.expm1(np.minimum(x, 0.0)))


def _log1mexp_far(x):
    return np.log1p(-np.exp(np.minimum(x, 0.0)))


def log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate everywhere (Maechler 2012); -inf at x = 0.

    One value (most calls: the searches' scalars) takes only its own branch, by the same ufuncs on the same
    0-d array as the elementwise form, so the same bits.

    Args:
        x: array-like of values <= 0 (x >= 0 gives -inf).

    Returns:
        log(1 - exp(x)) as an array of x's shape (0-d for one value).
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if x.ndim == 0:
            if x >= 0:
                return np.array(-np.inf)
            return np.array(_log1mexp_near_zero(x) if x > -_LOG_2 else _log1mexp_far(x))
        out = np.where(x > -_LOG_2, _log1mexp_near_zero(x), _log1mexp_far(x))
    return np.where(x >= 0, -np.inf, out)


def _log_expm1_small(x):
    return np.log(np.expm1(np.minimum(x, 1.0)))


def _log_expm1_large(x):
    return x + np.log1p(-np.exp(-np.maximum(x, 1.0)))


def log_expm1(x):
    """log(e^x - 1) for x >= 0, accurate for every finite x (no overflow above x = 709); -inf at 0.

    Small x: log(expm1(x)) (expm1 keeps full precision); large x: x + log(1 - e^-x). One value takes only
    its own branch (the same ufuncs on the same 0-d array, so the same bits).

    Args:
        x: array-like of values >= 0.

    Returns:
        log(e^x - 1) as an array of x's shape (0-d for one value).
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        if x.ndim == 0:
            return np.array(_log_expm1_large(x) if x > 1.0 else _log_expm1_small(x))
        return np.where(x > 1.0, _log_expm1_large(x), _log_expm1_small(x))


def log_add(a, b):
    """log(exp(a) + exp(b)) elementwise."""
    return np.logaddexp(a, b)


def log_sub(a, b):
    """log(exp(a) - exp(b)) elementwise for a >= b; -inf where a == b."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(b), a, a + log1mexp(b - a))


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False):
    """:func:`scipy.special.logsumexp`, to the bit, without its per-call overhead on a 1-D float array.

    A 1-D float64 array with a finite largest entry and no other argument (the form of most calls here, in
    loops of thousands) is summed by scipy's own steps in the same order -- the largest entries m times
    taken out, the rest shifted by it, exponentiated and summed, log1p(s / m) + log(m) + max -- with plain
    numpy; a result that is not finite, and every other call, goes to scipy itself.

    Args:
        a: the logs; axis, b, keepdims, return_sign: as scipy's.

    Returns:
        scipy's value.
    """
    if axis is None and b is None and not keepdims and not return_sign:
        x = np.asarray(a)
        if x.ndim == 1 and x.dtype == np.float64 and x.size:
            largest = x.max()
            if np.isfinite(largest):
                top = x == largest
                count = np.float64(np.count_nonzero(top))
                with np.errstate(divide="ignore", invalid="ignore"):
                    total = np.sum(np.exp(np.where(top, -np.inf, x) - largest))
                    total = total if total == 0 else total / count
                    out = np.log1p(total) + np.log(count) + largest
                if np.isfinite(out):
                    return out
    if return_sign:
        return _scipy_logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    return _scipy_logsumexp(a, axis=axis, b=b, keepdims=keepdims)
