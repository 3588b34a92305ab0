"""``worst-case-upper``: certified maximum over datasets for k = 2 (branch and bound over n_x0).

References, each able to fail: (i) brute force over every dataset of the other users and both
directions (``brute_force.true_worst_case_delta``, 50-digit enumeration), from both sides; (ii) an
independent scan of ``biswas-exact`` (SingleBinLaw: for k = 2 the x0 count is the whole histogram)
over every n_x0 and both directions at moderate n; (iii) the block view with every user's bit known
(U(0, n - 1)) against ``weak-adversary`` (a separate implementation of the same view).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute_force import true_worst_case_delta

from shuffledp.accounting import get_accountant
from shuffledp.accounting.binary_worst_case import _Block, binary_forward_delta

TINY = [(n, e0, eps) for n in range(2, 8) for e0 in (0.5, 1.0, 2.0, 4.0)
        for eps in (0.0, 0.1, 0.5, 1.0, 3.0) if eps < e0]


@pytest.mark.parametrize("n,e0,eps", TINY)
def test_k2_equals_brute_force_worst_case(n, e0, eps):
    """Upper bound on, and within 1e-9 of, the true worst case over every dataset (both directions)."""
    truth = float(true_worst_case_delta(eps, e0, n, 2).delta)
    value = float(get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2).delta_for_epsilon([eps])[0])
    assert truth * (1 - 1e-12) <= value <= truth * (1 + 1e-9) + 1e-300, (value, truth)


@pytest.mark.parametrize("n,e0", [(40, 1.0), (61, 2.0), (50, 4.0)])
def test_k2_matches_scan_of_biswas_exact_over_every_n_x0(n, e0):
    epsilons = np.array([0.05, 0.2, 0.5]) * e0
    scan = np.max([get_accountant("biswas-exact", epsilon_local=e0, n_users=n, k=2, n_x0=j, direction="both")
                   .delta_for_epsilon(epsilons) for j in range(n)], axis=0)
    value = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2).delta_for_epsilon(epsilons)
    assert np.all(value >= scan * (1 - 1e-9)), (value, scan)
    assert np.all(value <= scan * (1 + 1e-8) + 1e-300), (value, scan)


def test_block_view_bounds_every_dataset_in_the_block_and_all_bits_is_the_weak_adversary():
    n, e0, eps = 30, 2.0, 0.4
    log_den = float(np.logaddexp(e0, 0.0))
    log_p, log_q = e0 - log_den, -log_den
    p, q = math.exp(log_p), math.exp(log_q)
    single = [_Block(j, j, n, log_p, log_q).upper(p, q, eps)[1] for j in range(n)]
    for a, b in [(0, 3), (5, 17), (20, 29)]:
        upper = _Block(a, b, n, log_p, log_q).upper(p, q, eps)[0]
        assert upper >= max(single[a:b + 1])
    everything = _Block(0, n - 1, n, log_p, log_q).upper(p, q, eps)[1]
    weak = float(get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=2).delta_for_epsilon([eps])[0])
    assert everything == pytest.approx(weak, rel=1e-10)
    upper, best, _ = binary_forward_delta(eps, n=n, epsilon_local=e0)
    assert best <= max(single) <= upper <= max(single) * (1 + 1e-9)


def test_epsilon_lies_in_the_bracket_and_k3_is_the_weak_adversary():
    n, e0 = 1000, 2.0
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    weak = get_accountant("weak-adversary", epsilon_local=e0, n_users=n, k=2).epsilon_for_delta(1e-6)
    assert lower <= upper <= lower * 1.001 and upper < 0.9 * weak
    eps = [0.0, 0.05, 0.3]
    assert np.array_equal(get_accountant("worst-case-upper", epsilon_local=1.0, n_users=50, k=3).log_delta_for_epsilon(eps),
                          get_accountant("weak-adversary", epsilon_local=1.0, n_users=50, k=3).log_delta_for_epsilon(eps))
