"""Tests of the ``weak-adversary`` (UPPER) and ``worst-case-lower`` (LOWER) accountants.

Written against the registry names. The truths they are held to, all independent of the library:

* tiny n, k: :func:`brute_force.true_worst_case_delta` (max over every dataset of the other n - 1
  users and both directions of the exact shuffled-histogram delta) and the weak / strong adversary
  views by literal enumeration (Koskela, Heikkila, Honkela, Def. 3 / Def. 1);
* moderate n: :func:`weak_reference.weak_adversary_reference_mpmath` (direct triple sum over
  (b, a, c), 60 digits), :func:`weak_reference.pair_marginal_reference_mpmath` (the (h_x0, h_x1)
  law when no other user holds x0 or x1), and ``histogram-exact`` for explicit datasets (itself
  validated against brute force in test_histogram.py);
* dp_accounting's privacy loss distribution of the explicit weak view (pessimistic / optimistic).

Chain of inequalities checked: worst-case-lower <= true worst case <= weak-adversary <=
strong-adversary (data processing: the histogram is a function of the weak view plus the known
data, which is a function of the strong view).
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from brute_force import (
    strong_adversary_view_bruteforce,
    true_worst_case_delta,
    weak_adversary_view_bruteforce,
)
from weak_reference import (
    all_on_x0_reference_mpmath,
    pair_marginal_reference_mpmath,
    weak_adversary_reference_mpmath,
    weak_view_log_pmfs,
)

from shuffledp.accounting import BoundKind, get_accountant

WEAK, LOWER, STRONG = "weak-adversary", "worst-case-lower", "strong-adversary"
#: relative tolerance of the <= comparisons and of the agreement with the references
RTOL = 1e-9
#: brute-force values below this are rounding noise at exact ties (eps = eps0), i.e. 0
TIE_NOISE = 1e-40


def _accountant(name, eps0, n, k):
    return get_accountant(name, epsilon_local=eps0, n_users=n, k=k)


def test_labels():
    assert _accountant(WEAK, 1.0, 10, 3).kind is BoundKind.UPPER
    assert _accountant(LOWER, 1.0, 10, 3).kind is BoundKind.LOWER
    for name in (WEAK, LOWER):
        accountant = _accountant(name, 1.0, 10, 3)
        assert accountant.scope and accountant.reference


# ------------------------------------------------------------------ tiny cases: brute force over every dataset

#: (n, k, eps0): every dataset of the others is enumerated (C(n + k - 2, k - 1) of them)
TINY = [
    (2, 2, 0.5),
    (3, 3, 1.0),
    (4, 2, 2.5),
    (4, 4, 1.0),
    (5, 3, 0.5),
    (6, 2, 1.0),
    (6, 4, 2.0),
    (7, 3, 4.0),
    (8, 4, 1.0),
]


def _tiny_epsilons(eps0):
    return [0.0, 0.05, 0.25, 0.75, 0.5 * eps0, 0.999 * eps0, eps0, eps0 + 0.5]


@pytest.mark.parametrize("n, k, eps0", TINY, ids=lambda v: str(v))
def test_lower_below_true_worst_case_below_weak_below_strong(n, k, eps0):
    epsilons = _tiny_epsilons(eps0)
    lower = _accountant(LOWER, eps0, n, k).delta_for_epsilon(epsilons)
    weak = _accountant(WEAK, eps0, n, k).delta_for_epsilon(epsilons)
    strong = _accountant(STRONG, eps0, n, k).delta_for_epsilon(epsilons)
    for i, eps in enumerate(epsilons):
        true = float(true_worst_case_delta(eps, eps0, n, k).delta)
        true = 0.0 if true < TIE_NOISE else true
        assert lower[i] <= true * (1 + RTOL), (eps, lower[i], true)
        assert true <= weak[i] * (1 + RTOL), (eps, true, weak[i])
        assert weak[i] <= strong[i] * (1 + RTOL), (eps, weak[i], strong[i])


@pytest.mark.parametrize("n, k, eps0", TINY, ids=lambda v: str(v))
def test_weak_adversary_equals_bruteforce_view_and_reference(n, k, eps0):
    """weak-adversary == literal enumeration of the Def. 3 view == the mpmath triple sum (rel 1e-9);
    exactly 0 for eps >= eps0."""
    epsilons = _tiny_epsilons(eps0)
    ours = _accountant(WEAK, eps0, n, k).delta_for_epsilon(epsilons)
    references = weak_adversary_reference_mpmath(
        epsilons, eps0, n, k
    )  # == brute force: test_weak_reference.py
    for eps, value, reference in zip(epsilons, ours, references):
        if eps >= eps0:
            assert value == 0.0 and reference == 0
            continue
        brute = float(weak_adversary_view_bruteforce(eps, eps0, n, k))
        assert value == pytest.approx(brute, rel=RTOL)
        assert value == pytest.approx(float(reference), rel=RTOL)


@pytest.mark.parametrize("n, k, eps0", [(4, 3, 1.0), (6, 2, 0.5), (5, 4, 2.0)])
def test_strong_adversary_equals_bruteforce_view(n, k, eps0):
    """The registered strong-adversary is the exact delta of Koskela's Def. 1 view (literal enumeration)."""
    epsilons = [0.0, 0.1, 0.6, eps0, eps0 + 1.0]
    ours = _accountant(STRONG, eps0, n, k).delta_for_epsilon(epsilons)
    for eps, value in zip(epsilons, ours):
        assert value == pytest.approx(float(strong_adversary_view_bruteforce(eps, eps0, n, k)), rel=RTOL)


