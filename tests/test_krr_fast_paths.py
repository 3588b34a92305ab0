"""The fast paths of the equal-guarantee experiment: the O(k) blanket sampler of the shuffled k-RR
histogram, the O(k) k-RR IBU step and IBU's closed-form limit, and the central references' noise
(two-sided geometric, Gaussian) against their closed forms. Statistical tolerances come from the
closed-form variances and the number of draws (4 standard errors: a false alarm ~6e-5 per check)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from shuffledp.accounting.randomizers import KRR
from shuffledp.estimators import (
    estimate_distribution,
    invert,
    iterative_bayesian_update,
    krr_iterative_bayesian_update,
    krr_maximum_likelihood,
)
from shuffledp.mechanisms import (
    gaussian_histogram,
    geometric_alpha,
    geometric_histogram,
    geometric_moments,
    l1_sensitivity_for,
    sample_shuffled_counts,
    sample_shuffled_histogram,
)


def krr_of(epsilon_local, counts):
    """k-RR at ``epsilon_local`` over the k values of the last axis of ``counts``."""
    return KRR(epsilon_local, np.shape(counts)[-1])


Z = 4.0


@pytest.fixture
def rng():
    return np.random.default_rng(20240612)


# --- the blanket sampler has the law of the shuffled k-RR histogram ------------------------------


def _exact_histogram_law(counts, epsilon_local):
    """P(histogram) by enumerating every user's report (brute force; tiny n and k only)."""
    k = len(counts)
    channel = KRR(epsilon_local, k).channel
    values = [x for x, c in enumerate(counts) for _ in range(c)]
    law = Counter()
    for reports in itertools.product(range(k), repeat=len(values)):
        probability = math.prod(channel[x, y] for x, y in zip(values, reports))
        law[tuple(np.bincount(reports, minlength=k))] += probability
    return law


@pytest.mark.parametrize("counts, eps0", [([2, 1, 0], 1.0), ([1, 1, 1, 1], 0.4), ([3, 0], 2.5)])
def test_blanket_sampler_matches_brute_force_law(counts, eps0, rng):
    law = _exact_histogram_law(counts, eps0)
    draws = 200_000
    sample = sample_shuffled_counts(counts, randomizer=krr_of(eps0, counts), rng=rng, size=draws)
    seen = Counter(map(tuple, sample))
    assert set(seen) <= set(law)
    for histogram, probability in law.items():
        standard_error = math.sqrt(probability * (1 - probability) / draws)
        assert abs(seen[histogram] / draws - probability) <= Z * standard_error + 1e-12, histogram


@pytest.mark.parametrize("k, eps0", [(15, 1.3), (192, 6.0)])
def test_blanket_sampler_moments_equal_the_per_value_multinomial_sampler(k, eps0, rng):
    counts = rng.multinomial(5000, rng.dirichlet(np.ones(k)))
    p, q = KRR(eps0, k).probabilities
    mean = counts * p + (counts.sum() - counts) * q
    variance = counts * p * (1 - p) + (counts.sum() - counts) * q * (1 - q)
    draws = 1000
    for sampler in (sample_shuffled_counts, sample_shuffled_histogram):
        sample = sampler(counts, randomizer=KRR(eps0, k), rng=rng, size=draws)
        assert np.all(sample.sum(axis=1) == counts.sum())
        assert np.all(np.abs(sample.mean(axis=0) - mean) <= Z * np.sqrt(variance / draws) + 1e-9)


def test_blanket_sampler_single_draw_and_errors(rng):
    assert sample_shuffled_counts([3, 4, 5], randomizer=krr_of(1.0, [3, 4, 5]), rng=rng).shape == (3,)
    with pytest.raises(TypeError, match=r"`rng` must be a numpy.random.Generator; got RandomState"):
        sample_shuffled_counts([3, 4], randomizer=krr_of(1.0, [3, 4]), rng=np.random.RandomState(0))
    with pytest.raises(ValueError, match=r"`counts` must hold non-negative integers; got -1"):
        sample_shuffled_counts([3, -1], randomizer=krr_of(1.0, [3, -1]), rng=rng)


# --- INV is unbiased (closed form of k-RR) -------------------------------------------------------


@pytest.mark.parametrize("k, eps0, n", [(15, 1.0, 1000), (50, 3.0, 20_000)])
def test_inversion_without_projection_is_unbiased(k, eps0, n, rng):
    counts = rng.multinomial(n, rng.dirichlet(np.ones(k)))
    truth = counts / n
    p, q = KRR(eps0, k).probabilities
    variance = (counts * p * (1 - p) + (n - counts) * q * (1 - q)) / (n * (p - q)) ** 2  # Var of pi_hat_x
    draws = 20_000
    estimates = invert(
        sample_shuffled_counts(counts, randomizer=krr_of(eps0, counts), rng=rng, size=draws),
        randomizer=krr_of(eps0, counts),
    )
    assert np.all(np.abs(estimates.mean(axis=0) - truth) <= Z * np.sqrt(variance / draws))
    # and its variance is the closed form (relative SE of a sample variance ~ sqrt(2 / draws))
    np.testing.assert_allclose(estimates.var(axis=0), variance, rtol=Z * math.sqrt(2.0 / draws) * 1.5)


# --- IBU: the O(k) step equals the generic one, and its limit has a closed form -------------------


