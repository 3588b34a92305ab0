"""Numerical RDP of the clones pair (shuffledp.accounting.views.clones.rdp, accountant ``clones-krr-rdp``).

* Independent evaluation: the pair is rebuilt in mpmath (50 digits) from its definition (C, A, Delta and
  the k-RR weight, states (c, first coordinate), Q the swap) and D_lambda is summed in both directions.
* The certified remainder (rows above c_hi) keeps the value an upper bound within e^-50.
* RDP converted to (eps, delta) is an upper bound on the pair's exact delta (``clones-krr``), alone and
  composed (two rounds: PLD composition, itself an upper bound, is still below the RDP conversion; compared
  where the composed delta is above 1e-10, dp_accounting's linear-space round-off being ~1e-15).
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from shuffledp.accounting import ShuffleSetting, get_accountant
from shuffledp.accounting.composition import compose
from shuffledp.accounting.numerics.binomial import log_sf
from shuffledp.accounting.views.clones import rdp as rdp_view

ORDERS = np.array([1.5, 2.0, 3.0, 7.5, 40.0, 256.0])


def _mp_pair(e0: float, n: int, k: int | None):
    """P and Q of the clones pair as dicts state -> probability (mpmath), built from the definition."""
    mp.mp.dps = 50
    e = mp.e ** mp.mpf(e0)
    if k is None:
        r, w = 1 / e, mp.mpf(1)
    else:
        q = 1 / (e + k - 1)
        r, w = 2 * q, min(mp.mpf(1), (e + 1) * q)
    alpha = e / (e + 1)
    P: dict = {"same": 1 - w}
    Q: dict = {"same": 1 - w}
    for c in range(n):
        pc = mp.binomial(n - 1, c) * r**c * (1 - r) ** (n - 1 - c)
        for a in range(c + 1):
            pa = mp.binomial(c, a) / mp.mpf(2) ** c
            for d, pd in ((1, alpha), (0, 1 - alpha)):
                mass = w * pc * pa * pd
                P[(c, a + d)] = P.get((c, a + d), 0) + mass  # (A + Delta, C + 1 - A - Delta)
                Q[(c, c + 1 - a - d)] = Q.get((c, c + 1 - a - d), 0) + mass  # the swap
    return P, Q


def _mp_rdp(P, Q, order) -> float:
    lam = mp.mpf(order)
    total = mp.fsum(P[x] ** lam * Q[x] ** (1 - lam) for x in P if P[x] > 0)
    return float(mp.log(total) / (lam - 1))


@pytest.mark.parametrize("e0,n,k", [(1.0, 6, 2), (4.0, 8, None), (2.0, 7, 3), (0.5, 12, 5), (3.0, 2, 2)])
def test_rdp_matches_mpmath_both_directions(e0, n, k):
    P, Q = _mp_pair(e0, n, k)
    orders, ours = rdp_view.clones_rdp(
        ShuffleSetting(epsilon_local=e0, n_users=n, k=k or 2), k is None, orders=ORDERS
    )
    for order, value in zip(orders, ours):
        forward, backward = _mp_rdp(P, Q, order), _mp_rdp(Q, P, order)
        assert value == pytest.approx(forward, rel=1e-12, abs=1e-15)
        assert value == pytest.approx(backward, rel=1e-12, abs=1e-15)


def test_remainder_is_an_upper_bound_within_its_bound(monkeypatch):
    e0, n = 4.0, 1500
    orders = np.array([2.0, 30.0, 256.0])
    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=2)
    certified = rdp_view.clones_log_moments(setting, False, orders)
    parameters = rdp_view.pair_parameters(setting, False)
    log_tails = rdp_view._log_tails(parameters)
    assert rdp_view._rows_upper(parameters, log_tails, 256.0, e0) < n - 1  # the remainder is in use
    monkeypatch.setattr(rdp_view, "REMAINDER_LOG_BOUND", -np.inf)  # every row: exact
    exact = rdp_view.clones_log_moments(setting, False, orders)
    assert np.all(certified >= exact)
    assert np.all(certified - exact <= math.exp(-50.0))


@pytest.mark.parametrize("c_hi", [20, 40, 54])
def test_the_remainder_bounds_the_rows_it_replaces(monkeypatch, c_hi):
    """With the rows summed only to c_hi (forced low: the mean row is 54), the remainder carries much of
    M_2, so a remainder below the rows it replaces would show: the result stays at least the exact sum over
    every row, at every order, and is visibly above it at order 2. (At the higher orders the low rows, whose
    pairs are the least blanketed, carry M_lambda: the remainder is below their doubles' resolution.)"""
    e0, n = 4.0, 1500
    orders = np.array([2.0, 30.0, 256.0])
    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=2)
    monkeypatch.setattr(rdp_view, "REMAINDER_LOG_BOUND", -np.inf)
    exact = rdp_view.clones_log_moments(setting, False, orders)
    monkeypatch.setattr(rdp_view, "_rows_upper", lambda *arguments: c_hi)
    bounded = rdp_view.clones_log_moments(setting, False, orders)
    assert np.all(bounded >= exact)
    assert bounded[0] > exact[0] + 1e-9