def test_single_user_closed_form():
    """n = 1: the output is u's k-RR report; every dataset is empty, and the weak adversary sees the
    same thing: delta = max(p - e^eps q, 0) for all three of lower, true and weak."""
    for eps0, k in [(1.3, 3), (0.5, 2), (3.0, 40)]:
        p, q = math.exp(eps0) / (math.exp(eps0) + k - 1), 1 / (math.exp(eps0) + k - 1)
        epsilons = np.array([0.0, 0.3 * eps0, 0.9 * eps0])
        expected = p - np.exp(epsilons) * q
        for name in (WEAK, LOWER):
            np.testing.assert_allclose(
                _accountant(name, eps0, 1, k).delta_for_epsilon(epsilons), expected, rtol=RTOL
            )


# ------------------------------------------------------------------ moderate n: mpmath references

MODERATE = [(n, k, eps0) for n in (50, 120) for k in (2, 3, 10) for eps0 in (0.1, 1.0, 4.0)]


def _moderate_epsilons(eps0):
    return [0.0, 0.001, 0.01, 0.1 * eps0, 0.3 * eps0, 0.6 * eps0, 0.9 * eps0, 0.99 * eps0, eps0, eps0 + 1.0]


@pytest.mark.parametrize("n, k, eps0", MODERATE, ids=lambda v: str(v))
def test_weak_adversary_matches_mpmath_reference(n, k, eps0):
    """|log ours - log reference| <= 1e-9 (relative error <= 1e-9) wherever the reference delta is
    >= 1e-300; below that the upper bound must not fall below the reference; -inf where it is 0."""
    epsilons = _moderate_epsilons(eps0)
    ours = _accountant(WEAK, eps0, n, k).log_delta_for_epsilon(epsilons)
    for eps, log_value, reference in zip(
        epsilons, ours, weak_adversary_reference_mpmath(epsilons, eps0, n, k)
    ):
        if reference == 0:
            assert log_value == -np.inf, (eps, log_value)
            continue
        log_reference = float(mpmath.log(reference))
        if reference >= 1e-300:
            assert abs(log_value - log_reference) <= RTOL, (eps, log_value, log_reference)
        else:
            assert log_value >= log_reference - RTOL, (eps, log_value, log_reference)


@pytest.mark.parametrize("n, k, eps0", [(120, 10, 1.0), (50, 2, 0.1), (120, 3, 4.0)])
def test_weak_adversary_epsilon_for_delta_against_reference(n, k, eps0):
    """epsilon_for_delta meets delta on the reference curve, and a hair less would not."""
    accountant = _accountant(WEAK, eps0, n, k)
    deltas = (1e-2, 1e-6, 1e-12)
    found = [accountant.epsilon_for_delta(delta) for delta in deltas]
    # all the reference values below in one pass over the cells (each epsilon's value is computed
    # independently of the others in the list)
    queries = sorted(
        {q for eps in found for q in ((0.0,) if eps == 0.0 else (eps, eps - 1e-7 * max(1.0, eps)))}
    )
    reference = dict(zip(queries, weak_adversary_reference_mpmath(queries, eps0, n, k)))
    for delta, eps in zip(deltas, found):
        if eps == 0.0:
            assert reference[0.0] <= delta * (1 + RTOL)
            continue
        assert reference[eps] <= delta * (1 + RTOL)
        assert reference[eps - 1e-7 * max(1.0, eps)] > delta


