"""Tests for shuffledp.mechanisms: k-RR channel, shuffled-histogram sampler, analytic Gaussian."""

import itertools
import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting.randomizers import KRR
from shuffledp.mechanisms import (
    analytic_gaussian_sigma,
    diffprivlib_gaussian_sigma,
    gaussian_calibration,
    gaussian_histogram,
    gaussian_log_delta,
    sample_shuffled_histogram,
    sensitivity_for,
)


def krr_of(epsilon_local, counts):
    """k-RR at ``epsilon_local`` over the k values of the last axis of ``counts``."""
    return KRR(epsilon_local, np.shape(counts)[-1])


@pytest.fixture
def rng():
    return np.random.default_rng(20221014)


# --- k-RR channel ------------------------------------------------------------------------------


@pytest.mark.parametrize("k, eps0", [(2, 0.5), (15, 4.0), (408, 6.0), (5, 800.0)])
def test_krr_channel_is_stochastic_with_ratio_e_eps0(k, eps0):
    channel = KRR(eps0, k).channel
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, rtol=1e-14)
    p, q = KRR(eps0, k).probabilities
    # closed form (Kairouz et al. 2016): p = e^eps0 / (e^eps0 + k - 1), q = 1 / (e^eps0 + k - 1)
    if eps0 < 700:
        assert p == pytest.approx(math.exp(eps0) / (math.exp(eps0) + k - 1), rel=1e-14)
        assert math.log(p / q) == pytest.approx(eps0, rel=1e-12)
    assert np.all(np.diag(channel) == p)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (
            {"k": 1, "epsilon_local": 1.0},
            ValueError,
            r"`k` must be an integer in \[2, 1000000000000000\]; got 1\.",
        ),
        ({"k": 3, "epsilon_local": 0.0}, ValueError, r"`epsilon_local` must be in \(0, inf\); got 0\.0\."),
        ({"k": 2.5, "epsilon_local": 1.0}, TypeError, r"`k` must be an integer; got 2\.5"),
    ],
)
def test_krr_channel_rejects_bad_parameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        _ = KRR(**kwargs).channel


# --- shuffled histogram sampler ----------------------------------------------------------------


def _per_user_reference(counts, epsilon_local, rng, size):
    """Reference: every user runs k-RR on her own value, then the reports are counted (tests only)."""
    k = len(counts)
    values = np.repeat(np.arange(k), counts)
    p, _ = KRR(epsilon_local, k).probabilities
    out = np.zeros((size, k), dtype=np.int64)
    for replicate in range(size):
        keep = rng.random(values.size) < p
        other = (values + rng.integers(1, k, size=values.size)) % k  # uniform over the other k - 1
        reports = np.where(keep, values, other)
        out[replicate] = np.bincount(reports, minlength=k)
    return out


def _exact_histogram_pmf(counts, epsilon_local):
    """Exact pmf of the shuffled histogram by enumerating all k^n report vectors (brute force)."""
    k = len(counts)
    channel = KRR(epsilon_local, k).channel
    values = np.repeat(np.arange(k), counts)
    pmf = {}
    for reports in itertools.product(range(k), repeat=values.size):
        probability = float(np.prod(channel[values, list(reports)]))
        key = tuple(np.bincount(reports, minlength=k))
        pmf[key] = pmf.get(key, 0.0) + probability
    return pmf


def _chi_square_pvalue(samples, pmf):
    keys = list(pmf)
    index = {key: i for i, key in enumerate(keys)}
    observed = np.zeros(len(keys))
    for row in samples:
        observed[index[tuple(row)]] += 1
    expected = np.array([pmf[key] for key in keys]) * len(samples)
    # pool cells with expected count < 5 into one, as the chi-square approximation requires
    small = expected < 5
    obs = np.append(observed[~small], observed[small].sum())
    exp = np.append(expected[~small], expected[small].sum())
    return stats.chisquare(obs, exp).pvalue


