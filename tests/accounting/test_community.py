"""Tests of the eq. (10) community delta-hat (src/shuffledp/accounting/community.py).

Reference: brute-force enumeration of each value's single-bin count law (brute_force.py).
"""

import numpy as np
import pytest
from brute_force import hockey_stick, single_bin_distributions

from shuffledp.accounting import get_accountant, list_accountants
from shuffledp.accounting.community import community_delta

EPSILONS = [0.0, 0.1, 0.4, 0.9]


@pytest.mark.parametrize(
    "counts,eps0", [([2, 1, 1], 1.0), ([3, 0, 1, 1], 0.6), ([4, 1], 1.5), ([1, 1, 1, 1, 1], 2.0)]
)
def test_matches_brute_force_max_over_values(counts, eps0):
    n, k = sum(counts), len(counts)
    expected = []
    for eps in EPSILONS:
        per_value = []
        for c in counts:
            if c >= 1:
                p0, p1 = single_bin_distributions(n, k, c - 1, epsilon_local=eps0)
                per_value.append(float(hockey_stick(p0, p1, eps)))
        expected.append(max(per_value))
    result = community_delta(counts, epsilon_local=eps0, epsilons=EPSILONS)
    np.testing.assert_allclose(result.delta, expected, rtol=1e-12, atol=1e-300)
    assert result.n_users == n and result.accountant == "biswas-exact"


def test_argmax_and_permutation_invariance():
    counts = np.array([30, 1, 7, 0, 7, 12])
    result = community_delta(counts, epsilon_local=1.2, epsilons=[0.05, 0.3])
    for eps, value, count, log_delta in zip(
        result.epsilons, result.argmax_value, result.argmax_count, result.log_delta
    ):
        assert counts[value] == count
        direct = get_accountant("biswas-exact", epsilon_local=1.2, n_users=57, k=6, n_x0=int(count) - 1)
        assert direct.log_delta_for_epsilon(eps)[0] == pytest.approx(log_delta, rel=1e-12)
    shuffled = community_delta(counts[::-1], epsilon_local=1.2, epsilons=[0.05, 0.3])
    np.testing.assert_allclose(shuffled.log_delta, result.log_delta, rtol=1e-12)


def test_printed_accountant_and_options():
    counts = [40, 30, 20, 10]
    printed = community_delta(counts, epsilon_local=2.0, epsilons=[0.1, 0.5], accountant="biswas-printed")
    exact = community_delta(counts, epsilon_local=2.0, epsilons=[0.1, 0.5])
    both = community_delta(counts, epsilon_local=2.0, epsilons=[0.1, 0.5], direction="both")
    assert np.all(printed.log_delta <= exact.log_delta) and np.all(exact.log_delta <= both.log_delta + 1e-12)
    assert np.all(community_delta(counts, epsilon_local=2.0, epsilons=[2.0, 3.0]).delta == 0)


@pytest.mark.skipif(
    "strong-adversary" not in list_accountants(), reason="strong-adversary not registered yet"
)
def test_dataset_independent_accountant_evaluated_once():
    result = community_delta([5, 3, 2], epsilon_local=1.0, epsilons=[0.2], accountant="strong-adversary")
    direct = get_accountant("strong-adversary", epsilon_local=1.0, n_users=10, k=3).log_delta_for_epsilon(
        [0.2]
    )
    np.testing.assert_allclose(result.log_delta, direct)


def test_validation_messages():
    with pytest.raises(ValueError, match=r"`counts` must be non-negative integers; got -1.0"):
        community_delta([3, -1, 2], epsilon_local=1.0, epsilons=[0.1])
    with pytest.raises(ValueError, match=r"`counts` must be non-negative integers; got 1.5"):
        community_delta([3, 1.5], epsilon_local=1.0, epsilons=[0.1])
    with pytest.raises(ValueError, match=r"`counts` must be a 1-d sequence of at least 2 value counts"):
        community_delta([3], epsilon_local=1.0, epsilons=[0.1])
    with pytest.raises(ValueError, match=r"`counts` must contain at least one user \(sum >= 1\); got sum 0"):
        community_delta([0, 0], epsilon_local=1.0, epsilons=[0.1])
    with pytest.raises(ValueError, match=r"`accountant` must be one of .*; got 'nope'"):
        community_delta([1, 2], epsilon_local=1.0, epsilons=[0.1], accountant="nope")
    with pytest.raises(ValueError, match=r"`epsilon` must be in \[0, inf\); got -1.0"):
        community_delta([1, 2], epsilon_local=1.0, epsilons=[-1.0])
