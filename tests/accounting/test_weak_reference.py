"""Checks of the mpmath references of :mod:`weak_reference` against brute force and closed forms.

These hold the references to account before they are used to validate the ``weak-adversary`` and
``worst-case-lower`` accountants (test_worst_case_accounting.py).
"""

from __future__ import annotations

import math
from collections import defaultdict

import mpmath
import pytest
from brute_force import (
    histogram_distribution_of_counts,
    hockey_stick,
    other_datasets,
    pair_distributions,
    weak_adversary_view_bruteforce,
    weak_adversary_view_distributions,
)
from weak_reference import (
    REFERENCE_DPS,
    _pair_reference,
    _pair_reference_plain,
    all_on_x0_reference_mpmath,
    pair_marginal_law_mpmath,
    pair_marginal_reference_mpmath,
    weak_adversary_reference_mpmath,
    weak_adversary_view_law_mpmath,
    weak_view_log_pmfs,
)

TIGHT = 40  # digits to which two 50+-digit evaluations of the same quantity must agree


def _close(a, b, digits: int = TIGHT) -> bool:
    with mpmath.workdps(60):
        return abs(mpmath.mpf(a) - mpmath.mpf(b)) <= mpmath.mpf(10) ** -digits * max(abs(mpmath.mpf(b)), 1)


def _relative_close(a, b, digits: int = TIGHT, floor_digits: int = 55) -> bool:
    """|a - b| <= 10^-digits |b| + 10^-floor_digits (the floor absorbs rounding noise at exact ties,
    e.g. eps = eps0 where every gap is 0 in exact arithmetic)."""
    with mpmath.workdps(60):
        a, b = mpmath.mpf(a), mpmath.mpf(b)
        return abs(a - b) <= mpmath.mpf(10) ** -digits * abs(b) + mpmath.mpf(10) ** -floor_digits


@pytest.mark.parametrize("n, k, eps0", [(4, 3, 1.0), (5, 4, 0.5), (6, 2, 2.0), (3, 5, 1.5), (1, 3, 0.7)])
def test_weak_view_reduces_to_blanket_count_and_two_bins(n, k, eps0):
    """Sufficiency of (b, a, c): the brute-force view (bits, remaining histogram) pushed to
    (sum(bits), h_x0, h_x1) has the reference's law, and its hockey-stick divergence is unchanged."""
    full = weak_adversary_view_distributions(n, k, epsilon_local=eps0)
    reduced = []
    with mpmath.workdps(50):  # the sums below at the brute force's precision, not mpmath's default 15
        for law in full:
            out = defaultdict(lambda: mpmath.mpf(0))
            for (bits, histogram), probability in law.items():
                out[(sum(bits), histogram[0], histogram[1])] += probability
            reduced.append(dict(out))
    reference = weak_adversary_view_law_mpmath(eps0, n, k)
    for ours, ref in zip(reduced, reference):
        assert {o for o, v in ref.items() if v > 0} == set(ours)
        assert all(_close(ours[o], ref[o]) for o in ours)
    for eps in (0.0, 0.2, 0.6, eps0 * 0.99):
        for first, second in ((0, 1), (1, 0)):
            assert _close(
                hockey_stick(full[first], full[second], eps),
                hockey_stick(reduced[first], reduced[second], eps),
            )


@pytest.mark.parametrize(
    "n, k, eps0", [(2, 2, 0.5), (4, 3, 1.0), (5, 2, 2.5), (6, 4, 1.0), (7, 3, 0.5), (8, 4, 1.0)]
)
def test_reference_matches_bruteforce_weak_view(n, k, eps0):
    epsilons = [0.0, 0.05, 0.3, 0.75, 0.999 * eps0]
    reference = weak_adversary_reference_mpmath(epsilons, eps0, n, k)
    for eps, ref in zip(epsilons, reference):
        assert _close(ref, weak_adversary_view_bruteforce(eps, eps0, n, k))


@pytest.mark.parametrize("n, k, eps0", [(25, 3, 1.0), (30, 10, 0.1), (20, 2, 4.0), (18, 7, 2.0)])
def test_integer_path_matches_all_mpmath_law(n, k, eps0):
    """The reference's integer-scaled triple sum equals the hockey stick of the plain mpmath law."""
    law_p, law_q = weak_adversary_view_law_mpmath(eps0, n, k)
    epsilons = [0.0, 0.01, 0.1, 0.5, 0.9 * eps0]
    reference = weak_adversary_reference_mpmath(epsilons, eps0, n, k)
    for eps, ref in zip(epsilons, reference):
        direct = max(hockey_stick(law_p, law_q, eps, dps=60), hockey_stick(law_q, law_p, eps, dps=60))
        assert _relative_close(ref, direct, 45)
    with mpmath.workdps(60):
        assert abs(mpmath.fsum(law_p.values()) - 1) < mpmath.mpf(10) ** -50


