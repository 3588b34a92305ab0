"""The shuffle calibration's starting point (shuffledp.experiments.rounds_guess).

Known values: mu-GDP's delta(epsilon) from scipy's normal cdf (the closed form of Dong, Roth & Su 2022,
Cor. 2.13), a synthetic monotone function with a known crossing, and the search of compare_rounds without
the guess (the coarse-then-fine search from the pure-DP floor) on the same composed accountant.
"""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from shuffledp.experiments import compare_rounds as rounds
from shuffledp.experiments.rounds_guess import gaussian_epsilon, search_from_guess, shuffle_guess


@pytest.mark.parametrize("mu,delta", [(0.1, 1e-6), (0.5, 1e-6), (1.0, 1e-3), (3.0, 1e-10), (0.235, 1e-6)])
def test_gaussian_epsilon_solves_the_gdp_curve(mu, delta):
    eps = gaussian_epsilon(mu, delta)
    closed = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
    assert math.isclose(closed, delta, rel_tol=1e-6)


def _evaluator(root: float, calls: list):
    def evaluate(x):
        calls.append(x)
        value = 1.0 + 0.8 * (x - root) + 0.1 * (x - root) ** 3  # rises through 1 at ``root``
        return value > 1.0, value - 1.0, value

    return evaluate


@pytest.mark.parametrize(
    "guess,slope", [(1.7, 0.8), (1.0, 0.8), (4.0, 0.8), (1.75, 50.0), (1.75, 1e-3), (0.2, -1.0), (20.0, 0.8)]
)
def test_search_from_any_guess_returns_a_meeting_point_within_the_tolerance(guess, slope):
    calls = []
    found = search_from_guess(
        _evaluator(1.75, calls), guess, slope, floor=0.01, upper=50.0, tolerance=1e-4, name="x", epsilon=1.0
    )
    assert found <= 1.75 and 1.75 - found <= 1e-4 * found
    assert len(calls) <= 25


def test_search_from_a_guess_stops_at_the_floor_and_refuses_an_unbounded_target():
    calls = []
    assert (
        search_from_guess(
            _evaluator(0.005, calls), 1.0, 0.8, floor=0.01, upper=50.0, tolerance=1e-4, name="x", epsilon=1.0
        )
        == 0.01
    )
    assert 0.01 not in calls  # the floor meets without being evaluated
    with pytest.raises(ValueError, match="`x` must be bounded by the target"):
        search_from_guess(
            _evaluator(80.0, []), 1.0, 0.8, floor=0.01, upper=50.0, tolerance=1e-4, name="x", epsilon=1.0
        )


def test_the_guess_is_close_where_the_central_limit_holds():
    """n = 10^5 users, k = 2, T = 1000 rounds: the guess is within 2 % of the calibrated eps0."""
    setting = rounds.RoundsSetting(100_000, 2, 1.0, 1e-6, 1000, 1.0)
    guess, slope = shuffle_guess(
        epsilon=1.0,
        delta=1e-6,
        per_round=100_000,
        k=2,
        compositions=1000,
        subsample=1.0,
        low=rounds.pure_floor(1.0, 1000, 1.0),
        high=50.0,
    )
    assert slope > 0
    assert abs(guess / rounds.shuffle_epsilon_local(setting) - 1.0) < 0.02


@pytest.mark.parametrize("n,k,T,q", [(2000, 4, 10, 1.0), (20_000, 15, 100, 0.1), (5000, 2, 3, 0.2)])
def test_the_search_from_the_guess_agrees_with_the_search_from_the_floor(monkeypatch, n, k, T, q):
    """Both searches return an eps0 that meets the target on the same composed accountant, within the
    calibration's tolerance of each other (they straddle the same crossing)."""
    setting = rounds.RoundsSetting(n, k, 1.0, 1e-6, T, q)
    with_guess = rounds.shuffle_epsilon_local(setting)
    monkeypatch.setattr(rounds, "shuffle_guess", lambda **_: None)
    from_floor = rounds.shuffle_epsilon_local(setting)
    assert math.isclose(with_guess, from_floor, rel_tol=3e-4)
    composed = rounds.compose(
        rounds.SHUFFLE_ACCOUNTANT,
        epsilon_local=with_guess,
        n_users=n,
        k=k,
        compositions=T,
        subsample=q,
        value_discretization_interval=rounds.loss_grid(T),
    )
    assert composed.epsilon_for_delta(1e-6) <= 1.0
