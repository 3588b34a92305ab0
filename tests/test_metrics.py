"""Tests for shuffledp.metrics: total variation distance and the individual-specific error."""

import numpy as np
import pytest

from shuffledp.metrics import individual_error, total_variation


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([1.0, 0.0], [0.0, 1.0], 1.0),  # disjoint supports: the maximum
        ([0.5, 0.5], [0.5, 0.5], 0.0),
        ([0.2, 0.3, 0.5], [0.3, 0.3, 0.4], 0.1),  # half the L1 distance
    ],
)
def test_total_variation_known_values(a, b, expected):
    assert total_variation(a, b) == pytest.approx(expected, abs=1e-15)


def test_total_variation_is_a_metric_on_distributions():
    rng = np.random.default_rng(3)
    p, q, r = rng.dirichlet(np.ones(6), size=3)
    assert total_variation(p, q) == pytest.approx(total_variation(q, p))
    assert total_variation(p, r) <= total_variation(p, q) + total_variation(q, r) + 1e-15
    assert 0 <= total_variation(p, q) <= 1
    # equals the largest probability difference over events (sup_A |P(A) - Q(A)|), brute force
    events = [np.array(mask, bool) for mask in np.ndindex(*(2,) * 6)]
    assert total_variation(p, q) == pytest.approx(max(abs(p[m].sum() - q[m].sum()) for m in events))


def test_total_variation_broadcasts_over_replicates():
    truth = np.array([0.5, 0.5])
    estimates = np.array([[0.5, 0.5], [1.0, 0.0], [0.6, 0.4]])
    np.testing.assert_allclose(total_variation(estimates, truth), [0.0, 0.5, 0.1])


def test_individual_error_is_in_counts():
    # paper: W-bar(M, x0) = |n pi_hat_x0 - n pi_x0|
    assert individual_error([0.25, 0.75], [0.2, 0.8], x0=0, n_users=1000) == pytest.approx(50.0)
    np.testing.assert_allclose(
        individual_error(np.array([[0.1, 0.9], [0.3, 0.7]]), [0.2, 0.8], x0=1, n_users=10), [1.0, 1.0]
    )


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: total_variation([0.5, 0.5], [1.0, 0.0, 0.0]),
            ValueError,
            r"`estimate` and `truth` must have the same number of bins",
        ),
        (
            lambda: individual_error([0.5, 0.5], [0.5, 0.5], x0=2, n_users=3),
            ValueError,
            r"`x0` must be an integer in \[0, 1\]; got 2\.",
        ),
        (
            lambda: individual_error([0.5, 0.5], [0.5, 0.5], x0=0, n_users=0),
            ValueError,
            r"`n_users` must be an integer in \[1, inf\); got 0\.",
        ),
    ],
)
def test_metrics_reject_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
