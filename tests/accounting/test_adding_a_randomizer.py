"""docs/adding-an-accountant.md ("Adding a randomizer") stays true: a randomizer is one module.

Two toys, each defined in a temporary module (no file of the repository is edited; the count of files a
new randomizer needs is this module's one):

* ``ToySubsetRR``: the accounting side alone -- it goes into a setting, gets a delta from the accountants that
  accept every eps0-LDP randomizer, and is refused by one that accepts only k-RR. The accepting accountants'
  values are checked against an independent fact: the generic clones pair (feldman-numerical) and Balle et
  al.'s generic bounds depend only on (eps0, n), so the toy must get exactly the value they give k-RR.
* ``CyclicRR``, end to end: a 3-output randomizer over k = 3 values (report x + j mod 3 with probability
  proportional to e^eps0, e^(eps0 / 2), 1 for j = 0, 1, 2: eps0-LDP, every column's largest over smallest
  entry is e^eps0), registered under a key; it samples the shuffled counts, estimates the distribution
  (unbiased: checked by exact expectation and by Monte Carlo within 4 standard errors), gives the exact
  expected squared error (matched by Monte Carlo within 4 standard errors; no exact TV, so None), gets a
  valid generic bound (and a composition) while the k-RR-only accountants and their views refuse it in one
  line, and ``compare`` (the library function behind ``shuffle-dp compare``) runs with it, by class and by key.
"""

from __future__ import annotations

import importlib
import math
import sys
import textwrap

import numpy as np
import pytest

from shuffledp import accounting
from shuffledp.accounting import get_accountant
from shuffledp.accounting.composition import Round, compose
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.randomizers import (
    KRR,
    Randomizer,
    list_randomizers,
    randomizer_class,
    unregister_randomizer,
)
from shuffledp.estimators import invert, maximum_likelihood
from shuffledp.experiments.compare import GENERIC_UPPER, LOCAL_OTHER, compare
from shuffledp.mechanisms import sample_shuffled_counts

TOY = textwrap.dedent('''
    import math
    from dataclasses import dataclass
    from typing import ClassVar

    from shuffledp.accounting.randomizers import GenericBlanket, Randomizer


    @dataclass(frozen=True)
    class ToySubsetRR(Randomizer):
        """Toy: report the input bit with probability e^eps0 / (e^eps0 + 1), else its complement."""

        name: ClassVar[str] = "toy subset RR"
        epsilon_local: float

        @property
        def blanket(self):
            return GenericBlanket(self.epsilon_local)

        @property
        def probabilities(self):
            return 1.0 / (1.0 + math.exp(-self.epsilon_local)), 1.0 / (1.0 + math.exp(self.epsilon_local))
''')