def _histogram_exact(eps0, n, k, n_x0, epsilons):
    accountant = get_accountant(
        "histogram-exact", epsilon_local=eps0, n_users=n, k=k, n_x0=n_x0, direction="both"
    )
    return accountant.delta_for_epsilon(epsilons)


@pytest.mark.parametrize(
    "n, k, eps0",
    [(50, 3, 1.0), (50, 10, 4.0), (120, 10, 0.1), (120, 3, 1.0), (50, 2, 1.0), (120, 2, 4.0)],
    ids=lambda v: str(v),
)
def test_worst_case_lower_holds_its_two_required_datasets(n, k, eps0):
    """worst-case-lower >= the two datasets its family must hold -- no other user on x0 or
    x1 (its (h_x0, h_x1) marginal; k >= 3) and every other user on x0 (exact) -- both in mpmath, and
    <= the weak adversary (mpmath), which bounds the true worst case."""
    epsilons = [e for e in _moderate_epsilons(eps0) if e < eps0]
    lower = _accountant(LOWER, eps0, n, k).delta_for_epsilon(epsilons)
    all_on_x0 = [float(v) for v in all_on_x0_reference_mpmath(epsilons, eps0, n, k)]
    # The reference at all of _moderate_epsilons (each value independent of the others in the list),
    # so that the pass test_weak_adversary_matches_mpmath_reference made for (n, k, eps0) is reused.
    weak_all = weak_adversary_reference_mpmath(_moderate_epsilons(eps0), eps0, n, k)
    weak = [float(w) for e, w in zip(_moderate_epsilons(eps0), weak_all) if e < eps0]
    members = [all_on_x0]
    if k >= 3:
        members.append([float(v) for v in pair_marginal_reference_mpmath(epsilons, eps0, n, k)])
    for i, eps in enumerate(epsilons):
        for member in members:
            assert lower[i] >= member[i] * (1 - RTOL), (eps, lower[i], member[i])
        assert lower[i] <= weak[i] * (1 + RTOL), (eps, lower[i], weak[i])


@pytest.mark.parametrize("n, eps0", [(50, 1.0), (40, 0.1), (40, 4.0)])
def test_k2_true_worst_case_at_moderate_n(n, eps0):
    """k = 2: every dataset is "n_x0 others on x0, the rest on x1", so the true worst case is the max
    over n_x0 of ``histogram-exact`` (both directions): worst-case-lower <= it <= weak-adversary."""
    k = 2
    epsilons = [e for e in _moderate_epsilons(eps0) if e < eps0]
    true = np.max([_histogram_exact(eps0, n, k, n_x0, epsilons) for n_x0 in range(n)], axis=0)
    lower = _accountant(LOWER, eps0, n, k).delta_for_epsilon(epsilons)
    weak = _accountant(WEAK, eps0, n, k).delta_for_epsilon(epsilons)
    assert np.all(lower <= true * (1 + RTOL)), (lower, true)
    assert np.all(true <= weak * (1 + RTOL)), (true, weak)


@pytest.mark.parametrize(
    "n, k, eps0",
    [
        (10**3, 2, 0.5),
        (10**3, 1000, 4.0),
        (10**5, 10, 1.0),
        (2 * 10**5, 10, 0.5),
        (10**6, 100, 4.0),
        (10**6, 2, 8.0),
    ],
    ids=lambda v: str(v),
)
def test_chain_at_large_n(n, k, eps0):
    """Beyond the references: worst-case-lower <= weak-adversary <= strong-adversary, in log space."""
    epsilons = np.concatenate([[0.0], np.geomspace(1e-4, eps0, 25)])
    lower = _accountant(LOWER, eps0, n, k).log_delta_for_epsilon(epsilons)
    weak = _accountant(WEAK, eps0, n, k).log_delta_for_epsilon(epsilons)
    strong = _accountant(STRONG, eps0, n, k).log_delta_for_epsilon(epsilons)
    assert not np.any(np.isnan(lower)) and not np.any(np.isnan(weak))
    assert np.all(lower <= weak + RTOL) and np.all(weak <= strong + RTOL)
    # the view's cell b = 0, (a, c) = (1, 0) has likelihood ratio exactly e^eps0: delta > 0 below eps0
    assert np.all(np.isfinite(weak[:-1]))
    # non-increasing wherever the value is inside the accuracy promise (delta >= 1e-300); further out
    # the certified remainder of the windows (~e^-800, capped by strong-adversary) dominates and is
    # valid but not exact, so it need not be monotone
    promised = weak[:-1] >= math.log(1e-300)
    assert np.all(np.diff(weak[:-1][promised]) <= RTOL)
    assert weak[-1] == -np.inf and lower[-1] == -np.inf  # delta(eps0) = 0


