"""The package's logsumexp (shuffledp/_numerics.py): scipy's value to the bit, by its fast path on 1-D float
arrays and by scipy itself for every other call."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp as scipy_logsumexp

from shuffledp import _numerics
from shuffledp._numerics import logsumexp


def _arrays(seed: int, count: int):
    """Random 1-D float arrays as the accounting sums them: a few to thousands of entries, spread over
    magnitudes from 1e-3 to 1e3 around an offset, with -inf entries, ties at the largest, rounded values, and
    some all -inf, +inf or nan."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        size = int(rng.integers(1, 40)) if trial % 10 else int(rng.integers(1, 3000))
        x = rng.normal(size=size) * 10 ** rng.uniform(-3, 3) + rng.normal() * 100
        kind = trial % 20
        if kind < 4:
            x[rng.random(size) < 0.3] = -np.inf
        elif kind < 6:
            x[rng.integers(0, size)] = x.max()
        elif kind == 6:
            x = np.round(x)
        elif kind == 7:
            x[:] = -np.inf
        elif kind == 8:
            x[0] = np.inf
        elif kind == 9:
            x[0] = np.nan
        yield x


def test_the_fast_path_gives_scipys_value_to_the_bit():
    for x in _arrays(seed=7, count=5000):
        ours, theirs = logsumexp(x), scipy_logsumexp(x)
        assert type(ours) is type(theirs)
        assert ours == theirs or (np.isnan(ours) and np.isnan(theirs)), x


def test_other_calls_go_to_scipy():
    rows = np.array([[0.0, -1.0, 2.5], [-np.inf, 3.0, 3.0]])
    assert np.array_equal(logsumexp(rows, axis=1), scipy_logsumexp(rows, axis=1))
    assert logsumexp([1, 2, 3]) == scipy_logsumexp([1, 2, 3])  # integers: scipy promotes
    assert logsumexp(np.array([0.0, 1.0]), b=np.array([1.0, 0.5])) == scipy_logsumexp(
        np.array([0.0, 1.0]), b=np.array([1.0, 0.5])
    )
    assert logsumexp(np.array([], dtype=float)) == scipy_logsumexp(np.array([], dtype=float))


def test_probe_a_planted_change_of_the_order_of_summation_is_caught(monkeypatch):
    """The bit-for-bit check above would fail on a fast path that sums in another order (log(sum(exp(x)))
    with the largest entry kept in the sum, the textbook form), which agrees with scipy only to ~1e-16."""

    def textbook(a, axis=None, b=None, keepdims=False, return_sign=False):
        x = np.asarray(a, dtype=float)
        largest = x.max()
        return np.log(np.sum(np.exp(x - largest))) + largest

    monkeypatch.setattr(_numerics, "logsumexp", textbook)
    mismatches = sum(
        _numerics.logsumexp(x) != scipy_logsumexp(x)
        for x in _arrays(seed=7, count=2000)
        if np.isfinite(x).all()
    )
    assert mismatches > 0
    with pytest.raises(AssertionError):
        for x in _arrays(seed=7, count=2000):
            if np.isfinite(x).all():
                assert _numerics.logsumexp(x) == scipy_logsumexp(x)
