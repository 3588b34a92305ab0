"""Own-value-hit views: a certified k >= 4 worst-case upper bound (views/own_hits.py).

References, each able to fail:
* brute force over EVERY dataset of the other users (a on x0, b on x1, every spread c of the rest) and
  both directions, 50-digit histograms (``brute_force.histogram_distribution_of_counts``): the per-dataset
  bound B(a, b) must be above each of them, the search above the brute-force worst case;
* Koskela et al.'s weak adversary by literal enumeration of blanket bits
  (``brute_force.weak_adversary_view_bruteforce``): theta = 1 at a = b = 0 must equal it;
* the search without pruning (max of B over every (a, b)) must equal the pruned search;
* measured tightness (tiny cases and n = 20), which a looser or broken view would miss.
"""

from __future__ import annotations

import mpmath
import pytest
from brute_force import (
    histogram_distribution_of_counts,
    hockey_stick,
    other_datasets,
    true_worst_case_delta,
    weak_adversary_view_bruteforce,
)

from shuffledp.accounting import get_accountant
from shuffledp.accounting.worst_case.k4.own_hits import MAX_USERS_OWN_HITS, THETAS, OwnHitsSearch


@pytest.mark.parametrize(
    "n,k,e0,f",
    [
        (n, k, e0, f)
        for n, k in ((3, 4), (4, 4), (5, 4), (6, 4), (3, 5), (4, 5), (5, 5))
        for e0 in (0.5, 2.0)
        for f in (0.25, 0.5, 0.9)
    ],
)
def test_every_dataset_and_direction_is_below_its_bound(n, k, e0, f):
    eps = f * e0
    search = OwnHitsSearch(n_users=n, k=k, epsilon_local=e0)
    for counts in other_datasets(n, k):  # (a on x0, b on x1, every spread of the rest)
        a, b = counts[:2]
        law_d = histogram_distribution_of_counts([a + 1, *counts[1:]], k, epsilon_local=mpmath.mpf(e0))
        law_d1 = histogram_distribution_of_counts([a, b + 1, *counts[2:]], k, epsilon_local=mpmath.mpf(e0))
        forward = float(hockey_stick(law_d, law_d1, eps))
        reverse = float(hockey_stick(law_d1, law_d, eps))  # = forward of (b, a): relabel x0 <-> x1
        assert forward <= search.bound(a, b, eps) * (1 + 1e-12), (counts, forward)
        assert reverse <= search.bound(b, a, eps) * (1 + 1e-12), (counts, reverse)


@pytest.mark.parametrize(
    "n,k,e0,eps", [(3, 4, 1.0, 0.5), (5, 4, 0.5, 0.25), (4, 5, 2.0, 1.0), (6, 4, 4.0, 1.0)]
)
def test_theta_one_at_no_one_on_x0_or_x1_is_the_weak_adversary(n, k, e0, eps):
    search = OwnHitsSearch(n_users=n, k=k, epsilon_local=e0)
    weak = float(weak_adversary_view_bruteforce(eps, e0, n, k))
    assert search.bound(0, 0, eps, thetas=(1.0,)) == pytest.approx(weak, rel=1e-10)


@pytest.mark.parametrize(
    "n,k,e0,f", [(6, 4, 1.0, 0.5), (8, 5, 0.5, 0.9), (10, 4, 2.0, 0.8), (12, 6, 4.0, 0.3)]
)
def test_pruned_search_equals_the_maximum_over_every_dataset(n, k, e0, f):
    eps = f * e0
    search = OwnHitsSearch(n_users=n, k=k, epsilon_local=e0)
    result = search.worst(eps)
    every = max(search.bound(a, b, eps) for a in range(n) for b in range(n - a))
    assert result.upper == pytest.approx(every, rel=1e-14) and result.upper >= every * (1 - 1e-15)
    assert search.bound(*result.argmax, eps) == result.upper


