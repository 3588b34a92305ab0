"""log Pr(X >= x) and log E[(X - t)_+] of :mod:`shuffledp.accounting.numerics.binomial` against exact
mpmath sums, from the bulk to the deep tail (the incomplete-beta, series and continued-fraction paths)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

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
