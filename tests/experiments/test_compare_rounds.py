"""`compare` over T rounds: shuffledp.experiments.compare_rounds and `shuffle-dp compare --compositions`.

Known values come from independent code: the one-round `compare`, the composed accountant of the `epsilon`
command searched here by plain bisection, dp_accounting's own PLD accountant (Gaussian events), its discrete
Laplace PLD, and a Monte Carlo of the whole T-round protocol that draws every round on its own.
"""

from __future__ import annotations

import functools
import json
import math

import pytest
from calibration_memo import calibrations_once, memoized
from dp_accounting import NeighboringRelation, dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.pld import privacy_loss_distribution as dp_pld

import shuffledp.experiments.compare_rounds as rounds_module
from shuffledp._random import job_rng
from shuffledp.accounting.composition import DEFAULT_INTERVAL, compose
from shuffledp.cli import main
from shuffledp.experiments.compare import compare, dataset_counts
from shuffledp.experiments.compare_rounds import (
    RoundsSetting,
    compare_rounds,
    gaussian_sigma,
    geometric_epsilon,
    local_krr_epsilon,
    loss_grid,
    protocol_monte_carlo,
    pure_floor,
    rounds_baselines,
    rounds_grid_job,
    shuffle_epsilon_local,
)


def _cli(capsys, *arguments) -> str:
    assert main(["compare", *arguments]) == 0
    return capsys.readouterr().out


def test_one_round_is_compare_itself(capsys):
    """The six renderings of one setting calibrate it once (tests/calibration_memo.py): what is checked is that
    T = 1 is dispatched to ``compare`` and rendered as it, not the calibration (tested against its references
    elsewhere)."""
    base = ["--n", "2000", "--k", "15", "--eps", "1", "--delta", "1e-6", "--draws", "20"]
    with calibrations_once():
        assert _cli(capsys, *base) == _cli(capsys, *base, "--compositions", "1")
        assert _cli(capsys, *base, "--json") == _cli(capsys, *base, "--compositions", "1", "--json")
        ours = compare_rounds(n_users=2000, k=15, epsilon=1.0, delta=1e-6, compositions=1, draws=20)
        theirs = compare(n_users=2000, k=15, epsilon=1.0, delta=1e-6, draws=20)
    assert ours.to_json() == theirs.to_json()


def _bisect_composed_eps0(n_users, k, epsilon, delta, compositions) -> float:
    """Largest eps0 whose composed weak-adversary epsilon (the `epsilon --compositions` accountant, default
    grid 1e-4 = loss_grid(2)) meets the target, by plain bisection (independent of compare_rounds' search)."""

    def meets(eps0):
        return (
            compose(
                "weak-adversary",
                epsilon_local=eps0,
                n_users=n_users,
                k=k,
                compositions=compositions,
                value_discretization_interval=1e-4,
            ).epsilon_for_delta(delta)
            <= epsilon
        )

    low, high = epsilon, 2.0 * epsilon
    while meets(high):
        low, high = high, 2.0 * high
    while high - low > 1e-4 * high:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if meets(middle) else (low, middle)
    return low


def test_two_rounds_shuffle_matches_calibrating_the_composed_accountant():
    setting = RoundsSetting(200, 15, 1.0, 1e-6, 2, 1.0)
    ours = shuffle_epsilon_local(setting)
    theirs = _bisect_composed_eps0(200, 15, 1.0, 1e-6, 2)
    assert ours == pytest.approx(theirs, rel=2e-4)
    assert (
        compose(
            "weak-adversary",
            epsilon_local=ours,
            n_users=200,
            k=15,
            compositions=2,
            value_discretization_interval=DEFAULT_INTERVAL,
        ).epsilon_for_delta(1e-6)
        <= 1.0
    )


@pytest.mark.parametrize("compositions, subsample", [(10, 1.0), (50, 0.1)])
def test_gaussian_matches_dp_accountings_own_accountant(compositions, subsample):
    setting = RoundsSetting(1000, 15, 1.0, 1e-5, compositions, subsample)
    sigma = gaussian_sigma(setting)
    sensitivity = math.sqrt(
        2.0
    )  # replace-one histogram: the sampled pair is dp_accounting's add/remove mixture

    def accountant_epsilon(value):
        accountant = pld_privacy_accountant.PLDAccountant(
            NeighboringRelation.ADD_OR_REMOVE_ONE, value_discretization_interval=1e-4
        )
        event = dp_event.GaussianDpEvent(value / sensitivity)
        if subsample < 1.0:
            event = dp_event.PoissonSampledDpEvent(subsample, event)
        accountant.compose(dp_event.SelfComposedDpEvent(event, compositions))
        return accountant.get_epsilon(1e-5)

    assert accountant_epsilon(sigma) == pytest.approx(1.0, abs=2e-3)
    assert accountant_epsilon(sigma * 0.99) > 1.0


