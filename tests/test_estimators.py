"""Tests for shuffledp.estimators: INV, simplex projection, clip-and-renormalise, IBU."""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import minimize

from shuffledp.accounting.randomizers import KRR
from shuffledp.estimators import (
    clip_and_renormalise,
    estimate_distribution,
    invert,
    iterative_bayesian_update,
    normalise_counts,
    project_to_simplex,
)
from shuffledp.mechanisms import sample_shuffled_histogram


def krr_of(epsilon_local, counts):
    """k-RR at ``epsilon_local`` over the k values of the last axis of ``counts``."""
    return KRR(epsilon_local, np.shape(counts)[-1])


@pytest.fixture
def rng():
    return np.random.default_rng(7)


# --- matrix inversion --------------------------------------------------------------------------


@pytest.mark.parametrize("k, eps0", [(2, 0.3), (5, 1.0), (15, 4.0)])
def test_inversion_recovers_pi_from_its_exact_image(k, eps0, rng):
    pi = rng.dirichlet(np.ones(k))
    expected_reports = pi @ KRR(eps0, k).channel  # f = pi C exactly
    np.testing.assert_allclose(
        invert(expected_reports, randomizer=krr_of(eps0, expected_reports)), pi, atol=1e-12
    )
    # and equals f C^{-1} computed by a general-purpose solver
    np.testing.assert_allclose(
        invert(expected_reports, randomizer=krr_of(eps0, expected_reports)),
        np.linalg.solve(KRR(eps0, k).channel.T, expected_reports),
        atol=1e-12,
    )


def test_inversion_is_unbiased_within_a_variance_derived_tolerance(rng):
    # paper eq. (7): E[pi_hat] = pi. Var(pi_hat_y) = Var(Y_y) / (n (p - q))^2 with Y_y the reported
    # count (a sum of independent Bernoullis), so the replicate mean has sd sqrt(Var / R).
    counts = np.array([400, 250, 200, 100, 40, 10, 0])
    n, k, eps0, replicates = counts.sum(), counts.size, 1.5, 20_000
    pi = counts / n
    reports = sample_shuffled_histogram(counts, randomizer=krr_of(eps0, counts), rng=rng, size=replicates)
    estimates = invert(reports, randomizer=krr_of(eps0, reports))
    channel = KRR(eps0, k).channel
    p, q = KRR(eps0, k).probabilities
    variance = (counts @ (channel * (1 - channel))) / (n * (p - q)) ** 2
    standard_error = np.sqrt(variance / replicates)
    assert np.all(np.abs(estimates.mean(axis=0) - pi) <= 4.5 * standard_error)
    np.testing.assert_allclose(estimates.var(axis=0), variance, rtol=0.05)


# --- projection onto the simplex ---------------------------------------------------------------


@pytest.mark.parametrize(
    "values, expected",
    [
        ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]),  # already on the simplex: unchanged
        ([1.0, 1.0], [0.5, 0.5]),  # shift by -1/2
        ([2.0, 0.0, 0.0], [1.0, 0.0, 0.0]),  # a vertex
        ([0.6, 0.6, -0.2], [0.5, 0.5, 0.0]),  # negative entry clipped, rest shifted equally
        ([-1.0, -1.0, -1.0], [1 / 3, 1 / 3, 1 / 3]),  # uniform shift of a constant vector
    ],
)
def test_projection_known_cases(values, expected):
    np.testing.assert_allclose(project_to_simplex(values), expected, atol=1e-15)


def _brute_force_projection(v):
    """Exact projection by enumerating supports (KKT: x = v + lambda on the support)."""
    k = v.size
    best, best_distance = None, math.inf
    for size in range(1, k + 1):
        for support in itertools.combinations(range(k), size):
            x = np.zeros(k)
            lam = (1 - v[list(support)].sum()) / size
            x[list(support)] = v[list(support)] + lam
            if np.all(x >= -1e-15):
                distance = np.sum((x - v) ** 2)
                if distance < best_distance:
                    best, best_distance = x, distance
    return best


def test_projection_matches_brute_force_and_a_qp_solver(rng):
    rows = rng.normal(0.2, 0.6, size=(60, 5))
    ours = project_to_simplex(rows)
    for row, projected in zip(rows, ours):
        np.testing.assert_allclose(projected, _brute_force_projection(row), atol=1e-12)
    qp = minimize(
        lambda x: np.sum((x - rows[0]) ** 2),
        np.full(5, 0.2),
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
        bounds=[(0, None)] * 5,
        method="SLSQP",
        options={"ftol": 1e-14},
    )
    np.testing.assert_allclose(ours[0], qp.x, atol=1e-6)
    assert ours.shape == rows.shape
    np.testing.assert_allclose(ours.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(ours >= 0)


def test_projection_vectorises_over_leading_axes(rng):
    values = rng.normal(size=(3, 4, 6))
    np.testing.assert_allclose(project_to_simplex(values)[1, 2], project_to_simplex(values[1, 2]), atol=0)


# --- clip and renormalise ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "values, expected",
    [
        ([0.6, 0.6, -0.2], [0.5, 0.5, 0.0]),
        ([0.7, 0.5, -0.2], [0.7 / 1.2, 0.5 / 1.2, 0.0]),
        ([-1.0, -2.0], [0.5, 0.5]),  # nothing positive: uniform
    ],
)
def test_clip_and_renormalise(values, expected):
    np.testing.assert_allclose(clip_and_renormalise(values), expected, atol=1e-15)


