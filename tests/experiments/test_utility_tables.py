"""Tests for shuffledp.experiments.utility_tables: Monte-Carlo interval verdicts, their strength, Tables V/VI rows."""

import math

import numpy as np
import pandas as pd
import pytest

from shuffledp._random import job_rng
from shuffledp.accounting import list_accountants
from shuffledp.experiments import utility as E
from shuffledp.experiments import utility_tables as T


def test_mc_interval_verdict():
    draws = np.arange(1, 1001) / 1000.0
    inside, note = T.mc_interval_verdict(0.5, draws)
    assert inside and "inside" in note
    outside, note = T.mc_interval_verdict(0.9999, draws)
    assert not outside and "outside" in note


def test_interval_strength_matches_the_uniform_closed_form():
    # Draws U(0, 1) on a fine grid; interval [0.025, 0.975]. A value 3x a draw passes when
    # U in [0.025/3, 0.975/3]: probability 0.95/3; a value 3x smaller when U in [0.075, 1): 0.925.
    draws = (np.arange(100_000) + 0.5) / 100_000
    strength = T.interval_strength(draws, 0.025, 0.975)
    assert strength["p_pass_3x_larger"] == pytest.approx(0.95 / 3, abs=1e-4)
    assert strength["p_pass_3x_smaller"] == pytest.approx(0.925, abs=1e-4)
    assert strength["interval_ratio"] == pytest.approx(39.0) and strength[
        "interval_decades"
    ] == pytest.approx(math.log10(39))
    assert T.interval_strength(draws, 0.0, 0.5)["interval_ratio"] == math.inf


def test_mc_interval_verdict_note_states_width_and_pass_probability():
    draws = np.random.default_rng(3).exponential(size=4000)
    inside, note = T.mc_interval_verdict(1.0, draws)
    low, high = np.quantile(draws, [0.025, 0.975])
    strength = T.interval_strength(draws, low, high)
    assert inside
    assert f"the interval spans ×{high / low:.3g} ({math.log10(high / low):.1f} decades)" in note
    assert f"a value 3× ours would still pass with probability {strength['p_pass_3x_larger']:.2f}" in note


