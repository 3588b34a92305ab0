"""Tests for shuffledp.experiments.utility: data generation, delta rule, reproducibility by (seed, identity)."""

import math

import numpy as np
import pytest

from shuffledp._random import job_rng
from shuffledp.accounting import list_accountants
from shuffledp.experiments import utility as E


@pytest.mark.parametrize(
    "value, expected",
    [(0.0, 7), (0.49, 7), (0.51, 8), (-7.0, 0), (-50.0, 0), (7.2, 14), (99.0, 14), (-0.5, 7)],
)
def test_discretise_normal_bins_of_width_one_centred_on_integers(value, expected):
    # k = 15 bins centred on -7..7 (labels 1..15 = index + 1); tails clipped into the end bins.
    assert E.discretise_normal([value], k=15, mean=0.0, bin_width=1.0)[0] == expected


def test_synthetic_counts_follow_the_discretised_normal():
    counts = E.synthetic_counts(
        200_000, k=15, mean=0.0, standard_deviation=2.0, bin_width=1.0, rng=np.random.default_rng(5)
    )
    from scipy.stats import norm

    edges = np.arange(-7.5, 8.5, 1.0)
    cdf = norm.cdf(edges, scale=2.0)
    expected = np.diff(cdf)
    expected[0] += cdf[0]
    expected[-1] += 1 - cdf[-1]
    # binomial standard error per bin, 5 s.e. tolerance
    tolerance = 5 * np.sqrt(expected * (1 - expected) / 200_000)
    assert np.all(np.abs(counts / 200_000 - expected) <= tolerance)


def test_sampling_without_replacement_is_a_subset_and_with_replacement_is_multinomial():
    region = np.array([5, 0, 3, 2])
    rng = np.random.default_rng(1)
    subset = E.sample_region_counts(region, 10, replace=False, rng=rng)
    np.testing.assert_array_equal(subset, region)  # n = N takes every check-in
    assert E.sample_region_counts(region, 4, replace=True, rng=rng).sum() == 4
    with pytest.raises(ValueError, match=r"`n_users` must be at most the region's 10 check-ins .*; got 11\."):
        E.sample_region_counts(region, 11, replace=False, rng=rng)


def test_delta_floor_rule_marks_zero_delta_and_keeps_positive_delta():
    floored = E.calibrate(0.0, epsilon=4.0, sensitivity=math.sqrt(2), delta_floor=1e-300)
    assert floored.delta_floored and floored.delta_used == 1e-300 and floored.delta == 0.0
    kept = E.calibrate(1e-6, epsilon=4.0, sensitivity=math.sqrt(2), delta_floor=1e-300)
    assert not kept.delta_floored and kept.delta_used == 1e-6
    assert floored.sigma > kept.sigma  # smaller delta, more noise
    with pytest.raises(ValueError, match=r"`delta_floor` must be in \(0, 1\); got 0\.0\."):
        E.calibrate(0.0, epsilon=1.0, sensitivity=1.0, delta_floor=0.0)


def test_community_utility_replicates_depend_only_on_their_stream():
    counts = np.array([40, 30, 20, 10])
    first = E.community_utility(
        counts, epsilon_local=1.0, sigma=2.0, estimator="inv-projection", rng=job_rng(7, "x", 1), replicates=3
    )
    E.community_utility(
        counts, epsilon_local=1.0, sigma=2.0, estimator="inv-projection", rng=job_rng(7, "y"), replicates=3
    )
    again = E.community_utility(
        counts, epsilon_local=1.0, sigma=2.0, estimator="inv-projection", rng=job_rng(7, "x", 1), replicates=3
    )
    for mechanism in E.MECHANISMS:
        np.testing.assert_array_equal(first[mechanism], again[mechanism])
    assert set(first) == set(E.MECHANISMS)
    no_gaussian = E.community_utility(
        counts, epsilon_local=1.0, sigma=math.inf, estimator="inv", rng=job_rng(7, "z")
    )
    assert np.isnan(no_gaussian["gaussian"]).all()


def test_individual_utility_gaussian_error_scale_matches_half_normal():
    # E|N(0, sigma^2)| = sigma sqrt(2 / pi) (closed form); 20,000 draws, 5 standard errors
    counts = np.array([500, 300, 200])
    errors = E.individual_utility(
        counts,
        [0, 2],
        epsilon_local=2.0,
        sigmas=[3.0, 6.0],
        estimator="inv-projection",
        rng=np.random.default_rng(2),
        replicates=20_000,
    )
    expected = np.array([3.0, 6.0]) * math.sqrt(2 / math.pi) / 1000
    se = np.array([3.0, 6.0]) * math.sqrt(1 - 2 / math.pi) / 1000 / math.sqrt(20_000)
    assert np.all(np.abs(errors["gaussian"].mean(axis=0) - expected) <= 5 * se)
    assert errors["shuffle+INV"].shape == (20_000, 2)


@pytest.mark.skipif(
    "strong-adversary" not in list_accountants(), reason="strong-adversary accountant not registered yet"
)
def test_community_sweep_is_independent_of_job_order():
    # A replicate's numbers depend only on (seed, identity): running the grid in another order or in
    # separate jobs (as with --cores > 1) gives identical rows.
    region = np.array([30, 10, 0, 25, 5, 30])
    common = dict(
        settings=[{"epsilon": 1.0, "epsilon_local": 2.0}],
        runs=2,
        replace=True,
        accountants=[("configured", "strong-adversary"), ("lower", "worst-case-lower")],
        neighbouring_sensitivity=math.sqrt(2),
        delta_floor=1e-300,
        estimator="inv-projection",
        seed=11,
        identity=("test",),
    )
    together = E.community_sweep(region, n_users_grid=[50, 80], **common)
    reversed_ = E.community_sweep(region, n_users_grid=[80, 50], **common)
    alone = E.community_sweep(region, n_users_grid=[80], **common)
    key = ["calibration", "n_users", "run", "mechanism"]
    a = together.sort_values(key).reset_index(drop=True)
    b = reversed_.sort_values(key).reset_index(drop=True)
    np.testing.assert_array_equal(a["l1_half"], b["l1_half"])
    np.testing.assert_array_equal(a[a["n_users"] == 80]["l1_half"], alone.sort_values(key)["l1_half"])


# --- how strong a single-draw verdict is ---------------------------------------------


def test_heatmap_summary_lists_the_pictured_configured_calibration_first():
    from pathlib import Path

    import yaml

    with open(Path(__file__).resolve().parents[2] / "config" / "config.yaml", encoding="utf-8") as handle:
        utility = yaml.safe_load(handle)["utility"]
    # strong-adversary is positive at eps = eps0, so its sigma differs from the floored calibrations'
    utility = {**utility, "accountant": "strong-adversary"}
    counts = np.array([40, 0, 25, 300, 7, 12, 0, 60])
    cells, summary = E.heatmap_job(counts, utility=utility, seed=3, region="test")
    assert summary["calibration"].tolist() == ["configured", "as_printed", "lower"]
    assert summary["accountant"].iloc[0] == "strong-adversary"
    truth = counts / counts.sum()
    # the pictured Gaussian is the configured one: its TV is the first summary row's
    assert 0.5 * np.abs(cells["gaussian"] - truth).sum() == pytest.approx(summary["l1_half_gaussian"].iloc[0])
    assert summary["l1_half_gaussian"].iloc[0] != pytest.approx(summary["l1_half_gaussian"].iloc[1])