def test_geometric_matches_dp_accountings_discrete_laplace():
    setting = RoundsSetting(1000, 15, 1.0, 1e-6, 20, 1.0)
    value = geometric_epsilon(setting)
    cell = dp_pld.from_discrete_laplace_mechanism(
        value / 2.0, sensitivity=1, value_discretization_interval=1e-4
    )
    composed = cell.self_compose(2 * 20)  # replace-one: two cells change per round
    assert composed.get_epsilon_for_delta(1e-6) == pytest.approx(1.0, abs=3e-3)
    assert value > pure_floor(1.0, 20, 1.0)  # delta buys more than basic composition


def test_local_krr_matches_dp_accountings_randomized_response():
    setting = RoundsSetting(1000, 15, 1.0, 1e-6, 20, 0.5)
    value = local_krr_epsilon(setting)  # no amplification by sampling for local reports
    noise = 15 / (math.exp(value) + 14)  # k-RR as dp_accounting's randomized response: keep w.p. 1 - noise
    # the PLD itself, self-composed: dp_accounting 0.6.0's PLDAccountant drops the count of a
    # SelfComposedDpEvent of RandomizedResponseDpEvent (it composes one round; checked below)
    single = dp_pld.from_randomized_response(
        noise, 15, value_discretization_interval=1e-4, neighboring_relation=NeighboringRelation.REPLACE_ONE
    )
    assert single.self_compose(20).get_epsilon_for_delta(1e-6) == pytest.approx(1.0, abs=3e-3)
    accountant = pld_privacy_accountant.PLDAccountant(
        NeighboringRelation.REPLACE_ONE, value_discretization_interval=1e-4
    )
    accountant.compose(dp_event.SelfComposedDpEvent(dp_event.RandomizedResponseDpEvent(noise, 15), 20))
    assert accountant.get_epsilon(1e-6) == pytest.approx(single.get_epsilon_for_delta(1e-6))


def test_calibrations_never_go_below_the_pure_floor_and_are_monotone():
    floors = []
    for epsilon in (0.2, 0.5, 1.0):
        setting = RoundsSetting(100, 4, epsilon, 1e-8, 10, 0.1)  # 10 users per round: little amplification
        floor = pure_floor(epsilon, 10, 0.1)
        value = shuffle_epsilon_local(setting)
        assert value >= floor
        floors.append(value)
    assert floors == sorted(floors)


def test_loss_grid():
    assert (
        loss_grid(1) == 1e-4 and loss_grid(100) == pytest.approx(1e-5) and loss_grid(1000) == DEFAULT_INTERVAL
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--compositions", "0"], "`compositions` must be an integer in [1, 1000000]; got 0."),
        (["--subsample", "0"], "`subsample` must be in (0, 1]; got 0.0."),
        (["--subsample", "1.5"], "`subsample` must be in (0, 1]; got 1.5."),
        (["--compositions", "2", "--subsample", "0.001"], "a whole number >= 1 of users sampled per round"),
    ],
)
def test_bad_input_is_one_line(capsys, extra, message):
    code = main(["compare", "--n", "100", "--k", "4", "--eps", "1", "--delta", "1e-6", *extra])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1 and message in error


def test_rounds_output_has_the_parameters_and_the_averages(capsys):
    out = json.loads(
        _cli(
            capsys,
            "--n",
            "10000",
            "--k",
            "15",
            "--eps",
            "1",
            "--delta",
            "1e-6",
            "--draws",
            "20",
            "--compositions",
            "10",
            "--subsample",
            "0.1",
            "--json",
        )
    )
    rows, summary = out[:-1], out[-1]
    assert summary["rounds"]["per_round"] == 1000 and summary["rounds"]["compositions"] == 10
    exact = {row["mechanism"]: row for row in rows if row["average_method"] == "exact"}
    assert set(exact) == {"shuffle+inv", "gaussian", "local-krr+inv"}
    for row in exact.values():  # averaging T independent unbiased rounds divides the squared L2 by T
        assert row["average_squared_l2"] == pytest.approx(row["squared_l2"] / 10)
        assert row["average_l1_half"] < row["l1_half"]


