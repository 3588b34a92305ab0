"""The Laplace randomizer's blanket quantities (Balle et al. 2019, Lemmas 5.1 (2), 5.8) and its two bounds.

Independent checks: numerical integration over the output line (scipy.integrate.quad) of the blanket
mass, the mean and second moment of the privacy amplification variable; its extremes on a dense grid;
the printed closed forms; and, for the accountants, the exact delta of the shuffled Laplace randomizer
at n = 1 (closed form) and n = 2 (two-dimensional quadrature on a grid) for every dataset on a grid.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy import integrate

from shuffledp.accounting import get_accountant
from shuffledp.accounting.params import LaplaceBlanket

CASES = [(0.1, 0.05), (0.5, 0.1), (1.0, 0.3), (4.0, 0.25), (4.0, 3.9), (10.0, 2.0)]


def _density(e0, y, x):
    return 0.5 * e0 * np.exp(-e0 * np.abs(y - x))


def _ratio(e0, y, x):
    """p_x(y) / blanket(y) = e^(eps0 (|y - 1/2| - |y - x|)), the blanket being Lap(1/2, 1/eps0)."""
    return np.exp(e0 * (np.abs(y - 0.5) - np.abs(y - x)))


def _moments(e0, eps, x, xp):
    """(E L, E L^2) under the blanket, by quadrature on the pieces between the kinks."""
    cuts = sorted({0.0, 0.5, 1.0, x, xp})
    pieces = list(zip([-np.inf, *cuts], [*cuts, np.inf]))

    def moment(power):
        f = lambda y: (_ratio(e0, y, x) - math.exp(eps) * _ratio(e0, y, xp)) ** power * _density(e0, y, 0.5)
        return sum(integrate.quad(f, a, b, epsabs=1e-13, epsrel=1e-11)[0] for a, b in pieces)

    return moment(1), moment(2)


@pytest.mark.parametrize("e0", [0.1, 1.0, 4.0, 10.0])
def test_gamma_is_the_mass_under_every_density(e0):
    inf_density = lambda y: 0.5 * e0 * np.exp(-e0 * max(abs(y), abs(y - 1.0)))
    mass = sum(integrate.quad(inf_density, a, b, epsabs=1e-14)[0] for a, b in [(-np.inf, 0.5), (0.5, np.inf)])
    assert math.exp(LaplaceBlanket(e0).log_gamma) == pytest.approx(mass, rel=1e-10)


@pytest.mark.parametrize("e0,eps", CASES)
def test_mean_and_second_moment_by_quadrature(e0, eps):
    lap = LaplaceBlanket(e0)
    mean, second = _moments(e0, eps, 0.0, 1.0)
    assert mean == pytest.approx(1.0 - math.exp(eps), rel=1e-8)  # Lemma 5.4 (1): E L = 1 - e^eps
    assert math.exp(lap.log_second_moment(eps)) == pytest.approx(second, rel=1e-8)
    # the largest over a grid of inputs is attained at {0, 1}
    grid = [max(_moments(e0, eps, x, xp)[1] for x in np.linspace(0, 1, 5) for xp in np.linspace(0, 1, 5))]
    assert grid[0] <= math.exp(lap.log_second_moment(eps)) * (1 + 1e-8)


@pytest.mark.parametrize("e0,eps", CASES)
def test_extremes_and_range_on_a_dense_grid(e0, eps):
    lap = LaplaceBlanket(e0)
    y = np.linspace(-50.0, 51.0, 200_001)
    top, bottom = -np.inf, np.inf
    for x in np.linspace(0, 1, 6):
        for xp in np.linspace(0, 1, 6):
            values = _ratio(e0, y, x) - math.exp(eps) * _ratio(e0, y, xp)
            top, bottom = max(top, values.max()), min(bottom, values.min())
    if eps < e0:
        assert math.exp(lap.log_max(eps)) == pytest.approx(top, rel=1e-9)
    assert math.exp(lap.log_range(eps)) == pytest.approx(top - bottom, rel=1e-9)


@pytest.mark.parametrize("e0,eps", CASES)
def test_printed_closed_forms(e0, eps):
    """Lemma 5.8 as printed (and as coded in the authors' shuffleddp/mechanisms.py, LaplaceMechanism)."""
    lap, h = LaplaceBlanket(e0), e0 / 2
    assert math.exp(lap.log_max(eps)) == pytest.approx(math.exp(h) * (1 - math.exp(eps - e0)), rel=1e-12)
    assert math.exp(lap.log_range(eps)) == pytest.approx(
        (math.exp(eps) + 1) * (math.exp(h) - math.exp(-h)), rel=1e-12
    )
    printed = (math.exp(2 * eps) + 1) / 3 * (2 * math.exp(h) + math.exp(-e0)) - 2 * math.exp(eps) * (
        2 * math.exp(-h) - math.exp(-e0)
    )
    assert math.exp(lap.log_second_moment(eps)) == pytest.approx(printed, rel=1e-10)


def test_second_moment_finite_where_exp_eps0_overflows():
    lap = LaplaceBlanket(1.0e308)
    assert np.isfinite(lap.log_second_moment_scaled(0.5e308))


def _exact_delta_n1(e0, eps):
    """H_{e^eps}(Lap(0) || Lap(1)) by quadrature (n = 1: the randomizer itself)."""
    f = lambda y: max(_density(e0, y, 0.0) - math.exp(eps) * _density(e0, y, 1.0), 0.0)
    return sum(
        integrate.quad(f, a, b, epsabs=1e-14)[0] for a, b in [(-np.inf, 0.0), (0.0, 1.0), (1.0, np.inf)]
    )


def _exact_delta_n2(e0, eps, other, step=0.02):
    """Shuffled pair {R(other), R(u)}, u = 0 vs u = 1: (1/2) int int (g - e^eps g')_+ over R^2 (g symmetric)."""
    y = np.arange(-20.0 / e0, 1.0 + 20.0 / e0, step) + step / 2  # midpoints; tails beyond carry < e^-20
    a, b, c = _density(e0, y, other), _density(e0, y, 0.0), _density(e0, y, 1.0)
    # g - e^eps g', formed in place (the same values as written out: elementwise, in the same order)
    g = np.outer(a, b)
    g += np.outer(b, a)
    g_prime = np.outer(a, c)
    g_prime += np.outer(c, a)
    g_prime *= math.exp(eps)
    g -= g_prime
    return 0.5 * np.maximum(g, 0.0, out=g).sum() * step**2


@functools.cache
def _worst_exact_delta_n2(e0, eps):
    """The largest exact n = 2 delta over the other user at 0, 1/2, 1, computed once for both bounds."""
    return max(_exact_delta_n2(e0, eps, other) for other in (0.0, 0.5, 1.0))


@pytest.mark.parametrize("name", ["balle-hoeffding-laplace", "balle-bennett-laplace"])
@pytest.mark.parametrize("eps", [0.3, 0.45, 0.499])
def test_laplace_bounds_dominate_the_exact_shuffled_laplace_delta(name, eps):
    """Upper bound >= the exact delta of shuffled Laplace (eps0 = 0.5) at n = 1 and n = 2 (other user at
    0, 1/2, 1; by the reflection y -> 1 - y the reverse direction is the same set of datasets)."""
    e0 = 0.5
    assert get_accountant(name, epsilon_local=e0, n_users=1, k=2).delta_for_epsilon(eps)[
        0
    ] >= _exact_delta_n1(e0, eps)
    bound = get_accountant(name, epsilon_local=e0, n_users=2, k=2).delta_for_epsilon(eps)[0]
    assert bound < 1.0  # the check is not vacuous
    worst = _worst_exact_delta_n2(e0, eps)
    assert bound >= worst * (1 + 1e-3), (bound, worst)  # 1e-3: the grid's quadrature error


def test_quadrature_n2_reduces_to_n1_when_the_other_user_adds_no_information():
    """Sanity of the n = 2 quadrature: e^eps large enough makes delta 0; eps = 0 gives the TV distance."""
    e0 = 0.5
    assert _exact_delta_n2(e0, e0, 0.5) == pytest.approx(0.0, abs=1e-9)
    tv = _exact_delta_n2(e0, 0.0, 0.5)
    assert 0.0 < tv <= _exact_delta_n1(e0, 0.0) + 1e-6  # shuffling with another user can only help