def test_count_sampler_and_per_user_sampler_both_match_the_exact_distribution(rng):
    counts = np.array([4, 3, 1])  # n = 8, k = 3: 3^8 = 6561 report vectors enumerated exactly
    eps0 = 1.0
    pmf = _exact_histogram_pmf(counts, eps0)
    assert sum(pmf.values()) == pytest.approx(1.0, abs=1e-12)
    draws = 20_000
    fast = sample_shuffled_histogram(counts, randomizer=krr_of(eps0, counts), rng=rng, size=draws)
    slow = _per_user_reference(counts, eps0, rng, draws)
    # Goodness of fit at level 1e-4 each (seeded, so deterministic); a wrong channel fails by far.
    assert _chi_square_pvalue(fast, pmf) > 1e-4
    assert _chi_square_pvalue(slow, pmf) > 1e-4
    assert fast.sum(axis=1).tolist() == [8] * draws


def test_count_sampler_moments_agree_with_per_user_sampler_within_derived_tolerance(rng):
    counts = np.array([30, 0, 12, 7, 1])
    eps0 = 0.7
    draws = 4_000
    fast = sample_shuffled_histogram(counts, randomizer=krr_of(eps0, counts), rng=rng, size=draws)
    slow = _per_user_reference(counts, eps0, rng, draws)
    channel = KRR(eps0, counts.size).channel
    mean = counts @ channel  # E[Y_y] = sum_x c_x C[x, y]
    variance = counts @ (channel * (1 - channel))  # independent users: sum of Bernoulli variances
    # Difference of two independent sample means: sd = sqrt(2 var / draws); allow 4.5 sd per bin.
    tolerance = 4.5 * np.sqrt(2 * variance / draws)
    assert np.all(np.abs(fast.mean(axis=0) - slow.mean(axis=0)) <= tolerance)
    assert np.all(np.abs(fast.mean(axis=0) - mean) <= 4.5 * np.sqrt(variance / draws))
    np.testing.assert_allclose(fast.var(axis=0), variance, rtol=0.15)


@pytest.mark.parametrize("size", [None, 1, 7])
def test_sampler_skips_empty_values_without_changing_the_stream(size):
    """The channel sampler leaves out the values nobody holds. Against numpy's multinomial over every row of
    the channel (empty ones included), the reports are the same bit for bit and so is the generator's state
    after, so every later draw is too."""
    counts = np.array([0, 5, 0, 0, 300, 1, 0, 12, 0])
    randomizer = krr_of(1.5, counts)
    ours_rng, whole_rng = np.random.default_rng(11), np.random.default_rng(11)
    ours = sample_shuffled_histogram(counts, randomizer=randomizer, rng=ours_rng, size=size)
    replicates = 1 if size is None else size
    whole = whole_rng.multinomial(
        np.broadcast_to(counts, (replicates, counts.size)), randomizer.channel[np.newaxis]
    ).sum(axis=1)
    assert np.array_equal(ours, whole[0] if size is None else whole)
    assert ours_rng.bit_generator.state == whole_rng.bit_generator.state
    # the probe: leaving out a row that somebody holds does change the generator's state
    kept = np.flatnonzero(counts)[1:]
    probe_rng = np.random.default_rng(11)
    probe_rng.multinomial(
        np.broadcast_to(counts[kept], (replicates, kept.size)), randomizer.channel[kept][None]
    )
    assert probe_rng.bit_generator.state != whole_rng.bit_generator.state
    nobody = sample_shuffled_histogram(
        np.zeros(4, dtype=int), randomizer=krr_of(1.0, np.zeros(4)), rng=ours_rng
    )
    assert nobody.tolist() == [0, 0, 0, 0]