def test_reference_single_user_closed_form():
    """n = 1: the view is u's k-RR report: delta = max(p - e^eps q, 0) (k-RR's own hockey stick)."""
    for eps0, k, eps in [(1.3, 3, 0.4), (0.5, 2, 0.0), (2.0, 50, 1.9)]:
        p = math.exp(eps0) / (math.exp(eps0) + k - 1)
        q = 1 / (math.exp(eps0) + k - 1)
        assert float(weak_adversary_reference_mpmath(eps, eps0, 1, k)) == pytest.approx(
            p - math.exp(eps) * q, rel=1e-13
        )


def test_reference_vanishes_exactly_at_and_above_eps0():
    """Every likelihood ratio of the view is a mixture ratio within [e^-eps0, e^eps0]: delta(eps0) = 0."""
    for n, k, eps0 in [(30, 3, 1.0), (60, 10, 0.3), (15, 2, 4.0)]:
        below, at, above = weak_adversary_reference_mpmath([eps0 * 0.98, eps0, eps0 + 0.1], eps0, n, k)
        assert below > 0 and at == 0 and above == 0
        if k >= 3:
            below, at, above = pair_marginal_reference_mpmath([eps0 * 0.98, eps0, eps0 + 0.1], eps0, n, k)
            assert below > 0 and at == 0 and above == 0


def test_pair_marginal_law_is_the_bruteforce_pair_marginal():
    """Existing literal brute force (every other user on x2) gives the same (h_x0, h_x1) law."""
    for n, k, eps0 in [(5, 3, 1.0), (6, 4, 0.4)]:
        brute = pair_distributions(n, k, 0, "third", epsilon_local=eps0)
        ours = pair_marginal_law_mpmath(eps0, n, k)
        for b, o in zip(brute, ours):
            assert {key for key, v in o.items() if v > 0} == set(b)
            assert all(_close(b[key], o[key]) for key in b)


@pytest.mark.parametrize("n, k, eps0", [(5, 3, 1.0), (7, 3, 0.4), (6, 4, 0.4), (4, 5, 2.0)])
def test_pair_marginal_bounds_every_dataset_off_x0_x1(n, k, eps0):
    """For every dataset with no other user on x0 or x1, the (h_x0, h_x1) reference is <= the
    full-histogram delta (brute force, both directions; data processing), with equality for k = 3
    (the rest of the histogram is then n - h_x0 - h_x1). For k >= 4 the pair is not sufficient:
    u's report on one of x2 .. x_{k-1} shifts the rest of the histogram, and some dataset has a
    strictly larger delta (checked, so the inequality is not vacuous)."""
    epsilons = [0.0, 0.1, 0.4, 0.9 * eps0]
    reference = pair_marginal_reference_mpmath(epsilons, eps0, n, k)
    datasets = [d for d in other_datasets(n, k) if d[0] == d[1] == 0]
    assert len(datasets) == math.comb(n - 1 + k - 3, k - 3)
    largest_gap = mpmath.mpf(0)
    for counts in datasets:
        laws = []
        for x in (0, 1):
            own = [0] * k
            own[x] = 1
            laws.append(
                histogram_distribution_of_counts(
                    tuple(a + b for a, b in zip(counts, own)), k, epsilon_local=eps0
                )
            )
        for eps, ref in zip(epsilons, reference):
            exact = max(hockey_stick(laws[0], laws[1], eps), hockey_stick(laws[1], laws[0], eps))
            with mpmath.workdps(60):
                assert ref <= exact * (1 + mpmath.mpf(10) ** -TIGHT)
                largest_gap = max(largest_gap, (exact - ref) / exact if exact > 0 else 0)
            if k == 3:
                assert _close(exact, ref)
    if k >= 4:
        assert largest_gap > 1e-4


