"""log Pr(X >= x) and log E[(X - t)_+] of :mod:`shuffledp.accounting.numerics.binomial` against exact
mpmath sums, from the bulk to the deep tail (the incomplete-beta, series and continued-fraction paths)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffledp.accounting.numerics import binomial
from shuffledp.accounting.numerics.binomial import log_excess_above, log_sf

mpmath.mp.dps = 50


def _exact(N, p, x, t=None):
    p = mpmath.mpf(p)
    total = mpmath.mpf(0)
    for m in range(int(x), N + 1):
        term = mpmath.binomial(N, m) * p**m * (1 - p) ** (N - m)
        total += term if t is None else (m - mpmath.mpf(t)) * term
    return float(mpmath.log(total))


@pytest.mark.parametrize("N, p", [(400, 0.3), (3000, 0.02), (2000, 0.5), (900, 0.9)])
def test_tails_from_bulk_to_deep(N, p):
    sd = math.sqrt(N * p * (1 - p))
    xs = np.unique(np.clip(np.round(N * p + sd * np.array([0.5, 3, 8, 12, 20, 40])), 1, N - 70))
    lp, l1p = math.log(p), math.log1p(-p)
    ours = log_sf(xs, N, lp, l1p)
    for x, value in zip(xs, ours):
        reference = _exact(N, p, x)
        assert abs(value - reference) <= 1e-9 * max(1.0, abs(reference)), (x, value, reference)
    ts = xs - 0.5
    ours = log_excess_above(ts, N, lp, l1p)
    for t, value in zip(ts, ours):
        reference = _exact(N, p, math.floor(t) + 1, t)
        assert abs(value - reference) <= 1e-9 * max(1.0, abs(reference)), (t, value, reference)


def _central_reference(n_trials: int, x: int):
    """Pr(X >= x) / Pr(X = x) for X ~ Bin(N, 1/2) near the centre, in 50 digits (by symmetry, as a sum of pmfs)."""
    with mpmath.workdps(50):

        def pmf(j):
            return mpmath.exp(
                mpmath.loggamma(n_trials + 1)
                - mpmath.loggamma(j + 1)
                - mpmath.loggamma(n_trials - j + 1)
                - n_trials * mpmath.log(2)
            )

        if 2 * x == n_trials:
            tail = (1 + pmf(x)) / 2
        else:
            tail = (1 - mpmath.fsum(pmf(j) for j in range(n_trials - x + 1, x))) / 2
        return tail / pmf(x)


def test_central_tail_ratio_of_huge_halves():
    """pi = 1/2, N >= 2^24, x within 64 of N / 2: the tail ratio by symmetry (the weak view's rows at n = 10^15
    need ~5e5 of them; betainc took ~30 us each, 16 CPU s a call) is within 1e-14 of 50 digits, where betainc
    was off by up to 6e-14 at N = 3.3e12."""
    half = math.log(0.5)
    for n_trials in (2**24, 2**24 + 1, 10**9 + 1, 3_300_000_000_001):
        x = np.array(
            [math.ceil(n_trials / 2), math.ceil(n_trials / 2) + 1, n_trials // 2 + 17, n_trials // 2 + 33]
        )
        n = np.full(x.shape, float(n_trials))
        lp = binomial.log_pmf(x.astype(float), n, half, half)
        got = binomial._tail_ratio(x.astype(float), n, lp, half, half)
        for value, at in zip(got, x):
            reference = _central_reference(n_trials, int(at))
            assert abs(value / reference - 1) <= 1e-14, (n_trials, int(at), value, reference)


def test_central_tail_ratio_keeps_small_n_bit_for_bit():
    """Below N = 2^24 (every view at n <= 10^6) the tail ratio is betainc's, exactly as before."""
    half = math.log(0.5)
    n = np.full(5, 10.0**6)
    x = 5e5 + np.arange(5.0)
    lp = binomial.log_pmf(x, n, half, half)
    expected = binomial.betainc(x, n - x + 1.0, 0.5) * np.exp(-lp)
    assert np.array_equal(binomial._tail_ratio(x, n, lp, half, half), expected)


def _series_exact(x: int, n_trials: int, pi: float, t: float | None):
    """sum_{m >= 0} w_m pmf(x + m) / pmf(x), w_m = x + m - t (or 1 for t None), in 50 digits."""
    with mpmath.workdps(50):
        odds = mpmath.mpf(pi) / (1 - mpmath.mpf(pi))
        ratio, total = mpmath.mpf(1), mpmath.mpf(0)
        for m in range(n_trials - x + 1):
            total += ratio * (1 if t is None else x + m - mpmath.mpf(t))
            ratio *= mpmath.mpf(n_trials - x - m) / (x + m + 1) * odds
            if ratio < mpmath.mpf(10) ** -45 * total:
                break
        return total


def test_tail_series_over_rounds_of_growing_length():
    """The tail series (rounds of 16, 32, then 64 terms) against 50 digits, for rows that end in the first
    round, the second, the third and several later ones, together in one batch (each row leaves the batch when
    done) and with the first moment's weights; and a row ending at N (terms beyond N are 0)."""
    n_trials, pi = 4000, 0.01
    mean = n_trials * pi
    # first ratio (N - x) / (x + 1) * odds: ~0.05 (a few terms), ~0.5, ~0.8, ~0.95 (hundreds of terms)
    xs = np.array([800.0, 79.0, 50.0, 42.0, 41.0, 3995.0])
    assert np.all(xs > mean)
    n = np.full(xs.shape, float(n_trials))
    log_odds = math.log(pi) - math.log1p(-pi)
    plain = binomial._series(xs, n, xs, log_odds, first_moment=False)
    ts = xs - 0.25
    weighted = binomial._series(xs, n, ts, log_odds, first_moment=True, gap=xs - ts)
    for x, t, got_plain, got_weighted in zip(xs, ts, plain, weighted):
        for got, reference in (
            (got_plain, _series_exact(int(x), n_trials, pi, None)),
            (got_weighted, _series_exact(int(x), n_trials, pi, t)),
        ):
            assert abs(got / float(reference) - 1) <= 1e-12, (x, got, reference)