@pytest.mark.parametrize(
    "e0,n,k,generic", [(4.0, 1500, 2, False), (1.0, 800, 15, False), (3.0, 600, 2, True)]
)
def test_row_moments_fall_with_the_row(e0, n, k, generic):
    """Data processing (module docstring): row c + 1's pair is row c's with an independent Bern(1/2) added, so
    each row's own moment m_lambda(c) is at most the row before's; checked on every row, at three orders (up
    to a few ulp of the rounding), and independently at a few rows in 50-digit arithmetic."""
    parameters = rdp_view.pair_parameters(ShuffleSetting(epsilon_local=e0, n_users=n, k=k), generic)
    parameters.pop("log_weight")
    orders = np.array([2.0, 30.0, 256.0])
    rows = np.array([rdp_view._row_log_moments(c, parameters, orders) for c in range(n)])
    assert np.all(np.diff(rows, axis=0) <= 1e-12 * np.maximum(np.abs(rows[1:]), 1.0))
    assert rows[0, -1] > rows[-1, -1] + 1.0  # they do fall: the bound is not flat
    mp.mp.dps = 50
    alpha = mp.e ** mp.mpf(e0) / (mp.e ** mp.mpf(e0) + 1)
    for c in (0, 1, 7, 40):
        coefficient = [mp.mpf(0)] + [mp.binomial(c, a) / mp.mpf(2) ** c for a in range(c + 1)] + [mp.mpf(0)]
        # coefficient[x + 1] = B_c(x), zero outside 0..c
        moment = mp.fsum(
            (alpha * coefficient[x] + (1 - alpha) * coefficient[x + 1]) ** 30
            * (alpha * coefficient[x + 1] + (1 - alpha) * coefficient[x]) ** -29
            for x in range(c + 2)
        )
        assert rows[c, 1] == pytest.approx(float(mp.log(moment)), rel=1e-11)


def test_the_row_of_the_tighter_remainder_is_below_the_crude_one():
    """The remainder from the row's own moment stops summing rows earlier than e^((lambda - 1) eps0) did (the
    point of it), at the first row where Pr(C > c) m_lambda_max(c) is below the bound."""
    e0, n = 4.0, 10_000
    parameters = rdp_view.pair_parameters(ShuffleSetting(epsilon_local=e0, n_users=n, k=2), False)
    parameters.pop("log_weight")
    log_tails = rdp_view._log_tails(parameters)
    crude = rdp_view._crude_rows_upper(log_tails, 256.0, e0)
    c_hi = rdp_view._rows_upper(parameters, log_tails, 256.0, e0)
    assert c_hi < 0.7 * crude
    # log Pr(C > c), C ~ Bin(n - 1, r), recounted by scipy, apart from the module's tails
    r = math.exp(parameters["log_r"])

    def product(c):
        tail = float(stats.binom.logsf(c, parameters["n_trials"], r))
        return tail + rdp_view._row_log_moments(c, parameters, np.array([256.0]))[0]

    assert product(c_hi) <= rdp_view.REMAINDER_LOG_BOUND < product(c_hi - 1)


@pytest.mark.parametrize("e0,n,k", [(4.0, 10_000, 2), (1.0, 800, 15), (8.0, 3, 2)])
def test_the_tails_formed_once_are_each_rows_own(e0, n, k):
    """log Pr(C > c) formed once for every row (crude row, bisection, remainder) has the bits of the row's tail
    formed alone, as each use formed it before: checked at about 400 rows spread over the array and the last
    three."""
    parameters = rdp_view.pair_parameters(ShuffleSetting(epsilon_local=e0, n_users=n, k=k), False)
    log_tails = rdp_view._log_tails(parameters)
    n_trials = float(parameters["n_trials"])
    assert log_tails.size == int(n_trials) + 1 and log_tails[-1] == -np.inf
    size = log_tails.size
    rows = np.unique(np.r_[np.arange(0, size, max(1, size // 400)), np.arange(max(0, size - 3), size)])
    for c in rows:
        alone = log_sf(np.array([c + 1.0]), n_trials, parameters["log_r"], parameters["log_1mr"])[0]
        assert log_tails[c] == alone, c


def _log_r(e0):
    parameters = rdp_view.pair_parameters(ShuffleSetting(epsilon_local=e0, n_users=10, k=2), False)
    return parameters["log_r"], parameters["log_1mr"]


@pytest.mark.parametrize("e0,n,k", [(4.0, 300, 2), (1.0, 200, 3)])
def test_rdp_conversion_bounds_the_exact_delta(e0, n, k):
    epsilons = np.linspace(0.05, 0.9, 12)
    rdp = get_accountant("clones-krr-rdp", epsilon_local=e0, n_users=n, k=k)
    exact = get_accountant("clones-krr", epsilon_local=e0, n_users=n, k=k)
    assert np.all(rdp.delta_for_epsilon(epsilons) >= exact.delta_for_epsilon(epsilons))
    two = get_accountant("clones-krr-rdp", epsilon_local=e0, n_users=n, k=k, compositions=2)
    composed = compose(
        "clones-krr", epsilon_local=e0, n_users=n, k=k, compositions=2, value_discretization_interval=1e-4
    )
    resolved = (
        composed.delta_for_epsilon(epsilons) > 1e-10
    )  # composed PLD deltas below carry ~1e-15 round-off
    assert resolved.sum() >= 4
    assert np.all(two.delta_for_epsilon(epsilons)[resolved] >= composed.delta_for_epsilon(epsilons)[resolved])
    assert two.epsilon_for_delta(1e-6) >= composed.epsilon_for_delta(1e-6)


def test_refusals_name_the_parameter():
    with pytest.raises(ValueError, match=r"`subsample` must be 1 for 'clones-krr-rdp'"):
        get_accountant("clones-krr-rdp", epsilon_local=1.0, n_users=100, k=2, subsample=0.5)
    with pytest.raises(ValueError, match=r"`n_users` must be in \[2, 20000\] for 'clones-krr-rdp'"):
        get_accountant("clones-krr-rdp", epsilon_local=1.0, n_users=100_000, k=2)
    with pytest.raises(ValueError, match=r"`orders` must all be > 1"):
        rdp_view.clones_log_moments(
            ShuffleSetting(epsilon_local=1.0, n_users=10, k=2), False, np.array([1.0, 2.0])
        )