# --- IBU ---------------------------------------------------------------------------------------


def test_ibu_equals_inversion_when_inversion_lies_in_the_simplex(rng):
    # The multinomial likelihood is maximised at pi C = f when that is attainable, i.e. the MLE is
    # the inversion estimate whenever it is a distribution.
    reports = np.array([50, 30, 25])
    inverted = invert(reports, randomizer=krr_of(1.0, reports))
    assert np.all(inverted > 0)
    ibu = iterative_bayesian_update(reports, channel=KRR(1.0, 3).channel)
    np.testing.assert_allclose(ibu, inverted, atol=1e-8)


def test_ibu_converges_to_the_mle_on_the_simplex_boundary():
    # INV leaves the simplex here; compare with a direct maximisation of the log-likelihood.
    reports = np.array([2, 30, 28])
    channel = KRR(0.8, 3).channel
    assert np.any(invert(reports, randomizer=krr_of(0.8, reports)) < 0)
    ibu = iterative_bayesian_update(reports, channel=channel)

    def negative_log_likelihood(pi):
        return -np.sum(reports * np.log(np.clip(pi @ channel, 1e-300, None)))

    best = minimize(
        negative_log_likelihood,
        np.full(3, 1 / 3),
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
        bounds=[(0, 1)] * 3,
        method="SLSQP",
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert negative_log_likelihood(ibu) <= best.fun + 1e-8
    np.testing.assert_allclose(ibu, best.x, atol=2e-3)
    assert ibu.sum() == pytest.approx(1.0, abs=1e-12)


def test_ibu_vectorised_rows_equal_single_rows(rng):
    reports = sample_shuffled_histogram(
        [30, 10, 5, 5], randomizer=krr_of(1.0, [30, 10, 5, 5]), rng=rng, size=4
    )
    channel = KRR(1.0, 4).channel
    batch = iterative_bayesian_update(reports, channel=channel)
    np.testing.assert_allclose(batch[2], iterative_bayesian_update(reports[2], channel=channel), atol=1e-10)


# --- dispatch and errors -----------------------------------------------------------------------


def test_estimate_distribution_dispatches_by_name():
    reports = np.array([40, 35, 1, 0])
    inv = invert(reports, randomizer=krr_of(1.0, reports))
    np.testing.assert_allclose(
        estimate_distribution(reports, randomizer=krr_of(1.0, reports), estimator="inv"), inv
    )
    np.testing.assert_allclose(
        estimate_distribution(reports, randomizer=krr_of(1.0, reports), estimator="inv-projection"),
        project_to_simplex(inv),
    )
    np.testing.assert_allclose(
        estimate_distribution(reports, randomizer=krr_of(1.0, reports), estimator="inv-clip"),
        clip_and_renormalise(inv),
    )
    np.testing.assert_allclose(
        estimate_distribution(reports, randomizer=krr_of(1.0, reports), estimator="raw"), reports / 76
    )
    assert estimate_distribution(
        reports, randomizer=krr_of(1.0, reports), estimator="ibu"
    ).sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: estimate_distribution([1, 2], randomizer=krr_of(1.0, [1, 2]), estimator="mle"),
            ValueError,
            r"`estimator` must be one of 'inv-projection', 'inv-clip', 'inv', 'ibu', 'raw'; got 'mle'\.",
        ),
        (lambda: normalise_counts([0, 0]), ValueError, r"`counts` must have a positive total in every row"),
        (lambda: normalise_counts([1, -1, 3]), ValueError, r"`counts` must be non-negative; got -1\.0"),
        (
            lambda: project_to_simplex([1.0]),
            ValueError,
            r"`values` must have at least 2 entries on its last axis",
        ),
        (lambda: project_to_simplex([1.0, np.nan]), ValueError, r"`values` must be finite"),
        (
            lambda: iterative_bayesian_update([1, 2], channel=np.eye(3)),
            ValueError,
            r"`channel` must have shape \(2, 2\) to match the counts; got \(3, 3\)\.",
        ),
        (
            lambda: invert([1, 2], randomizer=krr_of(-1.0, [1, 2])),
            ValueError,
            r"`epsilon_local` must be in \(0, inf\); got -1\.0\.",
        ),
    ],
)
def test_estimators_reject_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
