"""shuffledp.experiments.compare and .exact_error: exact rows against brute force and simulation, closed
forms, the calibration used, the dataset rules and the verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from shuffledp.accounting.calibrate import calibrate_epsilon_local
from shuffledp.accounting.randomizers import KRR
from shuffledp.estimators import invert
from shuffledp.experiments.compare import (
    CALIBRATIONS,
    MECHANISMS,
    compare,
    dataset_counts,
    largest_remainder,
    verdict,
)
from shuffledp.experiments.exact_error import (
    gaussian_expected_error,
    geometric_expected_error,
    krr_inv_expected_error,
)
from shuffledp.mechanisms import (
    gaussian_histogram,
    geometric_histogram,
    sample_shuffled_counts,
)
from shuffledp.metrics import total_variation


def krr_of(epsilon_local, counts):
    """k-RR at ``epsilon_local`` over the k values of the last axis of ``counts``."""
    return KRR(epsilon_local, np.shape(counts)[-1])


def _brute_force_tv(counts, epsilon_local):
    """(1/2) sum_x E|Y_x - mu_x| / (n (p - q)) with Y_x's pmf from the full convolution of its two binomials."""
    n_users, k = int(counts.sum()), counts.size
    p, q = KRR(epsilon_local, k).probabilities
    total = 0.0
    for count in counts:
        law = np.convolve(
            binom.pmf(np.arange(count + 1), count, p),
            binom.pmf(np.arange(n_users - count + 1), n_users - count, q),
        )
        total += np.sum(law * np.abs(np.arange(n_users + 1) - (count * p + (n_users - count) * q)))
    return 0.5 * total / (n_users * (p - q))


@pytest.mark.parametrize(
    "counts, epsilon_local",
    [
        pytest.param([20, 0, 30], 1.0, id="k3-empty-cell"),
        pytest.param([50, 50], 0.3, id="k2-small-eps0"),
        pytest.param([1] * 15 + [185], 2.0, id="k16-skewed"),
        pytest.param([0] * 400 + [25] * 8, 5.0, id="k408-sparse"),
        pytest.param([60, 90, 150], 12.0, id="large-eps0"),
    ],
)
def test_exact_krr_tv_equals_brute_force_convolution(counts, epsilon_local):
    counts = np.asarray(counts)
    assert krr_inv_expected_error(counts, epsilon_local=epsilon_local).l1_half == pytest.approx(
        _brute_force_tv(counts, epsilon_local), rel=1e-10
    )


@pytest.mark.parametrize(
    "n_users, k, epsilon_local", [(50, 2, 0.5), (200, 15, 2.0), (500, 40, 3.0), (300, 5, 0.2)]
)
def test_exact_krr_rows_agree_with_simulation(n_users, k, epsilon_local):
    """Simulated unprojected INV (count-level sampler, 4000 draws) within 4 standard errors of the exact
    E TV and E squared L2 (the SE is the draws' own; a 4-SE miss has probability ~6e-5 per check)."""
    counts = largest_remainder(np.arange(1, k + 1) ** -1.0, n_users)
    rng = np.random.default_rng(20)
    estimates = invert(
        sample_shuffled_counts(counts, randomizer=krr_of(epsilon_local, counts), rng=rng, size=4000),
        randomizer=krr_of(epsilon_local, counts),
    )
    truth = counts / n_users
    exact = krr_inv_expected_error(counts, epsilon_local=epsilon_local)
    for draws, expected in (
        (total_variation(estimates, truth), exact.l1_half),
        (np.sum((estimates - truth) ** 2, axis=-1), exact.squared_l2),
    ):
        assert abs(draws.mean() - expected) < 4 * draws.std(ddof=1) / math.sqrt(draws.size)


def test_gaussian_closed_form_and_simulation():
    """E|N(0, sigma^2)| = sigma sqrt(2/pi) per cell, so E TV = sigma sqrt(2/pi) k / (2 n); simulated within 4 SE."""
    k, n_users, sigma = 15, 400, 7.5
    exact = gaussian_expected_error(k=k, n_users=n_users, sigma=sigma)
    assert exact.l1_half == sigma * math.sqrt(2 / math.pi) * k / 2 / n_users
    assert exact.squared_l2 == k * sigma**2 / n_users**2
    counts = largest_remainder(np.ones(k), n_users)
    draws = total_variation(
        gaussian_histogram(counts, sigma=sigma, rng=np.random.default_rng(3), size=4000) / n_users,
        counts / n_users,
    )
    assert abs(draws.mean() - exact.l1_half) < 4 * draws.std(ddof=1) / math.sqrt(draws.size)


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.6065306597126334, 0.95])
def test_geometric_closed_form_equals_direct_summation(alpha):
    """E|Z| and E Z^2 of P(Z = z) = (1 - alpha)/(1 + alpha) alpha^|z|, summed directly over |z| <= 5000."""
    z = np.arange(-5000, 5001)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(z)
    k, n_users = 7, 100
    exact = geometric_expected_error(k=k, n_users=n_users, alpha=alpha)
    assert exact.l1_half == pytest.approx(k * np.sum(pmf * np.abs(z)) / (2 * n_users), rel=1e-12)
    assert exact.squared_l2 == pytest.approx(k * np.sum(pmf * z**2) / n_users**2, rel=1e-12)


def test_geometric_simulation_agrees():
    counts = largest_remainder(np.ones(10), 300)
    noisy = (
        geometric_histogram(counts, epsilon=1.0, sensitivity=2.0, rng=np.random.default_rng(5), size=4000)
        / 300
    )
    draws = total_variation(noisy, counts / 300)
    expected = geometric_expected_error(k=10, n_users=300, alpha=math.exp(-0.5)).l1_half
    assert abs(draws.mean() - expected) < 4 * draws.std(ddof=1) / math.sqrt(draws.size)


