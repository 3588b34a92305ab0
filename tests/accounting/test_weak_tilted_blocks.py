"""The weak adversary's sum with windows centred on each epsilon's tilted law,
tables of M's law shared by blocks of rows, the row-wise tilted low-range bound and the zooming refinement
of the Chernoff bound.

* the row-to-row step of the block tables (F_(N-1)(i) = F_N(i) + rho pmf_(N-1)(i), H_(N-1)(i) = H_N(i) +
  rho F_(N-1)(i - 1)) against scipy's binomial laws and a direct expected excess;
* the block tables against one table per row (the same certified sum, another rounding);
* the tilted windows against the mpmath reference (an independent triple sum) where the delta is deep;
* :func:`~shuffledp.accounting.numerics.chernoff.log_low_range` is an upper bound on the exact low range;
* :func:`~shuffledp.accounting.numerics.search.zoom_minimum` finds a convex function's minimum.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy.stats import binom
from weak_reference import weak_adversary_reference_mpmath

from shuffledp.accounting import get_accountant
from shuffledp.accounting.numerics.chernoff import ChernoffBound, log_low_range
from shuffledp.accounting.numerics.search import zoom_minimum
from shuffledp.accounting.views.weak import tables as weak_tables


@pytest.mark.parametrize(
    "N, rho, i", [(2_000, 0.8, 1_560), (500, 0.3, 120), (10_000, 0.5, 4_950), (300, 0.6, 1)]
)
def test_step_down_against_scipy(N, rho, i):
    """From the tables of Bin(N, rho) at i - 1 and i, the cumulative law and the expected lower excess of
    Bin(N - d, rho) at i, d = 1 .. 12, as :func:`_middle_from_blocks` forms them."""
    d = np.arange(1.0, 13.0)[::-1]  # descending, as the block rows are sorted
    pmf_i, pmf_prev = binom.pmf(i, N, rho), binom.pmf(i - 1, N, rho)
    f_ref, f_prev = binom.cdf(i, N, rho), binom.cdf(i - 1, N, rho)
    x = np.arange(N + 1.0)
    h_ref = np.sum(np.maximum(i - x, 0.0) * binom.pmf(x, N, rho))
    n_ref = np.full(d.shape, float(N))
    steps_f = weak_tables._walk_down(n_ref, np.full(d.shape, float(i)), np.full(d.shape, pmf_i), d, 1.0 - rho)
    steps_h = weak_tables._walk_down(
        n_ref, np.full(d.shape, i - 1.0), np.full(d.shape, pmf_prev), d, 1.0 - rho, weights=True
    )
    f = f_ref + rho * steps_f
    h = h_ref + rho * d * f_prev + rho * rho * steps_h
    for value_f, value_h, dd in zip(f, h, d):
        M = N - int(dd)
        xs = np.arange(M + 1.0)
        assert value_f == pytest.approx(binom.cdf(i, M, rho), rel=1e-12)
        assert value_h == pytest.approx(np.sum(np.maximum(i - xs, 0.0) * binom.pmf(xs, M, rho)), rel=1e-11)


@pytest.mark.parametrize(
    "n, k, eps0, top", [(10**6, 10, 2.0, 0.1), (10**5, 10, 4.0, 0.6), (20_000, 4, 1.0, 0.6)]
)
def test_block_tables_equal_one_table_per_row(n, k, eps0, top, monkeypatch):
    """The blocks chosen by work (G > 1 here: checked) and one table per row (G = 1) give the same
    certified delta to 2e-11 in log (other roundings; each adds its own rounding margin)."""
    epsilons = list(np.linspace(0.02, top, 8))
    chosen = []
    blocks = weak_tables._blocks

    def spy(rows, need, i_min, i_max, pairs, G):
        out = blocks(rows, need, i_min, i_max, pairs, G)
        chosen.append((G, out[4]))
        return out

    monkeypatch.setattr(weak_tables, "_blocks", spy)
    blocked = get_accountant("weak-adversary", n_users=n, k=k, epsilon_local=eps0).log_delta_for_epsilon(
        epsilons
    )
    assert chosen and min(chosen, key=lambda c: c[1])[0] > 1, chosen
    monkeypatch.setattr(weak_tables, "_BLOCKS", (1,))
    per_row = get_accountant("weak-adversary", n_users=n, k=k, epsilon_local=eps0).log_delta_for_epsilon(
        epsilons
    )
    finite = np.isfinite(per_row) & (per_row > -700.0)
    assert finite.sum() >= 2
    # each is the sum plus a certified remainder of at most 1e-11 of it (tables' margins included)
    assert np.max(np.abs(blocked[finite] - per_row[finite])) <= 2e-11


@pytest.mark.parametrize(
    "n, k, eps0, epsilons", [(120, 4, 2.0, [1.0, 1.5, 1.8, 1.95]), (100, 10, 3.0, [1.5, 2.5, 2.9])]
)
def test_tilted_windows_against_mpmath(n, k, eps0, epsilons):
    """Upper bound, within 1e-9 of the independent triple sum (deltas down to ~e^-50 here)."""
    reference = [float(mpmath.log(x)) for x in weak_adversary_reference_mpmath(epsilons, eps0, n, k, dps=50)]
    ours = get_accountant("weak-adversary", n_users=n, k=k, epsilon_local=eps0).log_delta_for_epsilon(
        epsilons
    )
    for value, ref in zip(ours, reference):
        assert ref <= value <= ref + 1e-9, (value, ref)


def test_tilted_windows_certify_deep_tails_at_the_first_window():
    """n = 10^4, k = 10, eps0 = 2, eps = 0.8 (delta ~ e^-698): centred on the view's own law the sum needed
    K ~ 37 (about 2900 rows); centred on the tilted law the first window (K = 8) leaves a certified remainder
    below 1e-11 of the sum."""
    view = get_accountant("weak-adversary", n_users=10**4, k=10, epsilon_local=2.0).view()
    log_main, log_dropped = view.rows(8.0, (0.8,)).sums.log_parts(0.8, view.chernoff)
    assert -720.0 < log_main < -680.0
    assert log_dropped - log_main <= math.log(1e-11)


@pytest.mark.parametrize(
    "n, k, eps0, eps, s", [(200, 4, 2.0, 1.2, 60), (150, 10, 1.0, 0.3, 30), (400, 3, 3.0, 2.0, 90)]
)
def test_low_range_bound_is_an_upper_bound(n, k, eps0, eps, s):
    """log_low_range >= log E[X_+ 1{A <= b} | S = s], summed directly over a <= b and every m, for every b."""
    chernoff = ChernoffBound(n_users=n, k=k, epsilon_local=eps0)
    theta = chernoff.theta(eps)
    beta = math.expm1(eps0)
    lam, c_per_s, nu = beta * (1.0 + math.exp(eps)), math.expm1(eps + eps0), math.expm1(eps)
    rho = (k - 2.0) / (math.exp(eps0) + k - 3.0)
    a, m = np.arange(s + 1.0), np.arange(n - s + 1.0)
    x = lam * a[:, None] - c_per_s * s - nu * m[None, :]
    law = binom.pmf(a, s, 0.5)[:, None] * binom.pmf(m, n - s, rho)[None, :]
    b = np.arange(s + 1.0)
    bound = log_low_range(
        np.full(b.shape, float(s)), b, n, theta, lam, c_per_s, nu, math.log(rho), math.log1p(-rho)
    )
    for bb, value in zip(b, bound):
        exact = float(np.sum((law * np.maximum(x, 0.0))[: int(bb) + 1]))
        if exact > 0:
            assert value >= math.log(exact) - 1e-12
    assert np.all(np.isfinite(bound))


def test_zoom_minimum_finds_a_convex_minimum():
    """Within 1e-12 of the minimum of a convex function, never below it, and the smallest value it saw."""
    seen = []

    def f(x):
        values = (x - 0.3137) ** 2 * 1e4 + 2.5
        seen.extend(values)
        return values

    best = zoom_minimum(f, -1.0, 1.0, points=65, rounds=8)
    assert 2.5 <= best <= 2.5 + 1e-12
    assert best == min(seen)