EPSILONS = np.array([0.0, 0.1, 0.5, 0.9, 1.5])


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    (tmp_path / "toy_randomizer_module.py").write_text(TOY, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_randomizer_module")
    yield module.ToySubsetRR(epsilon_local=1.0)
    sys.modules.pop("toy_randomizer_module", None)


def test_a_toy_randomizer_is_a_setting(toy):
    setting = ShuffleSetting.of(toy, n_users=500, n_x0=3)
    assert (setting.epsilon_local, setting.k, setting.n_users, setting.n_x0) == (1.0, None, 500, 3)
    assert setting.randomizer is toy
    with pytest.raises(
        ValueError, match=r"^`randomizer` must be k-RR .*got ToySubsetRR\(epsilon_local=1.0\)\.$"
    ):
        _ = setting.krr


@pytest.mark.parametrize("name", ["feldman-numerical", "balle-hoeffding-generic", "balle-bennett-generic"])
def test_generic_accountants_give_the_toy_randomizer_its_delta(toy, name):
    got = get_accountant(name, randomizer=toy, n_users=500).log_delta_for_epsilon(EPSILONS)
    same_eps0 = get_accountant(name, epsilon_local=1.0, n_users=500, k=7).log_delta_for_epsilon(EPSILONS)
    np.testing.assert_array_equal(got, same_eps0)  # these bounds depend on (eps0, n) only
    assert np.all(got <= 0.0) and np.any((got < 0.0) & np.isfinite(got))  # a delta in (0, 1) somewhere


@pytest.mark.parametrize(
    "name,accepted",
    [
        ("clones-krr", "k-RR"),
        ("strong-adversary", "k-RR"),
        ("balle-hoeffding-laplace", "Laplace on \\[0, 1\\]"),
    ],
)
def test_accountants_that_do_not_accept_it_refuse_in_one_line(toy, name, accepted):
    with pytest.raises(ValueError) as caught:
        get_accountant(name, randomizer=toy, n_users=500)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(
        f"`randomizer` must be {accepted.replace(chr(92), '')} for accountant {name!r}; got "
    )
    assert message.endswith("ToySubsetRR(epsilon_local=1.0).")


# --- end to end: a randomizer with a channel ---------------------------------------------------------

CYCLIC = textwrap.dedent('''
    import math
    from dataclasses import dataclass, field
    from typing import ClassVar

    import numpy as np

    from shuffledp.accounting.randomizers import GenericBlanket, Randomizer, register_randomizer


    @register_randomizer
    @dataclass(frozen=True)
    class CyclicRR(Randomizer):
        """Report x + j mod 3 with probability proportional to e^eps0, e^(eps0 / 2), 1 (j = 0, 1, 2)."""

        name: ClassVar[str] = "toy cyclic RR"
        key: ClassVar[str] = "toy-cyclic"
        epsilon_local: float
        k: int = field(default=3, init=False)

        @property
        def blanket(self):
            return GenericBlanket(self.epsilon_local)

        @property
        def channel(self):
            weights = np.exp(self.epsilon_local * np.array([1.0, 0.5, 0.0]))
            row = weights / weights.sum()
            return np.array([np.roll(row, x) for x in range(3)])
''')

COUNTS = np.array([700, 200, 100])
DRAWS = 4000


@pytest.fixture()
def cyclic(tmp_path, monkeypatch):
    (tmp_path / "toy_cyclic_module.py").write_text(CYCLIC, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_cyclic_module")
    yield module.CyclicRR
    unregister_randomizer("toy-cyclic")
    sys.modules.pop("toy_cyclic_module", None)


def test_it_is_registered_and_eps0_ldp(cyclic):
    assert randomizer_class("toy-cyclic") is cyclic and "toy-cyclic" in list_randomizers()
    channel = cyclic(1.3).channel
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, rtol=1e-15)
    assert math.log(np.max(channel.max(axis=0) / channel.min(axis=0))) == pytest.approx(1.3, rel=1e-12)


def test_unregistered_after_the_fixture():
    assert "toy-cyclic" not in list_randomizers()
    with pytest.raises(
        ValueError,
        match=r"^`randomizer` must be one of binary-rr, hadamard, krr, laplace, olh, oue, subset, sue; got 'toy-cyclic'\.$",
    ):
        randomizer_class("toy-cyclic")


def test_it_samples_the_shuffled_counts(cyclic):
    toy = cyclic(1.0)
    draws = sample_shuffled_counts(COUNTS, randomizer=toy, rng=np.random.default_rng(3), size=DRAWS)
    again = sample_shuffled_counts(COUNTS, randomizer=toy, rng=np.random.default_rng(3), size=DRAWS)
    np.testing.assert_array_equal(draws, again)  # seeded by the Generator passed in
    assert draws.shape == (DRAWS, 3) and np.all(draws.sum(axis=1) == COUNTS.sum())
    channel = toy.channel
    mean, variance = COUNTS @ channel, COUNTS @ (channel * (1 - channel))  # independent users
    assert np.all(np.abs(draws.mean(axis=0) - mean) <= 4 * np.sqrt(variance / DRAWS))
    with pytest.raises(ValueError, match=r"^`counts` must hold k = 3 bin counts .*; got 4\.$"):
        sample_shuffled_counts([1, 2, 3, 4], randomizer=toy, rng=np.random.default_rng(0))


def test_its_estimate_is_unbiased(cyclic):
    toy = cyclic(1.0)
    truth = COUNTS / COUNTS.sum()
    np.testing.assert_allclose(toy.estimate(COUNTS @ toy.channel), truth, atol=1e-14)  # E[counts] exactly
    estimates = invert(
        sample_shuffled_counts(COUNTS, randomizer=toy, rng=np.random.default_rng(4), size=DRAWS),
        randomizer=toy,
    )
    np.testing.assert_allclose(estimates.sum(axis=1), 1.0, atol=1e-12)
    standard_error = estimates.std(axis=0, ddof=1) / math.sqrt(DRAWS)
    assert np.all(np.abs(estimates.mean(axis=0) - truth) <= 4 * standard_error)


def test_its_exact_error_matches_monte_carlo(cyclic):
    toy = cyclic(1.0)
    error = toy.expected_error(COUNTS)
    assert error.l1_half is None  # no exact formula: callers use Monte Carlo with its standard error
    estimates = toy.estimate(
        sample_shuffled_counts(COUNTS, randomizer=toy, rng=np.random.default_rng(5), size=DRAWS)
    )
    squared = np.sum((estimates - COUNTS / COUNTS.sum()) ** 2, axis=1)
    assert abs(squared.mean() - error.squared_l2) <= 4 * squared.std(ddof=1) / math.sqrt(DRAWS)
    # the same formula gives k-RR's closed form (sum of the cells' variances over (n (p - q))^2)
    krr = KRR(1.0, 3)
    assert Randomizer.expected_error(krr, COUNTS).squared_l2 == pytest.approx(
        krr.expected_error(COUNTS).squared_l2, rel=1e-12
    )


def test_maximum_likelihood_runs_on_its_channel(cyclic):
    toy = cyclic(2.0)
    reports = sample_shuffled_counts(COUNTS, randomizer=toy, rng=np.random.default_rng(6), size=5)
    estimate = maximum_likelihood(reports, randomizer=toy)
    assert np.all(estimate >= 0) and np.allclose(estimate.sum(axis=1), 1.0)


def test_a_generic_bound_accepts_it_and_a_krr_bound_refuses_it(cyclic):
    toy = cyclic(1.0)
    got = get_accountant("feldman-numerical", randomizer=toy, n_users=500).log_delta_for_epsilon(EPSILONS)
    same = get_accountant("feldman-numerical", epsilon_local=1.0, n_users=500, k=3).log_delta_for_epsilon(
        EPSILONS
    )
    np.testing.assert_array_equal(got, same)
    for name in (
        "girgis-rdp",
        "erlingsson-rdp",
    ):  # Girgis et al.'s RDP bounds hold for any eps0-LDP randomizer
        got = get_accountant(name, randomizer=toy, n_users=5000).log_delta_for_epsilon(EPSILONS)
        same = get_accountant(name, epsilon_local=1.0, n_users=5000, k=3).log_delta_for_epsilon(EPSILONS)
        np.testing.assert_array_equal(got, same)
    for name in ("clones-krr", "worst-case-upper"):
        with pytest.raises(ValueError) as caught:
            get_accountant(name, randomizer=toy, n_users=500)
        assert str(caught.value) == (
            f"`randomizer` must be k-RR for accountant {name!r}; got CyclicRR(epsilon_local=1.0, k=3)."
        )
    # the weak adversary takes every randomizer with output types; the toy names none (a channel alone is not
    # its types), so it is refused in one line
    with pytest.raises(ValueError) as caught:
        get_accountant("weak-adversary", randomizer=toy, n_users=500)
    assert str(caught.value) == (
        "`randomizer` must have finitely many outputs (output types) for accountant 'weak-adversary'; got "
        "CyclicRR(epsilon_local=1.0, k=3)."
    )


def test_composition_takes_its_setting(cyclic):
    setting = ShuffleSetting.of(cyclic(1.0), n_users=500)
    ours = compose("feldman-numerical", setting, compositions=3).epsilon_for_delta(1e-6)
    krr = compose("feldman-numerical", epsilon_local=1.0, n_users=500, k=3, compositions=3).epsilon_for_delta(
        1e-6
    )
    assert ours == krr  # the generic pair reads (eps0, n) only
    rounds = [Round.of(cyclic(1.0), n_users=500), Round.of(KRR(1.0, 3), n_users=500)]
    mixed = compose("feldman-numerical", rounds=rounds + [rounds[0]]).epsilon_for_delta(1e-6)
    assert mixed == pytest.approx(ours, rel=1e-9)  # grouped as 2 + 1 rounds: another FFT, the same value
    with pytest.raises(
        ValueError,
        match=r"^`randomizer` must have finitely many outputs \(output types\) for accountant 'weak-adversary'; "
        r"got CyclicRR",
    ):
        compose("weak-adversary", setting, compositions=3)


def test_a_view_states_what_it_supports_and_the_registry_checks_it(cyclic):
    """Probe: an accountant that claims every randomizer on the k-RR-only strong view is refused by the registry
    (and, built by hand, refuses the toy through its view) in one line naming accountant, view and randomizers."""

    class Overclaiming(accounting.accountant_class("strong-adversary")):
        name = "toy-overclaiming"
        randomizers = (Randomizer,)

    line = (
        "`randomizers` of accountant 'toy-overclaiming' must be supported by its view 'strong' (k-RR); "
        "got any eps0-LDP randomizer."
    )
    with pytest.raises(ValueError) as caught:
        accounting.register(Overclaiming)
    assert str(caught.value) == line
    assert "toy-overclaiming" not in accounting.list_accountants()
    with pytest.raises(ValueError) as caught:
        Overclaiming(randomizer=cyclic(1.0), n_users=100)
    assert str(caught.value) == (
        "`randomizer` must be k-RR for accountant 'toy-overclaiming' (its view 'strong'); "
        "got CyclicRR(epsilon_local=1.0, k=3)."
    )
    for name in accounting.list_accountants():  # every registered accountant's claim is its view's
        accounting.check_view_supports(accounting.accountant_class(name))


@pytest.mark.parametrize("by_key", [False, True])
def test_compare_runs_with_it(cyclic, by_key):
    result = compare(
        n_users=3000, k=3, epsilon=1.0, delta=1e-6, draws=50, randomizer="toy-cyclic" if by_key else cyclic
    )
    rows = {(row["mechanism"], row["calibration"]): row for row in result.rows}
    assert {calibration for _, calibration in rows} == {"upper", "none"}  # no lower bound is known for it
    assert rows["shuffle+inv", "upper"]["method"] == "monte-carlo"  # no exact TV: Monte Carlo with its SE
    assert rows["shuffle+inv", "upper"]["l1_half_se"] > 0
    for mechanism in ("shuffle+inv+proj", "shuffle+ibu", LOCAL_OTHER, "gaussian", "geometric+proj"):
        assert (mechanism, "upper" if mechanism.startswith("shuffle") else "none") in rows
    assert ("local-krr+inv", "none") not in rows
    from shuffledp.accounting.calibrate import calibrate_epsilon_local

    eps0 = calibrate_epsilon_local(GENERIC_UPPER, n_users=3000, k=3, epsilon=1.0, delta=1e-6)
    assert rows["shuffle+inv+proj", "upper"]["epsilon_local"] == eps0
    assert result.verdict["shuffle_vs_gaussian"]["winner_lower"] is None


def test_the_cli_compare_takes_its_key(cyclic, capsys):
    from shuffledp.cli import main

    assert (
        main(
            [
                "compare",
                "--n",
                "3000",
                "--k",
                "3",
                "--eps",
                "1",
                "--delta",
                "1e-6",
                "--draws",
                "20",
                "--randomizer",
                "toy-cyclic",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "local+inv" in out and "local-krr+inv" not in out


@pytest.mark.parametrize(
    "randomizer, match",
    [
        (
            "laplace",
            r"^`randomizer` must sample its reports as counts for compare .*; got 'laplace' \(Laplace on \[0, 1\]\)\.$",
        ),
        (
            "nope",
            r"^`randomizer` must be one of binary-rr, hadamard, krr, laplace, olh, oue, subset, sue; got 'nope'\.$",
        ),
    ],
)
def test_compare_refuses_a_randomizer_it_cannot_simulate(randomizer, match):
    with pytest.raises(ValueError, match=match):
        compare(n_users=1000, k=2, epsilon=1.0, delta=1e-6, draws=10, randomizer=randomizer)


def test_the_cli_keeps_the_rounds_to_krr(capsys):
    from shuffledp.cli import main

    assert (
        main(
            [
                "compare",
                "--n",
                "1000",
                "--k",
                "2",
                "--eps",
                "1",
                "--delta",
                "1e-6",
                "--randomizer",
                "binary-rr",
                "--compositions",
                "2",
            ]
        )
        != 0
    )
    assert "`--randomizer` must be krr with --compositions" in capsys.readouterr().err


def test_the_krr_closed_forms_refuse_it_in_one_line(cyclic):
    from shuffledp.estimators import krr_iterative_bayesian_update, krr_maximum_likelihood

    for estimator in (krr_maximum_likelihood, krr_iterative_bayesian_update):
        with pytest.raises(ValueError) as caught:
            estimator([10, 20, 30], randomizer=cyclic(1.0))
        assert str(caught.value) == (
            f"`randomizer` must be k-RR for {estimator.__name__} (its closed form is k-RR's); "
            "got CyclicRR(epsilon_local=1.0, k=3)."
        )
    with pytest.raises(
        ValueError, match=r"^`reported_counts` must have k = 4 entries on its last axis; got shape \(3,\)\.$"
    ):
        krr_maximum_likelihood([10, 20, 30], randomizer=KRR(1.0, 4))
