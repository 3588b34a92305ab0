"""Randomizers as objects in the setting: the setting keeps its loose form, accountants state
the randomizers they accept (no boolean flags), binary RR is k-RR at k = 2, the Laplace accountants need
no k, and each randomizer's blanket is what Balle et al. state."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from shuffledp import accounting
from shuffledp.accounting import accountant_class, get_accountant, list_accountants
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.randomizers import (
    KRR,
    BinaryRR,
    GenericBlanket,
    LaplaceBlanket,
    LaplaceRandomizer,
    Randomizer,
)

EPSILONS = np.array([0.0, 0.05, 0.2, 0.45, 1.0])


def test_the_loose_setting_is_k_rr():
    setting = ShuffleSetting(epsilon_local=1.5, n_users=40, k=6, n_x0=2)
    assert setting.randomizer == KRR(epsilon_local=1.5, k=6)
    assert (setting.epsilon_local, setting.n_users, setting.k, setting.n_x0) == (1.5, 40, 6, 2)
    assert setting.krr is KrrParams.of(1.5, 6)
    assert ShuffleSetting.of(KRR(epsilon_local=1.5, k=6), n_users=40, n_x0=2) == setting
    assert ShuffleSetting(1.5, 40, 6, 2) == setting  # positional, as before


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"epsilon_local": 2.0}, r"^`epsilon_local` must be the randomizer's \(1.0\) or omitted; got 2.0\.$"),
        ({"k": 3}, r"^`k` must be the randomizer's \(2\) or omitted; got 3\.$"),
    ],
)
def test_a_setting_refuses_parameters_that_contradict_its_randomizer(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ShuffleSetting(**{"epsilon_local": None, "k": None, **kwargs}, n_users=5, randomizer=BinaryRR(1.0))


def test_the_loose_setting_keeps_its_errors():
    with pytest.raises(ValueError, match=r"^`k` must be an integer"):
        ShuffleSetting(epsilon_local=1.0, n_users=5, k=1)
    with pytest.raises(ValueError, match=r"^`n_users` must be"):
        ShuffleSetting(epsilon_local=1.0, n_users=0, k=1)  # n_users is checked before k, as before
    with pytest.raises(ValueError, match=r"^`randomizer` must be a Randomizer"):
        ShuffleSetting.of("k-RR", n_users=5)


def test_binary_rr_is_k_rr_at_k_2():
    binary = BinaryRR(epsilon_local=0.8)
    assert isinstance(binary, KRR) and binary.k == 2 and binary.params is KrrParams.of(0.8, 2)
    strong = get_accountant("strong-adversary", randomizer=binary, n_users=300).log_delta_for_epsilon(
        EPSILONS
    )
    loose = get_accountant("strong-adversary", epsilon_local=0.8, n_users=300, k=2).log_delta_for_epsilon(
        EPSILONS
    )
    np.testing.assert_array_equal(strong, loose)
    with pytest.raises(
        ValueError, match=r"^`k` must be 2 \(or omitted\) for binary randomized response; got 3\.$"
    ):
        BinaryRR.from_parameters(epsilon_local=0.8, k=3)


@pytest.mark.parametrize("name", ["balle-hoeffding-laplace", "balle-bennett-laplace"])
def test_laplace_accountants_need_no_k(name):
    without_k = get_accountant(name, epsilon_local=0.5, n_users=10**4)
    assert without_k.setting.randomizer == LaplaceRandomizer(0.5) and without_k.setting.k is None
    ignored_k = get_accountant(name, epsilon_local=0.5, n_users=10**4, k=7)  # today's calls pass a k: ignored
    given = get_accountant(name, randomizer=LaplaceRandomizer(0.5), n_users=10**4)
    values = [a.log_delta_for_epsilon(EPSILONS) for a in (without_k, ignored_k, given)]
    np.testing.assert_array_equal(values[0], values[1])
    np.testing.assert_array_equal(values[0], values[2])
    assert np.any((values[0] < 0) & np.isfinite(values[0]))
    with pytest.raises(
        ValueError, match=r"^`randomizer` must be Laplace on \[0, 1\] for accountant .*got KRR\("
    ):
        get_accountant(name, randomizer=KRR(0.5, 3), n_users=10**4)
    with pytest.raises(ValueError, match=r"^`k` must be an integer in \[2, "):  # a k given is still validated
        get_accountant(name, epsilon_local=0.5, n_users=10**4, k=1)


def test_k_rr_accountants_refuse_laplace_in_one_line():
    with pytest.raises(ValueError) as caught:
        get_accountant("balle-hoeffding-krr", randomizer=LaplaceRandomizer(0.5), n_users=100)
    assert str(caught.value) == (
        "`randomizer` must be k-RR for accountant 'balle-hoeffding-krr'; "
        "got LaplaceRandomizer(epsilon_local=0.5)."
    )


def test_every_accountant_states_its_randomizers_and_no_flag_is_left():
    for name in list_accountants():
        cls = accountant_class(name)
        assert isinstance(cls.randomizers, tuple) and cls.randomizers, name
        assert all(isinstance(r, type) and issubclass(r, Randomizer) for r in cls.randomizers), name
        for flag in ("laplace", "generic", "_generic"):
            assert not hasattr(cls, flag), f"{name} still carries the flag {flag!r}"
    assert accounting.accountant_class("feldman-numerical").randomizers == (Randomizer,)
    assert accounting.accountant_class("clones-krr").randomizers == (KRR,)


@pytest.mark.parametrize("eps0,k", [(0.01, 2), (1.0, 3), (3.0, 50), (12.0, 10**6)])
def test_krr_probabilities_come_from_the_randomizer(eps0, k):
    p, q = KRR(eps0, k).probabilities
    assert (p, q) == KrrParams.of(eps0, k).probabilities
    mpmath.mp.dps = 40
    e = mpmath.exp(mpmath.mpf(eps0))
    assert math.isclose(p, float(e / (e + k - 1)), rel_tol=1e-15)
    assert math.isclose(q, float(1 / (e + k - 1)), rel_tol=1e-15)


def _mp_l_stats(eps0, k, eps):
    """k-RR's L = r_x(W) - e^eps r_x'(W), W uniform on k values (the blanket), r = P(report) / (1 / k): range,
    maximum and second moment, from L's values at W = x, W = x', W elsewhere (brute force, 40 digits)."""
    mpmath.mp.dps = 40
    e, ee = mpmath.exp(mpmath.mpf(eps0)), mpmath.exp(mpmath.mpf(eps))
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    r_hit, r_miss = k * p, k * q
    values = [(r_hit - ee * r_miss, 1), (r_miss - ee * r_hit, 1), (r_miss - ee * r_miss, k - 2)]
    values = [(v, w) for v, w in values if w > 0]
    second = sum(w * v**2 for v, w in values) / k
    return max(v for v, _ in values) - min(v for v, _ in values), max(v for v, _ in values), second, k * q


@pytest.mark.parametrize("eps0,k,eps", [(1.0, 2, 0.3), (2.0, 5, 1.0), (0.5, 100, 0.1)])
def test_the_krr_blanket_is_lemma_5_7(eps0, k, eps):
    blanket = KRR(eps0, k).blanket
    width, top, second, gamma = _mp_l_stats(eps0, k, eps)
    assert math.isclose(math.exp(blanket.log_gamma), float(gamma), rel_tol=1e-14)
    # Lemma 5.7's range b = (1 - gamma) k (e^eps + 1) is the L range
    assert math.isclose(float(np.exp(blanket.log_range(np.array([eps]))[0])), float(width), rel_tol=1e-13)
    logs = blanket.bennett_logs(np.array([eps]))
    log_beta, log_ratio, log_max_over_gamma = (float(np.asarray(v).ravel()[0]) for v in logs)
    assert math.isclose(math.exp(log_max_over_gamma), float(top / gamma), rel_tol=1e-12)
    assert math.isclose(math.exp(log_ratio), float(second / top**2), rel_tol=1e-12)
    assert math.isclose(math.exp(log_beta), float((mpmath.exp(eps) - 1) * top / second), rel_tol=1e-12)


def test_the_laplace_randomizer_carries_its_blanket_and_law():
    laplace = LaplaceRandomizer(0.7)
    assert laplace.blanket == LaplaceBlanket(0.7) and laplace.blanket.log_gamma == -0.35
    y = np.linspace(-40.0, 41.0, 400001)
    density = np.exp(laplace.log_density(y, 0.3))
    assert math.isclose(float(np.sum(density) * (y[1] - y[0])), 1.0, rel_tol=1e-6)
    # eps0-LDP: the densities of two inputs in [0, 1] differ by at most e^eps0 everywhere
    assert np.max(laplace.log_density(y, 0.0) - laplace.log_density(y, 1.0)) <= 0.7 + 1e-12


def test_the_generic_blanket_is_lemma_5_2():
    blanket = GenericBlanket(2.0)
    assert blanket.log_gamma == -2.0 and math.isclose(
        math.exp(blanket.log_1mgamma), 1 - math.exp(-2.0), rel_tol=1e-15
    )
    b = float(np.exp(blanket.log_range(np.array([0.5]))[0]))  # (e^eps + 1)(e^eps0 - e^-eps0), Lemma 5.4 (2)
    assert math.isclose(b, (math.exp(0.5) + 1) * (math.exp(2.0) - math.exp(-2.0)), rel_tol=1e-14)
