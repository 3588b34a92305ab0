"""Sums of positive terms for the k = 2 pair sums: log-sum-exp of rows and of a few scalars, and the
convolution of positive arrays in chunks (numpy's direct convolution slows once the shorter array leaves
the cache)."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["convolve_positive", "log_sum_rows", "log_sum_scalars"]


def log_sum_rows(x: np.ndarray) -> np.ndarray:
    """log sum exp along axis 1 (rows of -inf give -inf)."""
    top = np.max(x, axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(x - safe[:, None]), axis=1)) + safe


def convolve_positive(x: np.ndarray, y: np.ndarray, direct_up_to: int, chunk: int = 2048) -> np.ndarray:
    """``np.convolve(x, y)`` of positive arrays; when the shorter is longer than ``direct_up_to``, as the
    sum of its convolutions with chunks of ``chunk`` values of the shorter one (numpy's direct
    convolution slows ~5x once the shorter array leaves the cache). Every value is a sum of positive
    products either way (relative error <= length x 2^-52 in any order), not the same last bits."""
    if y.size > x.size:
        x, y = y, x
    if y.size <= direct_up_to:
        return np.convolve(x, y)
    out = np.zeros(x.size + y.size - 1)
    for k in range(0, y.size, chunk):
        part = np.convolve(x, y[k : k + chunk])
        out[k : k + part.size] += part
    return out


def log_sum_scalars(values: list[float]) -> float:
    """log sum exp of a few floats with ``math`` (for keys: relative error ~1e-15, far inside their cushion;
    scipy's logsumexp costs ~0.3 ms a call)."""
    top = max(values)
    if top == -math.inf:
        return top
    return top + math.log(math.fsum(math.exp(v - top) for v in values))
