"""shuffledp.accounting.composition.privacy_loss_distribution: one shuffled k-RR round as a dp_accounting PLD.

Checks: one round read from the PLD brackets our accountant within the discretisation bound (the
direction stated in the docstring); composed with dp_accounting's Gaussian, it matches a PLD that
dp_accounting builds itself from the exact brute-force pmfs of the view (no code of this package);
after composition the upper bound stays above the lower bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute_force import strong_adversary_view_distributions, weak_adversary_view_distributions
from dp_accounting import NeighboringRelation
from dp_accounting.pld import privacy_loss_distribution as dpl

from shuffledp.accounting import get_accountant
from shuffledp.accounting.composition import optimistic_privacy_loss_distribution, privacy_loss_distribution

INTERVAL = 1e-4
EPS = np.array([0.0, 0.05, 0.2, 0.5, 1.0])


def _deltas(pld, epsilons) -> np.ndarray:
    """delta(eps) of a dp_accounting PLD at each eps, by its scalar ``get_delta_for_epsilon``: the same
    hockey-stick sum as its array form (a dot product over the losses above eps, instead of a Python loop
    over every loss of the PMF, about 1.5 million numpy scalar calls per composed PLD here)."""
    return np.array([pld.get_delta_for_epsilon(float(epsilon)) for epsilon in epsilons])


def _gaussian(pessimistic: bool = True):
    return dpl.from_gaussian_mechanism(
        1.5,
        sensitivity=math.sqrt(2.0),
        value_discretization_interval=INTERVAL,
        pessimistic_estimate=pessimistic,
        neighboring_relation=NeighboringRelation.REPLACE_ONE,
    )


@pytest.mark.parametrize("name", ["weak-adversary", "strong-adversary", "feldman-numerical", "clones-krr"])
def test_one_round_is_the_accountant_within_one_interval_and_above_it(name):
    e0, n, k = 1.5, 200, 4
    pld = privacy_loss_distribution(name, e0, n, k)
    ours = np.array(pld.get_delta_for_epsilon(EPS))
    accountant = get_accountant(name, epsilon_local=e0, n_users=n, k=k)
    exact = accountant.delta_for_epsilon(EPS)
    shifted = accountant.delta_for_epsilon(EPS[1:] - INTERVAL)
    assert np.all(ours >= exact * (1 - 1e-9) - 1e-15)  # pessimistic: never below
    assert np.all(ours[1:] <= shifted * (1 + 1e-9) + 1e-13)  # losses rounded up by less than one interval


def test_lower_bound_pld_is_below_the_accountant():
    e0, n, k = 1.5, 200, 4
    pld = optimistic_privacy_loss_distribution("worst-case-lower", e0, n, k)
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon(EPS)
    assert np.all(np.array(pld.get_delta_for_epsilon(EPS)) <= lower * (1 + 1e-9) + 1e-15)
    assert pld.get_delta_for_epsilon(0.2) > 0.5 * lower[2]  # the strongest dataset, not an empty bound


@pytest.mark.parametrize(
    "name, laws",
    [
        ("weak-adversary", weak_adversary_view_distributions),
        ("strong-adversary", strong_adversary_view_distributions),
    ],
)
def test_composed_with_a_gaussian_matches_dp_accounting_on_the_exact_view(name, laws):
    e0, n, k = 1.0, 6, 3
    p_law, q_law = laws(n, k, epsilon_local=e0, dps=30)
    log_p = {o: math.log(float(v)) for o, v in p_law.items() if float(v) > 0}
    log_q = {o: math.log(float(v)) for o, v in q_law.items() if float(v) > 0}
    # dp_accounting's (lower, upper) arguments: the PLD of upper vs lower; symmetric=False adds the other direction
    independent = dpl.from_two_probability_mass_functions(
        log_q, log_p, value_discretization_interval=INTERVAL, symmetric=False
    )
    gaussian = _gaussian()
    ours = privacy_loss_distribution(name, e0, n, k).compose(gaussian).self_compose(3)
    theirs = independent.compose(gaussian).self_compose(3)
    for delta in (1e-2, 1e-4, 1e-6):
        assert ours.get_epsilon_for_delta(delta) == pytest.approx(
            theirs.get_epsilon_for_delta(delta), abs=4 * 4 * INTERVAL
        )
    np.testing.assert_allclose(_deltas(ours, EPS), _deltas(theirs, EPS), rtol=0.02, atol=1e-12)


def test_upper_stays_above_lower_after_composition():
    e0, n, k = 2.0, 300, 4
    sgd_upper = dpl.from_gaussian_mechanism(
        3.0,
        sensitivity=2.0,
        value_discretization_interval=INTERVAL,
        sampling_prob=0.05,
        neighboring_relation=NeighboringRelation.REPLACE_ONE,
    )
    sgd_lower = dpl.from_gaussian_mechanism(
        3.0,
        sensitivity=2.0,
        value_discretization_interval=INTERVAL,
        sampling_prob=0.05,
        pessimistic_estimate=False,
        neighboring_relation=NeighboringRelation.REPLACE_ONE,
    )
    upper = (
        privacy_loss_distribution("weak-adversary", e0, n, k)
        .compose(_gaussian())
        .compose(sgd_upper.self_compose(20))
    )
    lower = (
        optimistic_privacy_loss_distribution("worst-case-lower", e0, n, k)
        .compose(_gaussian(pessimistic=False))
        .compose(sgd_lower.self_compose(20))
    )
    eps = np.linspace(0.0, 3.0, 13)
    assert np.all(_deltas(upper, eps) >= _deltas(lower, eps))
    for delta in (1e-3, 1e-6, 1e-9):
        assert upper.get_epsilon_for_delta(delta) >= lower.get_epsilon_for_delta(delta)


def test_subsampled_round_and_bad_input():
    sampled = privacy_loss_distribution("clones-krr", 2.0, 10000, 2, subsample=0.01)
    full = privacy_loss_distribution("clones-krr", 2.0, 100, 2)  # the same 100 users per round, unsampled
    assert sampled.get_epsilon_for_delta(1e-6) < full.get_epsilon_for_delta(1e-6)
    with pytest.raises(ValueError, match=r"`name` must be one of .*; got 'biswas-exact'"):
        privacy_loss_distribution("biswas-exact", 1.0, 10, 3)
    with pytest.raises(ValueError, match=r"`subsample` x `n_users` must be a whole number"):
        privacy_loss_distribution("clones-krr", 2.0, 150, 2, subsample=0.01)


def test_the_guide_example_runs_and_its_numbers_are_what_it_prints():
    """The dp_accounting example of docs/guide/compositions.md (it moved there from the README)."""
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "compositions.md").read_text()
    section = guide.split("## Composing with the rest of a privacy budget (dp_accounting)", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    namespace: dict = {}
    exec(code, namespace)
    stated = re.search(
        r"# (\d\.\d+) \(alone: shuffled (\d\.\d+), Gaussian (\d\.\d+), 100 DP-SGD steps (\d\.\d+)\)", code
    ).groups()
    values = [namespace["total"], namespace["shuffled"], namespace["gaussian"], namespace["dp_sgd"]]
    for text, pld in zip(stated, values):
        assert pld.get_epsilon_for_delta(1e-6) == pytest.approx(float(text), abs=1.5e-3)


def test_exports_are_guarantees_or_refused_with_one_line():
    """A lower bound and clones-krr-2023 at k >= 3 are not exported as guarantees (one line says
    why); clones-krr-2023 at k = 2 (a dominating pair there) is exported pessimistic, hence above its exact
    delta; the optimistic export says so in its name and lies below the pessimistic one."""
    with pytest.raises(
        ValueError, match=r"lower bound, not a guarantee: use optimistic_privacy_loss_distribution"
    ):
        privacy_loss_distribution("worst-case-lower", 1.5, 200, 4)
    with pytest.raises(
        ValueError, match=r"k = 3 >= 3 is not a guarantee: .*Lemma 3.5 fails when p < 1/\(e\^eps0 \+ 1\)"
    ):
        privacy_loss_distribution("clones-krr-2023", 1.5, 200, 3)
    pessimistic = privacy_loss_distribution("clones-krr-2023", 1.5, 200, 2)
    exact = get_accountant("clones-krr-2023", epsilon_local=1.5, n_users=200, k=2).delta_for_epsilon(EPS)
    assert np.all(np.array(pessimistic.get_delta_for_epsilon(EPS)) >= exact * (1 - 1e-9) - 1e-15)
    optimistic = optimistic_privacy_loss_distribution("clones-krr-2023", 1.5, 200, 3)
    assert optimistic.get_epsilon_for_delta(1e-6) <= privacy_loss_distribution(
        "clones-krr", 1.5, 200, 3
    ).get_epsilon_for_delta(1e-6)
