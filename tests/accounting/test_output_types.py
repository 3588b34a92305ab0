"""Output types (randomizers/types.py): each check refuses a planted violation, and k-RR's types agree with
types recounted from its channel by brute force (gamma = sum_o min_x C[x, o], omega = min_x C[x, .] / gamma)."""

import math

import numpy as np
import pytest

from shuffledp.accounting.randomizers import KRR, LaplaceRandomizer, OutputTypes


def _types_from_channel(channel: np.ndarray, inputs: int) -> tuple[float, dict[tuple[float, ...], float]]:
    """gamma and {ratios on the first `inputs` rows: blanket mass}, from the channel alone."""
    floor = channel.min(axis=0)
    gamma = floor.sum()
    omega = floor / gamma
    found: dict[tuple[float, ...], float] = {}
    for o in range(channel.shape[1]):
        key = tuple(round(channel[x, o] / omega[o], 9) for x in range(inputs))
        found[key] = found.get(key, 0.0) + omega[o]
    return gamma, found


@pytest.mark.parametrize("k", [2, 3, 4, 7])
@pytest.mark.parametrize("epsilon_local", [0.3, 1.0, 5.0])
@pytest.mark.parametrize("inputs", [2, 3])
def test_krr_types_match_its_channel(k, epsilon_local, inputs):
    if inputs > k:
        pytest.skip("more inputs of interest than values")
    randomizer = KRR(epsilon_local=epsilon_local, k=k)
    types = randomizer.output_types(inputs)
    gamma, expected = _types_from_channel(randomizer.channel, inputs)
    assert math.exp(types.log_gamma) == pytest.approx(gamma, rel=1e-12)
    got: dict[tuple[float, ...], float] = {}
    for t in range(types.n_types):
        key = tuple(round(v, 9) for v in np.exp(types.log_ratios[:, t]))
        got[key] = got.get(key, 0.0) + math.exp(types.log_blanket_mass[t])
    assert got.keys() == expected.keys()
    for key, mass in expected.items():
        assert got[key] == pytest.approx(mass, rel=1e-12)


def test_type_probabilities_are_laws():
    types = KRR(epsilon_local=2.0, k=6).output_types(3)
    for row in range(3):
        assert np.exp(types.log_type_probabilities(row)).sum() == pytest.approx(1.0, abs=1e-14)
    with pytest.raises(ValueError, match="`row` must be an integer in \\[0, 3\\)"):
        types.log_type_probabilities(3)


def test_merged_keeps_the_pair_law():
    types = KRR(epsilon_local=1.0, k=5).output_types(3)
    pair = types.merged()
    assert pair.n_types == 3 and pair.log_ratios.shape == (2, 3)
    for row in range(2):
        assert np.exp(pair.log_type_probabilities(row)).sum() == pytest.approx(1.0, abs=1e-14)
    with pytest.raises(ValueError, match="`rows` must name at least two inputs"):
        types.merged((0,))


def test_continuous_randomizer_has_no_types():
    assert LaplaceRandomizer(epsilon_local=1.0).output_types() is None


def _valid() -> dict:
    types = KRR(epsilon_local=1.0, k=4).output_types()
    return {
        "epsilon_local": 1.0,
        "log_gamma": types.log_gamma,
        "log_blanket_mass": types.log_blanket_mass.copy(),
        "log_ratios": types.log_ratios.copy(),
    }


def test_valid_fields_pass():
    OutputTypes(**_valid())


@pytest.mark.parametrize(
    ("plant", "message"),
    [
        (lambda f: f.update(epsilon_local=0.0), "`epsilon_local` must be a finite number > 0"),
        (lambda f: f.update(log_gamma=0.1), "`log_gamma` must be finite and <= 0"),
        (lambda f: f.update(log_blanket_mass=f["log_blanket_mass"] + 1e-9), "must sum to 1"),
        (lambda f: f.update(log_ratios=f["log_ratios"][:1]), "must have shape \\(m >= 2"),
        (lambda f: f["log_ratios"].__setitem__((0, 0), f["log_ratios"][0, 0] + 1e-6), "row 0 must be a law"),
        (lambda f: f.update(log_gamma=f["log_gamma"] + 0.2), "must be >= log_gamma"),
        (lambda f: f.update(epsilon_local=0.5), "within eps0 = 0.5"),
        (lambda f: f["log_ratios"].__setitem__((1, 2), np.inf), "must be finite"),
    ],
)
def test_each_check_refuses_its_planted_violation(plant, message):
    fields = _valid()
    plant(fields)
    with pytest.raises(ValueError, match=message):
        OutputTypes(**fields)


def test_krr_refuses_too_many_inputs():
    with pytest.raises(ValueError, match="`inputs`"):
        KRR(epsilon_local=1.0, k=3).output_types(4)
