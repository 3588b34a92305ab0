"""k = 3 exact worst case by branch and bound over blocks of datasets (views/k3_blocks.py).

References, each able to fail:
* brute force, 50 digits: each block's bound must be above the exact delta of every dataset in it
  (``brute_force.histogram_distribution_of_counts``), and the block of every dataset must equal Koskela
  et al.'s weak adversary by literal enumeration of blanket bits (``weak_adversary_view_bruteforce``);
* the enumeration of every dataset (``worst_upper.k3_worst_case``, itself checked against brute force
  for n <= 30 in test_worst_case_exact.py) must equal the block search where both run;
* a search that has seen other epsilons (screening) must give a fresh search's results.
"""

from __future__ import annotations

import math

import mpmath
import pytest
from brute_force import histogram_distribution_of_counts, hockey_stick, weak_adversary_view_bruteforce

from shuffledp.accounting import get_accountant
from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.exact.enumeration import k3_worst_case, pair_laws, stack_laws
from shuffledp.accounting.worst_case.k3.blocks import MAX_USERS_K3_BLOCKS, Block, K3BlockSearch


def _exact(n, a, b, e0, eps):
    """50-digit forward delta of the dataset (a on x0, b on x1, the rest on x2)."""
    m = n - 1 - a - b
    P = histogram_distribution_of_counts((a + 1, b, m), 3, epsilon_local=mpmath.mpf(e0))
    Q = histogram_distribution_of_counts((a, b + 1, m), 3, epsilon_local=mpmath.mpf(e0))
    return float(hockey_stick(P, Q, mpmath.mpf(eps)))


@pytest.mark.parametrize("n,e0,f", [(5, 0.5, 0.5), (6, 2.0, 0.3), (6, 1.0, 0.9), (7, 4.0, 0.5)])
def test_every_block_is_above_each_of_its_datasets(n, e0, f):
    eps = f * e0
    search = K3BlockSearch(n_users=n, epsilon_local=e0)
    exact = {(a, b): _exact(n, a, b, e0, eps) for a in range(n) for b in range(n - a)}
    blocks = [
        Block(a1, a2, b1, b2)
        for a1 in range(n)
        for a2 in range(a1, n)
        for b1 in range(n - a1)
        for b2 in range(b1, n - a1)
    ]
    for block in blocks:
        inside = [
            value
            for (a, b), value in exact.items()
            if block.a1 <= a <= block.a2 and block.b1 <= b <= block.b2
        ]
        bound = (
            search._bound(block, eps)
            if block.a1 != block.a2 or block.b1 != block.b2
            else search._leaf(block.a1, block.b1, eps)[0]
        )
        assert max(inside) <= bound * (1 + 1e-12), (block, max(inside), bound)
    for (a, b), value in exact.items():  # a leaf is the dataset's exact delta
        upper, lower = search._leaf(a, b, eps)
        assert (
            lower <= value * (1 + 1e-12)
            and value <= upper * (1 + 1e-12)
            and upper == pytest.approx(value, rel=1e-11)
        )


@pytest.mark.parametrize("n,e0,eps", [(4, 1.0, 0.5), (6, 2.0, 1.0), (5, 0.5, 0.1)])
def test_the_block_of_every_dataset_is_the_weak_adversary(n, e0, eps):
    search = K3BlockSearch(n_users=n, epsilon_local=e0)
    weak = float(weak_adversary_view_bruteforce(eps, e0, n, 3))
    assert search._bound(Block(0, n - 1, 0, n - 1), eps) == pytest.approx(weak, rel=1e-10)


@pytest.mark.parametrize("n,e0", [(10, 0.5), (25, 1.0), (40, 2.0), (64, 4.0), (64, 0.5)])
def test_equal_to_the_enumeration_of_every_dataset(n, e0):
    search = K3BlockSearch(n_users=n, epsilon_local=e0)
    # every dataset's law, built once for the three epsilons (k3_worst_case builds these very laws when
    # given none: p and q as it forms them)
    krr = KrrParams.of(e0, 3)
    laws = stack_laws(pair_laws(n, math.exp(krr.log_p), math.exp(krr.log_q)))
    for f in (0.1, 0.5, 0.9):
        mine, every = search.worst(f * e0), k3_worst_case(f * e0, n_users=n, epsilon_local=e0, laws=laws)
        assert mine.upper == pytest.approx(every.upper, rel=1e-12) and mine.lower == pytest.approx(
            every.lower, rel=1e-12
        )
        assert mine.lower <= every.upper and every.lower <= mine.upper


def test_equal_to_the_enumeration_above_its_range():
    n, e0, eps = 72, 1.0, 0.45  # enumeration: ~n^4 / 2 doubles, still affordable here
    mine, every = (
        K3BlockSearch(n_users=n, epsilon_local=e0).worst(eps),
        k3_worst_case(eps, n_users=n, epsilon_local=e0),
    )
    assert mine.upper == pytest.approx(every.upper, rel=1e-12) and mine.argmax == every.argmax


@pytest.mark.parametrize("n,e0", [(30, 1.0), (40, 4.0)])
def test_screening_by_earlier_epsilons_changes_no_result(n, e0):
    shared = K3BlockSearch(n_users=n, epsilon_local=e0)
    for f in (0.5, 0.2, 0.9, 0.35, 0.5, 0.1, 0.99, 0.6):
        seen, fresh = shared.worst(f * e0), K3BlockSearch(n_users=n, epsilon_local=e0).worst(f * e0)
        assert seen == fresh, (f, seen, fresh)
    eps, fresh = 0.6 * e0, K3BlockSearch(n_users=n, epsilon_local=e0)
    for block in shared._seen:  # the premise: a bound at a smaller epsilon bounds it at eps
        screen = shared._screen(block, eps)
        now = (
            fresh._bound(block, eps)
            if block.a1 != block.a2 or block.b1 != block.b2
            else fresh._leaf(block.a1, block.b1, eps)[0]
        )
        assert screen is None or screen >= now, (block, screen, now)


def test_accountants_close_the_bracket_above_the_enumeration():
    n, e0 = 100, 2.0
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=3)
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=3)
    weak = get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=3)
    e_hi, e_lo = upper.epsilon_for_delta(1e-6), lower.epsilon_for_delta(1e-6)
    assert e_lo <= e_hi <= e_lo * (1 + 1e-9)
    # with the weak adversary as the upper end the bracket here is 1.025 x (a row of the bracket's goal grid)
    assert weak.epsilon_for_delta(1e-6) > 1.02 * e_hi


@pytest.mark.parametrize("n", [1, MAX_USERS_K3_BLOCKS + 1])
def test_bad_n_is_one_line(n):
    with pytest.raises(
        ValueError, match=r"^`n_users` must be in \[2, 200\] for the k = 3 block search; got -?\d+\.$"
    ):
        K3BlockSearch(n_users=n, epsilon_local=1.0)