def test_protocol_monte_carlo_agrees_with_the_exact_averages():
    setting = RoundsSetting(20000, 15, 1.0, 1e-6, 10, 0.05)
    result = compare_rounds(
        n_users=20000, k=15, epsilon=1.0, delta=1e-6, compositions=10, subsample=0.05, draws=20
    )
    parameters = {
        key: result.verdict["rounds"][key]
        for key in ("epsilon_local", "sigma", "geometric_epsilon", "local_epsilon")
    }
    counts = dataset_counts("uniform", n_users=setting.per_round, k=15)
    simulated = protocol_monte_carlo(
        counts, parameters, compositions=10, draws=400, rng=job_rng(0, "test-protocol-monte-carlo")
    )
    for row in result.rows:
        if row["average_l1_half"] is not None:
            mean, se = simulated[row["mechanism"]]
            spread = math.hypot(se, row["average_l1_half_se"])
            assert abs(mean - row["average_l1_half"]) < 4.0 * spread, row["mechanism"]
    exact_winner = min(
        ("shuffle+inv", "gaussian"),
        key=lambda name: next(row["average_l1_half"] for row in result.rows if row["mechanism"] == name),
    )
    assert exact_winner == min(("shuffle+inv", "gaussian"), key=lambda name: simulated[name][0])


# --- the composed phase diagram's grid jobs: shards per T and the shared n- and k-free calibrations -----

GRID = {
    "compositions": [1, 2],
    "subsample": [1.0, 0.1],
    "epsilon": [1.0],
    "delta": 1e-6,
    "max_per_round": 100,
    "draws": 20,
    "data": "uniform",
}
N_AXIS = [30, 200, 5000]  # q n = 3 at q = 0.1 and n = 30; 5000 > max_per_round at q = 1 (skipped)


@functools.cache
def _baselines_json() -> str:
    """``rounds_baselines`` of GRID at k = 3 and 4 as JSON, computed once for the module. Every test here runs
    its jobs at k = 3; the rows do not depend on k, and computed over two k they show that a job reads rows
    computed for several."""
    return json.dumps(rounds_baselines(GRID, N_AXIS, ks=[3, 4]))


def _baselines_through_json():
    """A fresh copy (a test may change it) of the baselines as the workflow passes them, through JSON."""
    return json.loads(_baselines_json())


def test_rounds_grid_job_by_T_with_shared_baselines_gives_the_same_rows_bit_for_bit(monkeypatch):
    """The Gaussian's calibration is memoized here (tests/calibration_memo.py): the sampled one (dp_accounting's
    PLD searched) was most of the test, and the whole job, the baselines and the check below ask for it at the
    same settings; a call with any other argument is calibrated afresh. The shards' eps0 are computed anew."""
    monkeypatch.setattr(rounds_module, "gaussian_sigma", memoized(gaussian_sigma))
    whole = rounds_grid_job(GRID, N_AXIS, k=3, seed=5)
    baselines = _baselines_through_json()
    assert len(baselines) == 4  # one per (T, q, epsilon)
    sharded = [
        row
        for T in reversed(GRID["compositions"])
        for row in rounds_grid_job(GRID, N_AXIS, k=3, seed=5, compositions=[T], baselines=baselines)
    ]
    key = lambda row: (row["compositions"], row["subsample"], row["n_users"])
    assert sorted(sharded, key=key) == sorted(whole, key=key)
    computed = [row for row in whole if row["skipped"] == ""]
    assert {row["subsample"] for row in computed} == {1.0, 0.1} and len(computed) < len(whole)
    assert all(
        row["sigma"]
        == rounds_module.gaussian_sigma(
            RoundsSetting(row["n_users"], 3, 1.0, 1e-6, row["compositions"], row["subsample"])
        )
        for row in computed
    )


def test_rounds_grid_job_reads_the_baselines_it_is_given():
    # probe: doctored baselines move the Gaussian's row, so the job uses them rather than its own
    baselines = _baselines_through_json()
    for row in baselines:
        row["sigma"] *= 2.0
    doctored = rounds_grid_job(GRID, N_AXIS[:1], k=3, seed=5, compositions=[1], baselines=baselines)
    plain = rounds_grid_job(GRID, N_AXIS[:1], k=3, seed=5, compositions=[1])
    doctored, plain = ([row for row in rows if row["skipped"] == ""] for rows in (doctored, plain))
    assert plain and [row["sigma"] for row in doctored] == [2.0 * row["sigma"] for row in plain]
    assert [row["epsilon_local"] for row in doctored] == [row["epsilon_local"] for row in plain]


def test_rounds_grid_job_refuses_baselines_of_another_delta():
    baselines = _baselines_through_json()
    baselines[0]["delta"] = 1e-5
    with pytest.raises(ValueError, match="`baselines` must be calibrated at the grid's delta"):
        rounds_grid_job(GRID, N_AXIS, k=3, seed=5, baselines=baselines)
