"""The representation error of p and q in the certified worst-case searches' budgets.

``KrrParams.probability_error`` bounds the relative error of p, q, gamma and 1 - gamma as the searches form
them; each law entry of n users carries it n times (``representation_ulps``). These tests hold the bound to
50-digit values, show that the k = 3 block weights form 1 - 3 q without the cancellation that lost ~43 ulp at
eps0 = 0.1, and that the budgets grew by the representation term.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.k3 import blocks as k3_blocks
from shuffledp.accounting.worst_case.k4 import blocks as k4_blocks
from shuffledp.accounting.worst_case.k4 import own_hits

U = 2.0**-53
EPSILONS = [1e-6, 1e-3, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 14.5, 25.0, 36.0, 100.0, 700.0]


def _exact(e0: float, k: int) -> dict:
    mpmath.mp.dps = 50
    e = mpmath.exp(mpmath.mpf(e0))
    den = e + k - 1
    return {"p": e / den, "q": 1 / den, "gamma": k / den, "1-gamma": (e - 1) / den}


def _formed(krr: KrrParams) -> dict:
    """p, q, gamma, 1 - gamma as the searches form them (and the quotient forms where e^eps0 is finite)."""
    q = math.exp(krr.log_q)
    out = {
        "p": [math.exp(krr.log_p)],
        "q": [q],
        "gamma": [math.exp(krr.log_gamma)],
        "1-gamma": [q * math.expm1(krr.epsilon_local)],
    }
    if krr.epsilon_local < 709.0:
        p_quotient, q_quotient = krr.quotient_probabilities
        out["p"].append(p_quotient)
        out["q"].append(q_quotient)
    return out


def _relative(got: float, exact) -> float:
    return float(abs(mpmath.mpf(got) / exact - 1))


@pytest.mark.parametrize("k", [2, 3, 4, 10, 100, 10**6])
def test_probability_error_bounds_every_form(k):
    """Every p, q, gamma, 1 - gamma the searches use lies within probability_error of its 50-digit value."""
    for e0 in EPSILONS:
        krr = KrrParams.of(e0, k)
        exact = _exact(e0, k)
        for name, values in _formed(krr).items():
            for value in values:
                assert _relative(value, exact[name]) <= krr.probability_error, (k, e0, name)


def test_probability_error_probe():
    """Probe: a q moved by more than the bound is caught by the same comparison."""
    krr = KrrParams.of(25.0, 3)
    moved = math.exp(krr.log_q) * (1.0 + 2.0 * krr.probability_error)
    assert _relative(moved, _exact(25.0, 3)["q"]) > krr.probability_error


def test_representation_ulps_counts_factors():
    krr = KrrParams.of(8.0, 10)
    assert krr.representation_ulps(0) == 0.0
    assert krr.representation_ulps(200) == pytest.approx(200 * krr.probability_error / U * 1.001)
    with pytest.raises(ValueError, match="`factors`"):
        krr.representation_ulps(-1)


def test_k3_block_weights_form_one_minus_3q_without_cancellation():
    """At eps0 = 0.1, 3 q = 0.97: 1 - 3 q as a difference lost ~43 ulp; q (e^eps0 - 1) keeps it within rho.
    The weights Bin(U, 3 q) then stay within their budget 2 U u + U rho (the old difference fails it)."""
    e0, users = 0.1, 40
    search = k3_blocks.K3BlockSearch(n_users=50, epsilon_local=e0)
    krr = KrrParams.of(e0, 3)
    exact = _exact(e0, 3)
    stay_exact = 1 - 3 * exact["q"]
    measured_q = _relative(math.exp(krr.log_q), exact["q"])
    assert _relative(search._stay, stay_exact) <= measured_q + 10 * U
    weights = k3_blocks._weights(users, 3.0 * search._q, search._stay)
    w_exact = 3 * exact["q"]
    worst = max(
        _relative(weights[j], mpmath.binomial(users, j) * w_exact**j * stay_exact ** (users - j))
        for j in range(users + 1)
    )
    # the measured error of 3 q and 1 - 3 q (not the loose bound) in each of the U factors, and Pascal's
    budget = users * (measured_q + 10 * U) + 2 * users * U
    assert worst <= budget
    old = k3_blocks._weights(users, 3.0 * search._q, 1.0 - 3.0 * search._q)  # the difference, as before
    worst_old = max(
        _relative(old[0], stay_exact**users),
        _relative(old[users], w_exact**users),
    )
    assert worst_old > budget  # probe: the difference's cancellation breaks the same budget


def test_budgets_carry_the_representation_term():
    """Each search's per-entry budget is its arithmetic part plus n factors of the representation error."""
    n, e0 = 30, 8.0
    krr3 = KrrParams.of(e0, 3)
    search = k3_blocks.K3BlockSearch(n_users=n, epsilon_local=e0)
    assert search._ops == 4 * (n + 8) + krr3.representation_ulps(n)
    par = k4_blocks._params(n, 4, e0)
    assert par.rho == KrrParams.of(e0, 4).representation_ulps(1)
    hits = own_hits.OwnHitsSearch(n_users=n, k=4, epsilon_local=e0)
    assert hits._c == 16.0 * (n + 4) + 4.0 * KrrParams.of(e0, 4).representation_ulps(n)


def test_own_hits_forms_p_minus_q_without_cancellation():
    """At eps0 = 1e-6, k = 4: p - q = q (e^eps0 - 1) to a few u, where the difference p - q cancels 2e6-fold."""
    e0, k = 1e-6, 4
    krr = KrrParams.of(e0, k)
    p, q = krr.quotient_probabilities
    par = own_hits._Params(p, q, k, 10, q * math.expm1(e0))
    exact = _exact(e0, k)
    gap = exact["p"] - exact["q"]
    assert _relative(par.p_minus_q, gap) <= 2 * krr.probability_error
    assert _relative(p - q, gap) > 2 * krr.probability_error  # probe: the difference fails the same bound