@pytest.mark.parametrize("others_on_x0", [False, True], ids=["off-x0-x1", "all-on-x0"])
@pytest.mark.parametrize("n, k, eps0", [(40, 3, 1.0), (30, 10, 4.0), (25, 4, 0.1), (30, 2, 2.0)])
def test_pair_reference_integer_sums_are_the_mpmath_sums(n, k, eps0, others_on_x0):
    """The pair references' exact integer sums (what the tests use) against the all-mpmath sum of the
    same gaps: 50 digits where the value is not 0, exactly 0 where it is (eps = eps0 and above). A
    probe: a value off by 10^-45 is told apart at that tolerance."""
    if k == 2 and not others_on_x0:
        return  # the off-x0-x1 family is empty for k = 2 (test_pair_marginal_refuses_k_2)
    epsilons = [0.0, 0.001, 0.1 * eps0, 0.5 * eps0, 0.99 * eps0, eps0, eps0 + 1.0]
    fast = _pair_reference(epsilons, eps0, n, k, REFERENCE_DPS, others_on_x0)
    plain = _pair_reference_plain(epsilons, eps0, n, k, REFERENCE_DPS, others_on_x0)
    assert [value == 0 for value in fast] == [value == 0 for value in plain] == [False] * 5 + [True] * 2
    assert all(_relative_close(a, b, digits=50, floor_digits=400) for a, b in zip(fast, plain))
    with mpmath.workdps(REFERENCE_DPS):
        planted = [value * (1 + mpmath.mpf(10) ** -45) for value in plain[:5]]
    assert not any(_relative_close(a, b, digits=50, floor_digits=400) for a, b in zip(fast, planted))


def test_pair_marginal_refuses_k_2():
    with pytest.raises(ValueError, match="k = 2"):
        pair_marginal_reference_mpmath(0.1, 1.0, 10, 2)


@pytest.mark.parametrize("n, k, eps0", [(30, 5, 1.0), (60, 10, 0.49), (40, 2, 2.0)])
def test_dp_accounting_pld_brackets_reference(n, k, eps0):
    """dp_accounting's PLD of the explicit weak view (b, a, c): pessimistic >= reference >= optimistic."""
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
    for eps, ref in zip(epsilons, weak_adversary_reference_mpmath(epsilons, eps0, n, k)):
        ref = float(ref)
        pessimistic = max(d.get_delta_for_epsilon(eps) for d in plds[True])
        optimistic = max(d.get_delta_for_epsilon(eps) for d in plds[False])
        assert optimistic <= ref * (1 + 1e-9) + 1e-15 and ref <= pessimistic * (1 + 1e-9) + 1e-15
        assert pessimistic - optimistic <= 0.05 * ref + 1e-12  # the bracket is informative


@pytest.mark.parametrize("n, k, eps0", [(5, 2, 1.0), (6, 3, 0.4), (5, 4, 2.0), (4, 5, 1.0)])
def test_all_on_x0_reference_is_the_exact_full_histogram_delta(n, k, eps0):
    """Dataset "every other user holds x0": brute-force full histogram == the pair reference."""
    epsilons = [0.0, 0.1, 0.4, 0.9 * eps0, eps0]
    reference = all_on_x0_reference_mpmath(epsilons, eps0, n, k)
    laws = [
        histogram_distribution_of_counts(
            tuple([n - 1 + (x == 0), int(x == 1)] + [0] * (k - 2)), k, epsilon_local=eps0
        )
        for x in (0, 1)
    ]
    for eps, ref in zip(epsilons, reference):
        exact = max(hockey_stick(laws[0], laws[1], eps), hockey_stick(laws[1], laws[0], eps))
        assert _close(exact, ref, 38)
    assert reference[-1] == 0  # exactly, at eps = eps0


def test_all_on_x0_reference_agrees_with_histogram_exact():
    """Two independent evaluations of the same dataset at moderate n (histogram-exact: float, log space)."""
    from shuffledp.accounting import get_accountant

    for n, k, eps0 in [(100, 10, 4.0), (80, 2, 1.0), (60, 3, 0.3)]:
        epsilons = [0.0, 0.1 * eps0, 0.5 * eps0, 0.875 * eps0]
        ours = get_accountant(
            "histogram-exact", epsilon_local=eps0, n_users=n, k=k, n_x0=n - 1, direction="both"
        ).log_delta_for_epsilon(epsilons)
        for value, ref in zip(ours, all_on_x0_reference_mpmath(epsilons, eps0, n, k)):
            assert abs(value - float(mpmath.log(ref))) <= 1e-9