@pytest.fixture(scope="module")
def utility_config():
    from pathlib import Path

    import yaml

    with open(Path(__file__).resolve().parents[2] / "config" / "config.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)["utility"]


@pytest.mark.skipif(
    "strong-adversary" not in list_accountants(), reason="strong-adversary accountant not registered yet"
)
def test_individual_tables_flag_each_calibration_and_empty_cells(utility_config):
    counts = np.array([0, 40, 3, 0, 90, 17, 50])  # cells 0 and 3 hold nobody
    setting = {**utility_config["gowalla"]["table6"], "replicates": 400}
    x0s = [0, 1, 3, 4]
    # strong-adversary (valid but loose) is positive at eps = eps0, unlike eq. (6) and the tight bounds
    utility = {**utility_config, "accountant": "strong-adversary"}
    rows = E.individual_job(counts, x0s, x0s, utility=utility, setting=setting, seed=5, identity=("t",))
    reference = pd.DataFrame(
        [
            {"block": "R", "row": f"x0={x}", "column": c, "value": "1E-3"}
            for x in x0s
            for c in ("Gaussian", "shuffle+INV")
        ]
    )
    wide, comparison = T.individual_tables(
        rows.assign(label="R"), reference, table="VI", block_of=lambda r: r["label"]
    )
    gaussian = rows[rows["mechanism"] == "gaussian"]
    assert set(gaussian["calibration"]) == {"as_printed", "configured", "lower"}
    for calibration, column in (
        ("as_printed", "delta floored (printed)"),
        ("configured", "delta floored (configured)"),
        ("lower", "delta floored (lower)"),
    ):
        flags = gaussian[gaussian["calibration"] == calibration].set_index("x0")["delta_floored"].astype(bool)
        assert wide.set_index("x0")[column].to_dict() == flags.to_dict()
    # eq. (6) at eps = eps0 is 0 (floored) while the configured bound is positive: the flags must differ.
    # The lower bound is 0 too: shuffled k-RR is (eps0, 0)-DP, so every dataset's delta(eps0) is 0.
    assert wide["delta floored (printed)"].all() and not wide["delta floored (configured)"].any()
    assert wide["delta floored (lower)"].all()
    lower = gaussian[gaussian["calibration"] == "lower"].set_index("x0")["mean"]
    assert wide.set_index("x0")["Gaussian ours (lower delta)"].to_dict() == lower.to_dict()
    assert wide.set_index("x0")["x0 note"].astype(bool).to_dict() == {x: counts[x] == 0 for x in x0s}
    assert list(comparison.columns[-len(T.STRENGTH_COLUMNS) :]) == T.STRENGTH_COLUMNS
    tests = comparison[comparison["verdict"].isin(["reproduced", "not reproduced"])]
    assert len(tests) and tests["interval_high"].notna().all()
    assert tests["p_pass_3x_larger"].between(0, 1).all() and tests["p_pass_3x_smaller"].between(0, 1).all()
    assert tests["note"].str.contains("a value 3× ours would still pass with probability").all()
    empty = comparison[comparison["x0_count"] == 0]
    assert len(empty) and empty["note"].str.contains("x0 holds no check-in").all()
    assert not comparison[comparison["x0_count"] > 0]["note"].str.contains("no check-in").any()
    shuffle = rows[(rows["mechanism"] == "shuffle+INV") & (rows["x0"] == 1)].iloc[0]
    row = comparison[(comparison["row"] == "x0=1") & (comparison["column"] == "shuffle+INV")].iloc[0]
    assert (row["interval_low"], row["interval_high"]) == (shuffle["q025"], shuffle["q975"])
    assert row["p_pass_3x_larger"] == shuffle["p_pass_3x_larger"]


# --- how much the delta floor decides ------------------------------------------------


def _community_rows(sigma, shuffle_tv, *, n_users=500, k=6, draws=4000, seed=3):
    """Rows like synthetic_community_job's: Gaussian TVs simulated at sigma, shuffle+INV TVs given."""
    rng = np.random.default_rng(seed)
    gaussian_tv = 0.5 * np.abs(rng.normal(0.0, sigma, size=(draws, k))).sum(axis=1) / n_users
    common = {
        "n_users": n_users,
        "epsilon": 1.0,
        "epsilon_local": 1.0,
        "calibration": "configured",
        "accountant": "weak-adversary",
        "delta": 0.0,
        "delta_used": 1e-300,
        "delta_floored": True,
        "sigma": sigma,
        "sigma_diffprivlib": sigma,
        "diffprivlib_differs": False,
    }
    return pd.DataFrame(
        [{**common, "mechanism": "gaussian", "l1_half": t} for t in gaussian_tv]
        + [{**common, "mechanism": "shuffle+INV", "l1_half": t} for t in shuffle_tv]
    )


def test_floor_break_even_matches_closed_forms_and_simulation():
    from scipy.stats import norm

    k, n_users, sensitivity = 6, 500, math.sqrt(2.0)
    shuffle_tv = np.array([0.010, 0.012, 0.011, 0.013])
    floor = T.floor_break_even(_community_rows(3.0, shuffle_tv), k=k, sensitivity=sensitivity).iloc[0]
    # expected TV of the unprojected Gaussian: k sigma sqrt(2/pi) / (2n), checked against 4,000 simulated draws
    assert floor["l1_half_gaussian_expected"] == pytest.approx(
        k * 3.0 * math.sqrt(2 / math.pi) / (2 * n_users)
    )
    assert floor["l1_half_gaussian_mean"] == pytest.approx(floor["l1_half_gaussian_expected"], rel=0.02)
    # sigma* makes that expectation equal shuffle+INV's mean TV
    assert k * floor["sigma_break_even"] * math.sqrt(2 / math.pi) / (2 * n_users) == pytest.approx(
        shuffle_tv.mean()
    )
    # delta* is Balle & Wang's tight delta at sigma*, here in linear space with scipy (independent of log_ndtr)
    s, eps = floor["sigma_break_even"], 1.0
    linear = norm.cdf(sensitivity / (2 * s) - eps * s / sensitivity) - math.exp(eps) * norm.cdf(
        -sensitivity / (2 * s) - eps * s / sensitivity
    )
    assert 10 ** floor["log10_delta_break_even"] == pytest.approx(linear, rel=1e-9)
    assert floor["winner_at_delta_used"] == (
        "gaussian" if floor["l1_half_gaussian_expected"] < shuffle_tv.mean() else "shuffle+INV"
    )


def test_floor_break_even_winner_flips_at_delta_star():
    from shuffledp.mechanisms import analytic_gaussian_sigma

    k, sensitivity = 6, math.sqrt(2.0)
    shuffle_tv = np.array([0.010, 0.012])
    star = T.floor_break_even(_community_rows(3.0, shuffle_tv, draws=2), k=k, sensitivity=sensitivity).iloc[0]
    delta_star = 10 ** star["log10_delta_break_even"]
    for factor, winner in (
        (1.5, "gaussian"),
        (1 / 1.5, "shuffle+INV"),
    ):  # more delta, less noise: the Gaussian wins
        sigma = analytic_gaussian_sigma(epsilon=1.0, delta=delta_star * factor, sensitivity=sensitivity)
        row = T.floor_break_even(
            _community_rows(sigma, shuffle_tv, draws=2), k=k, sensitivity=sensitivity
        ).iloc[0]
        assert row["winner_at_delta_used"] == winner


@pytest.mark.skipif(
    "strong-adversary" not in list_accountants(), reason="strong-adversary accountant not registered yet"
)
def test_individual_job_draws_the_shuffle_once_and_each_kinds_noise_from_its_own_stream(utility_config):
    # The first kind's stream gives the shuffle then its noise (the rows of the scheme that drew the shuffle
    # for every kind, unchanged); every other kind's stream gives only its noise.
    counts = np.array([0, 40, 3, 0, 90, 17, 50])
    setting = {**utility_config["gowalla"]["table6"], "replicates": 50}
    x0s = [1, 4, 6]
    utility = {**utility_config, "accountant": "strong-adversary"}
    rows = E.individual_job(counts, x0s, x0s, utility=utility, setting=setting, seed=5, identity=("t",))
    first = True
    for kind, _ in E.calibration_accountants(utility):
        gaussian = rows[(rows["mechanism"] == "gaussian") & (rows["calibration"] == kind)]
        sigmas = gaussian["sigma"].to_numpy()
        rng = job_rng(5, "t", "individual", kind)
        if first:
            errors = E.individual_utility(
                counts,
                x0s,
                epsilon_local=setting["epsilon_local"],
                sigmas=sigmas,
                estimator=utility["estimator"],
                rng=rng,
                replicates=50,
            )
            shuffle = rows[rows["mechanism"] == "shuffle+INV"]
            assert shuffle["mean"].tolist() == [
                E._summary(errors["shuffle+INV"][:, i])["mean"] for i in range(3)
            ]
        else:
            errors = {"gaussian": E.individual_gaussian_errors(counts.sum(), sigmas, rng=rng, replicates=50)}
        assert gaussian["mean"].tolist() == [
            E._summary(errors["gaussian"][:, i])["mean"] for i in range(3)
        ], kind
        first = False
    again = E.individual_job(counts, x0s, x0s, utility=utility, setting=setting, seed=5, identity=("t",))
    pd.testing.assert_frame_equal(rows, again)
    # probe: the scheme that drew the shuffle from every kind's stream gives the second kind other noise,
    # so the comparison above tells the two schemes apart
    kind = list(E.calibration_accountants(utility))[1][0]
    gaussian = rows[(rows["mechanism"] == "gaussian") & (rows["calibration"] == kind)]
    redrawn = E.individual_utility(
        counts,
        x0s,
        epsilon_local=setting["epsilon_local"],
        sigmas=gaussian["sigma"].to_numpy(),
        estimator=utility["estimator"],
        rng=job_rng(5, "t", "individual", kind),
        replicates=50,
    )
    assert gaussian["mean"].tolist() != [E._summary(redrawn["gaussian"][:, i])["mean"] for i in range(3)]
