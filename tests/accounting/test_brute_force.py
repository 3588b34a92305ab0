"""Sanity checks of the brute-force reference itself (closed forms for tiny cases)."""

import math

import mpmath
import pytest

from brute_force import (
    dataset_values,
    histogram_distributions,
    hockey_stick,
    pair_distributions,
    single_bin_distributions,
)


@pytest.mark.parametrize("n,k,n_x0,dataset", [(1, 2, 0, "third"), (3, 3, 1, "third"), (4, 4, 2, "spread"), (3, 2, 0, "x1")])
def test_laws_sum_to_one(n, k, n_x0, dataset):
    for law in histogram_distributions(n, k, n_x0, dataset, epsilon_local=0.7):
        with mpmath.workdps(50):
            assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** -40
        assert all(sum(c) == n for c in law)


def test_single_user_closed_form():
    # n = 1: the x0 count is u's indicator: Bern(p) under D(x0), Bern(q) under D(x1).
    eps0, k = 1.3, 3
    p = math.exp(eps0) / (math.exp(eps0) + k - 1)
    q = 1 / (math.exp(eps0) + k - 1)
    p0, p1 = single_bin_distributions(1, k, 0, epsilon_local=eps0)
    assert float(p0[1]) == pytest.approx(p, rel=1e-14)
    assert float(p1[1]) == pytest.approx(q, rel=1e-14)
    # H_{e^eps}(Bern(p) || Bern(q)) = max(p - e^eps q, 0) + max((1-p) - e^eps (1-q), 0) (closed form)
    eps = 0.4
    expected = max(p - math.exp(eps) * q, 0) + max((1 - p) - math.exp(eps) * (1 - q), 0)
    assert float(hockey_stick(p0, p1, eps)) == pytest.approx(expected, rel=1e-12)
    # eps0-LDP: no divergence beyond eps0
    assert hockey_stick(p0, p1, eps0 + 1e-9) == 0


def test_pair_marginal_of_histogram():
    p0, _ = histogram_distributions(3, 3, 1, epsilon_local=0.5)
    pair0, _ = pair_distributions(3, 3, 1, epsilon_local=0.5)
    with mpmath.workdps(50):
        expected = mpmath.fsum(v for c, v in p0.items() if c[:2] == (1, 1))
        assert abs(pair0[(1, 1)] - expected) < mpmath.mpf(10) ** -45


def test_dataset_values():
    assert dataset_values(5, 4, 1, "third") == [0, 2, 2, 2]
    assert dataset_values(5, 4, 1, "spread") == [0, 2, 3, 2]
    assert dataset_values(4, 2, 0, "third") == [1, 1, 1]
    with pytest.raises(ValueError, match=r"`n_x0` must be an integer in \[0, 3\]; got 4"):
        dataset_values(4, 3, 4)