@pytest.mark.parametrize("n,k,e0", [(10, 4, 2.0), (12, 5, 1.0), (9, 10, 4.0)])
def test_screening_by_values_at_smaller_epsilons_changes_no_result(n, k, e0):
    """A search that has seen other epsilons prunes with their theta = 1 values (delta is non-increasing in
    epsilon); its results must equal a fresh search's at every epsilon, in any order of the epsilons."""
    epsilons = [f * e0 for f in (0.5, 0.2, 0.89, 0.9, 0.35, 0.5, 0.1, 0.985, 0.99, 0.6)]
    shared = OwnHitsSearch(n_users=n, k=k, epsilon_local=e0)
    for eps in epsilons:
        seen, fresh = shared.worst(eps), OwnHitsSearch(n_users=n, k=k, epsilon_local=e0).worst(eps)
        assert seen.upper == fresh.upper and seen.argmax == fresh.argmax, (eps, seen, fresh)
    fresh = OwnHitsSearch(n_users=n, k=k, epsilon_local=e0)
    for ab in shared._seen:  # every dataset has a value at a smaller epsilon, and it bounds the one at eps
        screen = shared._screen(ab, epsilons[-1])
        assert screen is not None and screen >= fresh._first_term(ab, epsilons[-1])[1], (ab, screen)


# tiny cases: value / truth of weak-adversary and of this bound (measured, brute force)
TIGHTER = [
    (5, 5, 0.5, 0.25, 1.165, 1.066),
    (6, 4, 0.5, 0.25, 1.112, 1.040),
    (6, 4, 1.0, 0.5, 1.077, 1.013),
    (6, 5, 1.0, 0.5, 1.087, 1.032),
]


@pytest.mark.parametrize("n,k,e0,eps,weak_ratio,own_ratio", TIGHTER)
def test_closer_to_the_brute_force_worst_case_than_the_weak_adversary(n, k, e0, eps, weak_ratio, own_ratio):
    truth = float(true_worst_case_delta(eps, e0, n, k).delta)
    value = float(
        get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon([eps])[0]
    )
    weak = float(
        get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon([eps])[0]
    )
    assert truth <= value <= truth * own_ratio, value / truth
    assert weak >= truth * weak_ratio * (1 - 1e-3) and value < weak


def test_bracket_closes_at_twenty_users_where_the_weak_adversary_does_not():
    """k = 4, n = 20, eps0 = 1, delta = 1e-6: epsilon of the certified upper bound over that of the
    certified lower bound (measured 1.00000; the weak adversary 1.0209)."""
    kwargs = {"epsilon_local": 1.0, "n_users": 20, "k": 4}
    lower = get_accountant("worst-case-lower", **kwargs).epsilon_for_delta(1e-6)
    upper = get_accountant("worst-case-upper", **kwargs).epsilon_for_delta(1e-6)
    weak = get_accountant("weak-adversary", **kwargs).epsilon_for_delta(1e-6)
    assert lower <= upper <= lower * 1.0001 and weak > lower * 1.02


def test_never_above_the_weak_adversary_and_weak_beyond_the_range():
    eps = [0.0, 0.1, 0.4, 0.8, 1.5]
    # beyond the range: k = 5 (k = 4 is searched by the block search up to n = 50, tests/accounting/test_k4_blocks.py)
    for n, k in ((7, 4), (9, 10), (MAX_USERS_OWN_HITS + 1, 5)):
        upper = get_accountant("worst-case-upper", epsilon_local=2.0, n_users=n, k=k).log_delta_for_epsilon(
            eps
        )
        weak = get_accountant("weak-adversary", epsilon_local=2.0, n_users=n, k=k).log_delta_for_epsilon(eps)
        assert all(u <= w for u, w in zip(upper, weak)), (n, k, upper, weak)
        if n > MAX_USERS_OWN_HITS:
            assert upper == pytest.approx(weak, rel=1e-12, abs=1e-12)


def test_thetas_include_both_ends():
    assert THETAS[0] == 0.0 and THETAS[-1] == 1.0 and list(THETAS) == sorted(THETAS)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"n_users": 5, "k": 3}, "`k` must be >= 4"),
        ({"n_users": MAX_USERS_OWN_HITS + 1, "k": 4}, "`n_users` must be in"),
        ({"n_users": 1, "k": 4}, "`n_users` must be in"),
    ],
)
def test_bad_input_one_line(kwargs, message):
    with pytest.raises(ValueError, match=message):
        OwnHitsSearch(epsilon_local=1.0, **kwargs)
