"""Tests of histogram-exact and histogram-pair-lower (src/shuffledp/accounting/histogram.py).

References: brute-force enumeration over all k^n report vectors (tests/accounting/brute_force.py);
the data-processing inequality (pair <= histogram; x0-count <= histogram) as property tests.
"""

import numpy as np
import pytest
from brute_force import histogram_distributions, hockey_stick, pair_distributions
from hypothesis import given, settings
from hypothesis import strategies as st

from shuffledp.accounting import BoundKind, get_accountant
from shuffledp.accounting.accountants.histogram import (
    MAX_USERS_HISTOGRAM_EXACT,
    HistogramExact,
    HistogramPairLower,
)

EPSILONS = [0.0, 0.05, 0.3, 0.8, 1.3, 2.0]
CASES = [
    (1, 3, 0, 1.2),
    (3, 3, 1, 0.7),
    (4, 4, 1, 1.5),
    (4, 5, 3, 1.0),
    (5, 3, 0, 1.9),
    (3, 2, 1, 1.1),
    (5, 4, 2, 0.4),
]


def _reference(p0, p1, eps, direction):
    forward, reverse = float(hockey_stick(p0, p1, eps)), float(hockey_stick(p1, p0, eps))
    return {"forward": forward, "reverse": reverse, "both": max(forward, reverse)}[direction]


@pytest.mark.parametrize("n,k,n_x0,eps0", CASES)
@pytest.mark.parametrize("direction", ["forward", "reverse", "both"])
def test_histogram_exact_matches_brute_force(n, k, n_x0, eps0, direction):
    p0, p1 = histogram_distributions(n, k, n_x0, "third", epsilon_local=eps0)
    ours = HistogramExact(
        epsilon_local=eps0, n_users=n, k=k, n_x0=n_x0, direction=direction
    ).delta_for_epsilon(EPSILONS)
    expected = [_reference(p0, p1, eps, direction) for eps in EPSILONS]
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("n,k,n_x0,eps0", CASES)
@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_pair_matches_brute_force_and_bounds_any_spread(n, k, n_x0, eps0, direction):
    pair = HistogramPairLower(
        epsilon_local=eps0, n_users=n, k=k, n_x0=n_x0, direction=direction
    ).delta_for_epsilon(EPSILONS)
    for dataset in ("third", "spread"):  # the pair's law is the same for both (no other user on x1)
        q0, q1 = pair_distributions(n, k, n_x0, dataset, epsilon_local=eps0)
        np.testing.assert_allclose(
            pair, [_reference(q0, q1, e, direction) for e in EPSILONS], rtol=1e-12, atol=1e-300
        )
        h0, h1 = histogram_distributions(n, k, n_x0, dataset, epsilon_local=eps0)
        full = np.array([_reference(h0, h1, e, direction) for e in EPSILONS])
        assert np.all(pair <= full * (1 + 1e-12) + 1e-300)  # LOWER bound on the full histogram's delta


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 25),
    st.integers(2, 8),
    st.floats(0.1, 3.0),
    st.floats(0.0, 1.0),
    st.sampled_from(["forward", "reverse", "both"]),
    st.lists(st.floats(0.0, 3.5), min_size=2, max_size=5),
)
def test_lower_le_exact_and_properties(n, k, eps0, fraction, direction, epsilons):
    n_x0 = int(fraction * (n - 1))
    epsilons = np.sort(epsilons)
    kwargs = dict(epsilon_local=eps0, n_users=n, k=k, n_x0=n_x0, direction=direction)
    full = HistogramExact(**kwargs).log_delta_for_epsilon(epsilons)
    pair = HistogramPairLower(**kwargs).log_delta_for_epsilon(epsilons)
    single = get_accountant("biswas-exact", **kwargs).log_delta_for_epsilon(epsilons)
    assert np.all(pair <= full + 1e-9) and np.all(single <= full + 1e-9)
    delta = np.exp(full)
    assert np.all((delta >= 0) & (delta <= 1))
    assert np.all((full[1:] <= full[:-1] + 1e-9) | np.isneginf(full[1:]))
    assert np.all(delta[epsilons >= eps0] == 0)


def test_k2_histogram_is_the_single_bin():
    kwargs = dict(epsilon_local=1.3, n_users=2000, k=2, n_x0=700, direction="both")  # k = 2 has no size limit
    np.testing.assert_allclose(
        HistogramExact(**kwargs).log_delta_for_epsilon(EPSILONS[:-1]),
        get_accountant("biswas-exact", **kwargs).log_delta_for_epsilon(EPSILONS[:-1]),
        rtol=1e-12,
    )


def test_table_ii_setting_full_histogram_exceeds_single_bin():
    """At Table II's n = 100 setting the full histogram leaks more than the x0 count alone."""
    kwargs = dict(epsilon_local=0.49, n_users=100, k=10, n_x0=80)
    eps = [0.01, 0.1, 0.2]
    assert np.all(
        HistogramExact(**kwargs).delta_for_epsilon(eps)
        > get_accountant("biswas-exact", **kwargs).delta_for_epsilon(eps)
    )


def test_labels_and_limits():
    assert HistogramExact.kind is BoundKind.EXACT and HistogramPairLower.kind is BoundKind.LOWER
    with pytest.raises(
        ValueError,
        match=rf"`n_users` must be an integer in \[1, {MAX_USERS_HISTOGRAM_EXACT}\] for accountant 'histogram-exact'.*got 301",
    ):
        HistogramExact(
            epsilon_local=1.0, n_users=MAX_USERS_HISTOGRAM_EXACT + 1, k=3, n_x0=0
        ).delta_for_epsilon(0.5)
    with pytest.raises(
        ValueError, match=r"`direction` must be one of 'forward', 'reverse', 'both'; got 'sideways'"
    ):
        HistogramPairLower(epsilon_local=1.0, n_users=5, k=3, n_x0=0, direction="sideways")