def test_sampler_shapes_and_reproducibility():
    counts = [5, 5, 0]
    single = sample_shuffled_histogram(counts, randomizer=krr_of(1.0, counts), rng=np.random.default_rng(1))
    many = sample_shuffled_histogram(
        counts, randomizer=krr_of(1.0, counts), rng=np.random.default_rng(1), size=3
    )
    again = sample_shuffled_histogram(
        counts, randomizer=krr_of(1.0, counts), rng=np.random.default_rng(1), size=3
    )
    assert single.shape == (3,) and many.shape == (3, 3)
    np.testing.assert_array_equal(many, again)


@pytest.mark.parametrize(
    "counts, kwargs, error, match",
    [
        ([1, -1, 2], {}, ValueError, r"`counts` must hold non-negative integers; got -1"),
        ([1.5, 1, 2], {}, ValueError, r"`counts` must hold non-negative integers; got 1\.5"),
        ([3], {}, ValueError, r"`counts` must be a 1-d array of at least 2 bin counts; got shape \(1,\)"),
        ([1, 2], {"size": 0}, ValueError, r"`size` must be an integer in \[1, inf\); got 0\."),
        ([1, 2], {"rng": 3}, TypeError, r"`rng` must be a numpy.random.Generator; got int\."),
        (
            [1, 2, 3],
            {"randomizer": KRR(1.0, 2)},
            ValueError,
            r"`counts` must hold k = 2 bin counts .*; got 3\.",
        ),
        ([1, 2], {"randomizer": 1.0}, TypeError, r"`randomizer` must be a Randomizer .*; got float\."),
    ],
)
def test_sampler_rejects_bad_input(counts, kwargs, error, match):
    arguments = {"randomizer": KRR(1.0, max(2, len(counts))), "rng": np.random.default_rng(0)} | kwargs
    with pytest.raises(error, match=match):
        sample_shuffled_histogram(counts, **arguments)


# --- analytic Gaussian -------------------------------------------------------------------------


def _mp_gaussian_delta(sigma, epsilon, sensitivity):
    """Balle & Wang (2018) Thm 8 evaluated with mpmath at 60 digits (independent reference)."""
    mpmath.mp.dps = 60
    s, e, d = mpmath.mpf(sigma), mpmath.mpf(epsilon), mpmath.mpf(sensitivity)
    phi = lambda x: mpmath.ncdf(x)
    return phi(d / (2 * s) - e * s / d) - mpmath.exp(e) * phi(-d / (2 * s) - e * s / d)


@pytest.mark.parametrize("sigma", [0.3, 1.0, 3.0, 7.0, 12.0, 13.5, 60.0])
@pytest.mark.parametrize("epsilon, sensitivity", [(4.0, math.sqrt(2)), (0.5, 1.0)])
def test_gaussian_log_delta_matches_mpmath_down_to_tiny_delta(sigma, epsilon, sensitivity):
    ours = float(gaussian_log_delta(sigma, epsilon=epsilon, sensitivity=sensitivity))
    reference = _mp_gaussian_delta(sigma, epsilon, sensitivity)
    assert ours == pytest.approx(float(mpmath.log(reference)), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("delta", [0.5, 1e-3, 1e-10, 1e-16, 1e-40, 1e-150, 1e-300])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0, 6.0])
def test_analytic_sigma_is_the_smallest_sigma_meeting_delta(epsilon, delta):
    sensitivity = math.sqrt(2)
    sigma = analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    # sigma is the root to a relative 1e-9: 0.1% less noise breaks delta, 1e-9 more meets it
    # (the mpmath reference is independent of our log-space formula)
    assert _mp_gaussian_delta(sigma * (1 + 1e-9), epsilon, sensitivity) < delta
    assert _mp_gaussian_delta(sigma * (1 - 1e-9), epsilon, sensitivity) > delta


@pytest.mark.parametrize("epsilon, delta", [(0.5, 1e-5), (0.9, 1e-8)])
def test_analytic_sigma_beats_the_classical_gaussian(epsilon, delta):
    # Dwork & Roth Thm A.1 (valid for eps < 1): sigma = sqrt(2 ln(1.25/delta)) Delta / eps suffices,
    # so the optimal (analytic) sigma is no larger.
    classical = math.sqrt(2 * math.log(1.25 / delta)) / epsilon
    assert analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=1.0) < classical


