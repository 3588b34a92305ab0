"""The package's log-sum-exps (shuffledp/_numerics.py): the three scipy-exact forms (``logsumexp``,
``row_logsumexp``, ``mgf_logsumexp``) give scipy's value to the bit, by scipy's steps where they apply and by
scipy itself for every other call; ``segment_logsumexp`` (the textbook form per segment) is close to it.
The forms' own callers test them on their own arrays too (test_composed_tail.py: the tail grid's rows;
test_self_convolve.py: the accountants' mass arrays)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp as scipy_logsumexp

from shuffledp import _numerics
from shuffledp._numerics import (
    MgfMasses,
    binned_logsumexp,
    logsumexp,
    mgf_logsumexp,
    row_logsumexp,
    segment_logsumexp,
)


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


def _same_bits(ours, theirs) -> bool:
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    return ours.dtype == theirs.dtype and ours.shape == theirs.shape and ours.tobytes() == theirs.tobytes()


def _corners():
    """Small 1-D arrays at the corners: one element, zeros, -inf, ties at the largest, inf, NaN."""
    inf, nan = np.inf, np.nan
    return [
        np.array(v, dtype=float)
        for v in (
            [0.0],
            [-3.5],
            [-inf],
            [inf],
            [nan],
            [0.0, 0.0, 0.0],
            [0.0, -inf, 0.0],
            [-inf, -inf],
            [1.0, 1.0, -2.0],
            [700.0, 700.0, 1.0],
            [-745.0, -745.0, -800.0],
            [1e308, 1e308],
            [inf, 0.0, -inf],
            [-inf, inf],
            [0.0, nan, 1.0],
        )
    ]


def _rows(seed: int, count: int):
    """2-D arrays of random rows with each kind of corner in some rows: ties, zeros, -inf entries, one
    column, and (in some arrays) a row of -inf, an inf or a NaN (scipy's own path)."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n_rows, n_cols = int(rng.integers(1, 12)), int(rng.choice([1, 2, 3, 17, 400]))
        rows = rng.normal(size=(n_rows, n_cols)) * 10 ** rng.uniform(-3, 3) + rng.normal() * 100
        rows[rng.random(rows.shape) < 0.2] = -np.inf
        rows[0] = 0.0
        rows[-1, rng.integers(0, n_cols)] = rows[-1].max()
        kind = trial % 8
        if kind == 1:
            rows[rng.integers(0, n_rows)] = -np.inf
        elif kind == 2:
            rows[rng.integers(0, n_rows), 0] = np.inf
        elif kind == 3:
            rows[rng.integers(0, n_rows), 0] = np.nan
        elif kind == 4:
            rows = np.round(rows)
        yield rows


def _masses(seed: int, count: int):
    """Mass arrays: one element, runs of zeros, all zero, a tiny negative mass, masses summing to zero."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        size = int(rng.integers(1, 3)) if trial % 5 == 0 else int(rng.integers(1, 500))
        masses = rng.random(size) ** int(rng.integers(1, 20))
        masses[rng.random(size) < rng.random()] = 0.0
        kind = trial % 9
        if kind == 1:
            masses[:] = 0.0
        elif kind == 2:
            masses[rng.integers(0, size)] = -1e-17
        elif kind == 3:
            masses[-1] = -masses[-1]
        elif kind == 4 and size > 1:
            masses[: size // 2] = 0.0
            masses[-1] = -masses[-2]
        yield masses / max(abs(masses.sum()), 1.0)


def test_every_scipy_exact_form_is_scipys_to_the_bit():
    """The three scipy-exact forms against ``scipy.special.logsumexp`` itself, bit for bit (NaN where scipy
    gives NaN), on random arrays and at the corners: zeros, -inf, one element, ties at the largest, and
    non-finite cases (inf, NaN, a row of -inf, no non-zero mass, an overflowing order)."""
    with np.errstate(invalid="ignore", over="ignore"):
        ones = [*_corners(), *_arrays(seed=3, count=1000)]
        for x in ones:
            assert _same_bits(logsumexp(x), scipy_logsumexp(x)), x
        checked_rows = 0
        for rows in [*(x[None, :] for x in ones), *_rows(seed=5, count=400)]:
            expected = scipy_logsumexp(rows, axis=1)
            assert _same_bits(row_logsumexp(rows), expected), rows
            assert _same_bits(row_logsumexp(rows.copy(), overwrite=True), expected), rows
            checked_rows += rows.shape[0]
        assert checked_rows > 2000
        orders = [0.0, -0.0, 1e-3, -1e-3, 0.5, -2.0, 30.0, -700.0, 1e300, -1e300, np.inf]
        for masses in _masses(seed=9, count=300):
            prepared = MgfMasses.of(masses)
            for order in [*orders, *np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / len(masses)]:
                theirs = scipy_logsumexp(np.arange(len(masses)) * order, b=masses)
                assert _same_bits(mgf_logsumexp(prepared, order), theirs), (masses, order)


def test_the_corners_reach_each_forms_own_path_and_scipys():
    """The cases above include results that scipy's steps give (finite) and that scipy itself gives
    (non-finite), for each form, so both paths of each are held to scipy."""
    with np.errstate(invalid="ignore", over="ignore"):
        assert np.isfinite(logsumexp(np.array([1.0, 1.0, -2.0])))
        assert np.isnan(logsumexp(np.array([0.0, np.nan, 1.0])))
        assert np.isneginf(logsumexp(np.array([-np.inf, -np.inf])))
        assert np.isposinf(row_logsumexp(np.array([[1.0, 2.0], [np.inf, 0.0]]))[1])
        assert np.isneginf(row_logsumexp(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))[1])
        assert np.isneginf(mgf_logsumexp(MgfMasses.of(np.zeros(3)), 0.5))
        assert np.isnan(mgf_logsumexp(MgfMasses.of(np.array([0.5, -1.0])), 0.0))
        assert np.isposinf(mgf_logsumexp(MgfMasses.of(np.array([0.5, 0.5, 0.1])), 1e308))


def test_segment_logsumexp_is_the_log_sum_per_segment():
    """segment_logsumexp (the textbook form, not scipy's steps) is within rounding of scipy's value per
    segment, -inf for a segment of -inf, and one -inf per segment for no values."""
    rng = np.random.default_rng(13)
    for trial in range(200):
        size = int(rng.integers(1, 300))
        values = rng.normal(-30.0, 10.0, size)
        values[rng.random(size) < 0.2] = -np.inf
        starts = np.flatnonzero(np.r_[True, rng.random(size - 1) < 0.1])
        if trial % 4 == 0:
            values[starts[-1] :] = -np.inf
        ours = segment_logsumexp(values, starts)
        theirs = [scipy_logsumexp(part) for part in np.split(values, starts[1:])]
        assert ours.shape == starts.shape
        assert np.allclose(ours, theirs, rtol=1e-13, atol=0.0), (values, starts)
        assert np.array_equal(np.isneginf(ours), np.isneginf(theirs))
    assert np.array_equal(segment_logsumexp(np.array([]), np.array([0, 0])), [-np.inf, -np.inf])


def _binned_by_hand(index: np.ndarray, log_mass: np.ndarray) -> dict[int, float]:
    """The reference: each bin's finite log masses, summed by scipy."""
    bins: dict[int, list[float]] = {}
    for i, value in zip(index.tolist(), log_mass.tolist(), strict=True):
        if np.isfinite(value):
            bins.setdefault(int(i), []).append(value)
    return {i: float(scipy_logsumexp(values)) for i, values in sorted(bins.items())}


def test_binned_logsumexp_sums_each_bin_of_the_finite_masses():
    """binned_logsumexp: the bins present, ascending, each the log-sum-exp of its finite entries (within
    rounding of scipy's, with -inf and inf entries dropped), and the bits the binned views' former inline
    form gave (the peak added to the log of the sum)."""
    rng = np.random.default_rng(17)
    for _ in range(200):
        size = int(rng.integers(0, 200))
        index = rng.integers(-5, 40, size)
        log_mass = rng.normal(-40.0, 15.0, size)
        log_mass[rng.random(size) < 0.15] = -np.inf
        log_mass[rng.random(size) < 0.02] = np.inf
        bins, sums = binned_logsumexp(index, log_mass)
        expected = _binned_by_hand(index, log_mass)
        assert bins.tolist() == list(expected)
        assert np.allclose(sums, list(expected.values()), rtol=1e-13, atol=0.0)
        keep = np.isfinite(log_mass)
        if keep.any():
            order = np.argsort(index[keep], kind="stable")
            sorted_index, sorted_mass = index[keep][order], log_mass[keep][order]
            starts = np.flatnonzero(np.r_[True, sorted_index[1:] != sorted_index[:-1]])
            top = np.maximum.reduceat(sorted_mass, starts)
            lengths = np.diff(np.r_[starts, sorted_index.size])
            former = top + np.log(np.add.reduceat(np.exp(sorted_mass - np.repeat(top, lengths)), starts))
            assert np.array_equal(sums, former)
    bins, sums = binned_logsumexp(np.array([3, 1]), np.array([-np.inf, -np.inf]))
    assert bins.size == 0 and sums.size == 0