@pytest.mark.parametrize("k, eps0, n", [(2, 0.5, 50), (15, 1.0, 1000), (40, 4.0, 300), (192, 2.0, 5000)])
def test_krr_ibu_equals_generic_ibu(k, eps0, n, rng):
    counts = rng.multinomial(n, rng.dirichlet(np.full(k, 0.5)))
    reports = sample_shuffled_counts(
        counts, randomizer=krr_of(eps0, counts), rng=rng, size=8
    )  # vectorised over replicates
    options = {"tolerance": 1e-10, "max_iterations": 3000}
    fast = krr_iterative_bayesian_update(reports, randomizer=krr_of(eps0, reports), **options)
    generic = iterative_bayesian_update(reports, channel=KRR(eps0, k).channel, **options)
    np.testing.assert_allclose(fast, generic, rtol=0, atol=1e-12)


def test_estimate_distribution_ibu_uses_the_fast_step_with_the_same_result(rng):
    reports = sample_shuffled_counts(
        [40, 30, 20, 10, 0], randomizer=krr_of(3.0, [40, 30, 20, 10, 0]), rng=rng, size=4
    )
    np.testing.assert_allclose(
        estimate_distribution(reports, randomizer=krr_of(3.0, reports), estimator="ibu"),
        iterative_bayesian_update(reports, channel=KRR(3.0, 5).channel),
        atol=1e-10,
    )


def _log_likelihood(theta, reports, eps0):
    p, q = KRR(eps0, reports.shape[-1]).probabilities
    return np.sum(reports * np.log((p - q) * theta + q), axis=-1)


@pytest.mark.parametrize("k, eps0, n", [(5, 3.0, 200), (15, 1.0, 300), (30, 0.7, 100), (100, 5.0, 2000)])
def test_closed_form_mle_is_ibus_limit(k, eps0, n, rng):
    counts = rng.multinomial(n, rng.dirichlet(np.full(k, 0.3)))
    reports = sample_shuffled_counts(counts, randomizer=krr_of(eps0, counts), rng=rng, size=20)
    mle = krr_maximum_likelihood(reports, randomizer=krr_of(eps0, reports))
    ibu = krr_iterative_bayesian_update(
        reports, randomizer=krr_of(eps0, reports), tolerance=1e-13, max_iterations=200_000
    )
    assert np.all(mle >= 0) and np.allclose(mle.sum(axis=1), 1.0, atol=1e-12)
    # the closed form is never less likely than IBU run long, and IBU approaches it
    assert np.all(_log_likelihood(mle, reports, eps0) >= _log_likelihood(ibu, reports, eps0) - 1e-9)
    assert np.max(np.abs(mle - ibu)) < 2e-3


def test_closed_form_mle_is_inv_inside_the_simplex(rng):
    counts = np.array([300, 250, 200, 150, 100])
    reports = sample_shuffled_counts(counts, randomizer=krr_of(3.0, counts), rng=rng, size=50)
    inverted = invert(reports, randomizer=krr_of(3.0, reports))
    inside = np.all(inverted > 0, axis=1)
    assert inside.any()
    np.testing.assert_allclose(
        krr_maximum_likelihood(reports, randomizer=krr_of(3.0, reports))[inside], inverted[inside], atol=1e-12
    )


# --- central references -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "epsilon, neighbouring", [(0.1, "replace-one"), (1.0, "add-remove"), (4.0, "replace-one")]
)
def test_geometric_noise_mean_zero_variance_and_pmf_closed_form(epsilon, neighbouring, rng):
    sensitivity = l1_sensitivity_for(neighbouring)
    alpha = geometric_alpha(epsilon=epsilon, sensitivity=sensitivity)
    moments = geometric_moments(alpha)
    assert moments["variance"] == pytest.approx(2 * alpha / (1 - alpha) ** 2)
    draws, k = 100_000, 4
    counts = np.array([10, 0, 5, 1])
    noise = (
        geometric_histogram(counts, epsilon=epsilon, sensitivity=sensitivity, rng=rng, size=draws) - counts
    ).ravel()
    m = noise.size
    assert np.issubdtype(noise.dtype, np.integer)
    assert abs(noise.mean()) <= Z * math.sqrt(moments["variance"] / m)
    # fourth moment of the two-sided geometric is finite; a sample variance has relative SE <= sqrt(6 / m) here
    assert noise.var() == pytest.approx(moments["variance"], rel=Z * math.sqrt(6.0 / m) + 1e-12)
    assert np.abs(noise).mean() == pytest.approx(moments["mean_absolute"], rel=Z * math.sqrt(6.0 / m) + 1e-12)
    for z in (-2, -1, 0, 1, 2):
        probability = (1 - alpha) / (1 + alpha) * alpha ** abs(z)
        assert (
            abs((noise == z).mean() - probability)
            <= Z * math.sqrt(probability * (1 - probability) / m) + 1e-12
        )
    assert k == counts.size


def test_gaussian_noise_is_unbiased_with_its_sigma(rng):
    counts, sigma, draws = np.array([100, 0, 7]), 12.5, 50_000
    noise = gaussian_histogram(counts, sigma=sigma, rng=rng, size=draws) - counts
    assert np.all(np.abs(noise.mean(axis=0)) <= Z * sigma / math.sqrt(draws))
    np.testing.assert_allclose(noise.var(axis=0), sigma**2, rtol=Z * math.sqrt(2.0 / draws))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: geometric_alpha(epsilon=0.0, sensitivity=2.0),
            ValueError,
            r"`epsilon` must be in \(0, inf\); got 0.0",
        ),
        (
            lambda: geometric_alpha(epsilon=1.0, sensitivity=-1.0),
            ValueError,
            r"`sensitivity` must be in \(0, inf\); got -1.0",
        ),
        (lambda: geometric_moments(1.0), ValueError, r"`alpha` must be in \(0, 1\); got 1.0"),
        (lambda: l1_sensitivity_for("swap"), ValueError, r"`neighbouring` must be one of"),
    ],
)
def test_errors_name_the_parameter(call, error, match):
    with pytest.raises(error, match=match):
        call()
