"""types-lower at many epsilons in one pass (``TypesLower.log_delta_grid``) against its per-epsilon value, and the
types_bracket benchmark's searches against the accountants' own."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.randomizers import randomizer_class
from shuffledp.accounting.views.types.counts import CountPair, log_delta_grid

ROOT = Path(__file__).resolve().parents[2]
#: the one pass and the per-epsilon sum agree to this in log delta where both visit the same count vectors
#: (measured: under 1e-12 at every point below)
LOG_TOLERANCE = 1e-9

# (randomizer, eps0, k, n, an epsilon near the upper end of its bracket at delta = 1e-6)
POINTS = [
    ("oue", 1.0, 16, 1000, 0.1025),
    ("sue", 4.0, 16, 1000, 1.488),
    ("olh", 1.0, 192, 10000, 0.0317),
    ("hadamard", 4.0, 192, 1000, 1.322),
    ("subset", 1.0, 408, 10000, 0.0325),
    ("subset", 4.0, 16, 10000, 0.3616),
]


def _lower(key, e0, k, n):
    randomizer = randomizer_class(key).from_parameters(epsilon_local=e0, k=k)
    return get_accountant("types-lower", randomizer=randomizer, n_users=n)


@pytest.mark.parametrize("key,e0,k,n,upper", POINTS)
def test_one_pass_equals_the_per_epsilon_lower_bound(key, e0, k, n, upper):
    accountant = _lower(key, e0, k, n)
    eps = np.linspace(0.6, 1.0, 5) * upper
    per_epsilon = accountant.log_delta_for_epsilon(eps)
    one_pass = accountant.log_delta_grid(eps[::-1])[::-1]  # any order
    assert np.all(np.isfinite(per_epsilon))
    np.testing.assert_allclose(one_pass, per_epsilon, rtol=0.0, atol=LOG_TOLERANCE)
    assert np.all(np.diff(one_pass) <= 0.0)  # non-increasing in epsilon


def test_the_comparison_sees_a_one_percent_shift():
    """Probe: the one pass read 1 % off in epsilon fails the tolerance above (the comparison can fail)."""
    accountant = _lower("oue", 1.0, 16, 1000)
    eps = np.linspace(0.6, 1.0, 5) * 0.1025
    shifted = accountant.log_delta_grid(eps * 1.01)
    assert np.max(np.abs(shifted - accountant.log_delta_for_epsilon(eps))) > 1e3 * LOG_TOLERANCE


def test_one_pass_is_zero_from_eps0_on_and_keeps_its_order():
    accountant = _lower("hadamard", 1.0, 16, 1000)
    values = accountant.log_delta_grid([1.0, 0.1, 2.0, 0.12])
    assert values[0] == values[2] == -np.inf
    assert values[1] > values[3] > -np.inf


def test_one_pass_refuses_a_pair_with_an_uncounted_cell():
    pair = CountPair(10, np.log([0.25, 0.25]), math.log(0.5), np.log([3.0, 1.0]), np.log([1.0, 3.0]))
    with pytest.raises(ValueError, match="`pair` must have no uncounted cell"):
        log_delta_grid(pair, [0.1, 0.2])


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("types_bracket", ROOT / "benchmarks" / "types_bracket.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    sys.path.remove(str(ROOT / "tests" / "accounting"))  # the benchmark puts the test channels on the path


def test_benchmark_searches_match_the_accountants_own(bench):
    randomizer = randomizer_class("hadamard").from_parameters(epsilon_local=1.0, k=16)
    n = 1000
    upper, _ = bench._upper(randomizer, n)
    own_upper = get_accountant("weak-adversary", randomizer=randomizer, n_users=n).epsilon_for_delta(
        bench.DELTA, tolerance=bench.SEARCH_TOLERANCE
    )
    assert abs(upper - own_upper) <= 2 * bench.SEARCH_TOLERANCE
    lower, passes = bench._lower(randomizer, n, upper)
    accountant = get_accountant("types-lower", randomizer=randomizer, n_users=n)
    assert passes == 1 and lower < upper
    # valid lower end: its delta is above the target, and 1e-4 above it is not
    assert accountant.delta_for_epsilon(lower)[0] > bench.DELTA
    assert accountant.delta_for_epsilon(lower * (1.0 + 1.01 * bench.TOLERANCE))[0] <= bench.DELTA