@pytest.fixture(scope="module")
def small():
    return compare(n_users=300, k=15, epsilon=1.0, delta=1e-4, data="zipf:1", draws=300, seed=4)


def test_every_mechanism_and_method(small):
    names = {(row["mechanism"], row["calibration"]) for row in small.rows}
    assert {row["mechanism"] for row in small.rows} == set(MECHANISMS)
    assert {("shuffle+inv", c) for c in CALIBRATIONS} <= names and {("shuffle+inv+proj", "lower")} <= names
    for row in small.rows:
        assert row["method"] == (
            "exact"
            if row["mechanism"] in {"shuffle+inv", "gaussian", "geometric", "local-krr+inv"}
            else "monte-carlo"
        )
        assert (row["l1_half_se"] == 0) == (row["method"] == "exact")
    final = small.to_json()[-1]
    assert set(final["shuffle_vs_gaussian"]) >= {"winner", "ratio", "certain"}


def test_epsilon_local_is_calibrate_epsilon_local(small):
    """The same accountants and the default tolerance as calibrate_epsilon_local: equal to the last bit."""
    for calibration, accountant in CALIBRATIONS.items():
        expected = calibrate_epsilon_local(accountant, n_users=300, k=15, epsilon=1.0, delta=1e-4)
        used = {row["epsilon_local"] for row in small.rows if row["calibration"] == calibration}
        assert used == {expected}


def test_local_krr_row_is_the_exact_law_at_epsilon(small):
    counts = dataset_counts("zipf:1", n_users=300, k=15)
    local = next(row for row in small.rows if row["mechanism"] == "local-krr+inv")
    assert (
        local["epsilon_local"] == 1.0
        and local["l1_half"] == krr_inv_expected_error(counts, epsilon_local=1.0).l1_half
    )


def test_seeded_rows_repeat():
    one = compare(
        n_users=200,
        k=4,
        epsilon=2.0,
        delta=1e-3,
        draws=20,
        seed=9,
        epsilon_local={"upper": 3.0, "lower": 3.1},
    )
    two = compare(
        n_users=200,
        k=4,
        epsilon=2.0,
        delta=1e-3,
        draws=20,
        seed=9,
        epsilon_local={"upper": 3.0, "lower": 3.1},
    )
    assert one.rows == two.rows


@pytest.mark.parametrize(
    "data, expected",
    [
        pytest.param("uniform", [34, 33, 33], id="uniform-remainder-to-first"),
        pytest.param("zipf:1", [55, 27, 18], id="zipf-1"),  # 100 * (1, 1/2, 1/3) / (11/6) = 54.5, 27.3, 18.2
        pytest.param("zipf:0", [34, 33, 33], id="zipf-0-is-uniform"),
    ],
)
def test_dataset_counts(data, expected):
    assert dataset_counts(data, n_users=100, k=3).tolist() == expected


def test_csv_counts_are_scaled_to_n(tmp_path):
    path = tmp_path / "counts.csv"
    path.write_text("cell,count\n0,1\n1,3\n")
    assert dataset_counts(str(path), n_users=8, k=2).tolist() == [2, 6]


def test_a_column_of_counts_without_header_keeps_its_first_count(tmp_path):
    """numpy.savetxt writes counts one per line with no header; the first count is a count, not a name."""
    path = tmp_path / "counts.csv"
    path.write_text("5\n3\n2\n")
    assert dataset_counts(str(path), n_users=10, k=3).tolist() == [5, 3, 2]


@pytest.mark.parametrize(
    "data, message",
    [
        ("zipf:-1", r"`--data` zipf exponent S must be a number in \[0, inf\); got 'zipf:-1'"),
        ("zipf:x", r"`--data` zipf exponent S must be a number in \[0, inf\); got 'zipf:x'"),
        (
            "nothing.csv",
            r"`--data` must be uniform, zipf:S \(S >= 0\) or the path of a CSV of counts; got 'nothing.csv'",
        ),
    ],
)
def test_bad_data_is_one_clear_message(data, message):
    with pytest.raises(ValueError, match=message):
        dataset_counts(data, n_users=10, k=3)


def _rows(shuffle_upper, shuffle_lower, gaussian, se=1e-3):
    def row(mechanism, calibration, tv):
        return {"mechanism": mechanism, "calibration": calibration, "l1_half": tv, "l1_half_se": se}

    return [
        row("shuffle+inv+proj", "upper", shuffle_upper),
        row("shuffle+inv+proj", "lower", shuffle_lower),
        row("gaussian+proj", "none", gaussian),
    ]


@pytest.mark.parametrize(
    "upper, lower, gaussian, winner, certain",
    [
        pytest.param(0.10, 0.09, 0.20, "shuffle+inv+proj", True, id="shuffle-clear"),
        pytest.param(0.30, 0.29, 0.20, "gaussian+proj", True, id="gaussian-clear"),
        pytest.param(0.21, 0.19, 0.20, "gaussian+proj", False, id="winner-depends-on-eps0"),
        pytest.param(
            0.203, 0.203, 0.20, "gaussian+proj", False, id="within-3-SE"
        ),  # 3e-3 / (sqrt 2 1e-3) = 2.1 SE
    ],
)
def test_verdict_certainty(upper, lower, gaussian, winner, certain):
    result = verdict(_rows(upper, lower, gaussian))["shuffle_vs_gaussian"]
    assert result["winner"] == winner and result["certain"] is certain
    assert result["ratio"] == pytest.approx(upper / gaussian)


def test_overall_winner_ignores_lower_bound_rows():
    rows = _rows(0.3, 0.01, 0.2)  # the lower-bound eps0 is not certified: its row cannot win
    assert verdict(rows)["winner"] == "gaussian+proj"