# ------------------------------------------------------------------ dp_accounting


@pytest.mark.parametrize("n, k, eps0", [(30, 5, 1.0), (60, 10, 0.49), (40, 2, 2.0)])
def test_weak_adversary_between_dp_accounting_pessimistic_and_optimistic(n, k, eps0):
    """dp_accounting's PLD of the explicit weak view (b, a, c), both directions, brackets our delta."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    log_p, log_q = weak_view_log_pmfs(eps0, n, k)
    plds = {
        estimate: [
            pld.from_two_probability_mass_functions(
                lower, upper, pessimistic_estimate=estimate, symmetric=False
            )
            for lower, upper in ((log_q, log_p), (log_p, log_q))
        ]
        for estimate in (True, False)
    }
    epsilons = [0.0, 0.05, 0.2, 0.5 * eps0, 0.9 * eps0]
    ours = _accountant(WEAK, eps0, n, k).delta_for_epsilon(epsilons)
    for eps, value in zip(epsilons, ours):
        pessimistic = max(d.get_delta_for_epsilon(eps) for d in plds[True])
        optimistic = max(d.get_delta_for_epsilon(eps) for d in plds[False])
        assert optimistic <= value * (1 + RTOL) + 1e-15 and value <= pessimistic * (1 + RTOL) + 1e-15


@pytest.mark.parametrize(
    "n,eps0,eps",
    [
        (10**8, 20.0, 18.0),
        (10**8, 20.0, 19.8),
        (10**6, 8.0, 7.9),
        (10**6, 20.0, 19.8),
        (1000, 20.0, 19.0),
        (10**5, 12.0, 11.0),
        (50, 3.0, 2.5),
    ],
)
def test_single_outcome_bound_near_a_large_eps0(n, eps0, eps):
    """k = 2, every other user on x0, u on x0 vs x1, the one outcome "nobody reports x1": probabilities
    pi0^n and pi0^(n - 1) (1 - pi0) (pi0 = e^eps0 / (e^eps0 + 1)), so that dataset's delta is at least
    pi0^n (1 - e^(eps - eps0)), a closed-form lower bound on the worst case. worst-case-lower returned 0
    here (n = 10^8, eps0 = 20, eps = 18, where this bound is 0.70) until its threshold
    u = x (n (e^-eps - 1) + s (1 - x)) / D stopped being a difference of two numbers of size n and
    E[(u - B)_+] for u << 1 stopped forming N - u (which rounds to N)."""
    reference = -n * math.log1p(math.exp(-eps0)) + math.log(-math.expm1(eps - eps0))
    for name in ("worst-case-lower", "weak-adversary", "worst-case-upper"):
        value = float(
            get_accountant(name, epsilon_local=eps0, n_users=n, k=2).log_delta_for_epsilon([eps])[0]
        )
        assert value >= reference - 1e-9 * max(1.0, abs(reference)), (name, value, reference)


def test_none_member_where_its_threshold_lies_ulps_below_s():
    """At eps0 = 17, n = 2, k = 3, eps = eps0 - 1.1e-8 the "none" row s = 2 has s - t_s = 9.1e-16: only A = s
    exceeds t_s, and the row takes (s - t_s) 2^-s from s - t_s formed without cancellation. The general excess
    was evaluated there too (its value then replaced) and, from t and d rounded apart, formed the gap s - t_s
    as -1.3e-15: log of a negative number, a RuntimeWarning (an error under the suite's warning filter; found
    by the validity sweep's epsilon search at delta = 1e-8). The row is no longer summed twice; the member's
    value is the mpmath reference's."""
    eps0, n, k = 17.0, 2, 3
    eps = 16.999999989025756
    accountant = _accountant(LOWER, eps0, n, k)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        members = accountant.member_log_deltas(eps)
        found = accountant.epsilon_for_delta(1e-8)
    reference = float(mpmath.log(pair_marginal_reference_mpmath(eps, eps0, n, k)))
    assert members["none"] == pytest.approx(reference, rel=1e-12, abs=0.0)
    assert 0.0 < found < eps0