@pytest.mark.parametrize("sigma", [0.8, 1.5, 3.0])
def test_gaussian_delta_agrees_with_dp_accounting(sigma):
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    loss = GaussianPrivacyLoss(standard_deviation=sigma, sensitivity=math.sqrt(2))
    reference = loss.get_delta_for_epsilon(2.0)
    ours = math.exp(float(gaussian_log_delta(sigma, epsilon=2.0, sensitivity=math.sqrt(2))))
    assert ours == pytest.approx(reference, rel=1e-8)


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-8])
def test_diffprivlib_agrees_where_its_normal_cdf_is_accurate(delta):
    calibration = gaussian_calibration(epsilon=4.0, delta=delta, sensitivity=math.sqrt(2))
    assert calibration.sigma_diffprivlib == pytest.approx(calibration.sigma, rel=1e-6)
    assert not calibration.diffprivlib_differs


@pytest.mark.parametrize("delta", [1e-20, 1e-50, 1e-300])
def test_diffprivlib_under_noises_below_1e_16_and_we_flag_it(delta):
    calibration = gaussian_calibration(epsilon=4.0, delta=delta, sensitivity=math.sqrt(2))
    assert calibration.diffprivlib_differs
    assert calibration.sigma_diffprivlib < calibration.sigma
    assert calibration.sigma == calibration.sigma_log_space
    # diffprivlib's sigma does not give the promised delta: its true delta exceeds the target
    achieved = float(gaussian_log_delta(calibration.sigma_diffprivlib, epsilon=4.0, sensitivity=math.sqrt(2)))
    assert achieved > math.log(delta) + 1.0
    assert (
        diffprivlib_gaussian_sigma(epsilon=4.0, delta=delta, sensitivity=math.sqrt(2))
        == calibration.sigma_diffprivlib
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0, "delta": 1e-5, "sensitivity": 1.0}, r"`epsilon` must be in \(0, inf\); got 0\.0\."),
        ({"epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0}, r"`delta` must be in \(0, 1\); got 0\.0\."),
        ({"epsilon": 1.0, "delta": 1.5, "sensitivity": 1.0}, r"`delta` must be in \(0, 1\); got 1\.5\."),
        (
            {"epsilon": 1.0, "delta": 1e-5, "sensitivity": -1.0},
            r"`sensitivity` must be in \(0, inf\); got -1\.0\.",
        ),
    ],
)
def test_analytic_sigma_rejects_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        analytic_gaussian_sigma(**kwargs)


def test_gaussian_histogram_adds_noise_of_the_given_scale(rng):
    counts = np.array([100, 0, 50])
    noisy = gaussian_histogram(counts, sigma=2.0, rng=rng, size=20_000)
    assert noisy.shape == (20_000, 3)
    # mean within 5 standard errors (sd 2 / sqrt(20000)); sd within 3% (chi-square spread ~1%)
    np.testing.assert_allclose(noisy.mean(axis=0), counts, atol=5 * 2.0 / math.sqrt(20_000))
    np.testing.assert_allclose(noisy.std(axis=0), 2.0, rtol=0.03)
    with pytest.raises(ValueError, match=r"`sigma` must be in \[0, inf\); got -1\.0\."):
        gaussian_histogram(counts, sigma=-1.0, rng=rng)


def test_sensitivity_of_the_histogram_under_each_neighbouring_relation():
    assert sensitivity_for("replace-one") == math.sqrt(2)  # one unit moves between two bins
    assert sensitivity_for("add-remove") == 1.0
    with pytest.raises(
        ValueError, match=r"`neighbouring` must be one of 'replace-one', 'add-remove'; got 'swap'\."
    ):
        sensitivity_for("swap")
