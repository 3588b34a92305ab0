"""Tests of ``girgis-rdp-lower`` (Girgis et al. CCS 2021, Thm 3.4) and of the Renyi-DP validity of the
Girgis accountants against brute force.

Truths, independent of the library:

* eq. (10) as printed: 1/(lambda - 1) log(1 + C(lambda, 2)(e^eps0 - 1)^2/(n e^eps0) + sum_{i=3}^{lambda}
  C(lambda, i) ((e^(2 eps0) - 1)/(n e^eps0))^i E[(K - n/(e^eps0 + 1))^i]), K ~ Bin(n, 1/(e^eps0 + 1)), with
  the central moments summed exactly in mpmath;
* brute force (``brute_force.histogram_distribution_of_counts``, 50 digits): the Renyi divergence of the
  shuffled k-RR histogram for every dataset of the other n - 1 users and both directions, and its maximum
  (the order-lambda RDP of the shuffled histogram), and the hockey-stick delta.

Checked: Thm 3.4 equals the divergence of its proof's pair (every other user on x0; u on x1 vs x0) and is
<= the brute-force RDP of shuffled 2-RR on every tiny case; Thm 3.1 and 3.3 (``girgis-rdp``,
``girgis-rdp-simple``, any eps0-LDP randomizer) and eq. (9) as reconstructed (``erlingsson-rdp``) are >= the
brute-force RDP of shuffled k-RR, k = 2, 3.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import pytest
from brute_force import histogram_distribution_of_counts, hockey_stick, other_datasets, true_worst_case_delta

from shuffledp.accounting import BoundKind, get_accountant

LOWER = "girgis-rdp-lower"


def _rdp(name, eps0, n, k=2):
    orders, values = get_accountant(name, epsilon_local=eps0, n_users=n, k=k).rdp()
    return dict(zip(orders.tolist(), values.tolist()))


def _eq10_mpmath(eps0, n, lam, dps=60):
    """Equation (10) as printed, central moments of Bin(n, 1/(e^eps0 + 1)) summed exactly."""
    with mpmath.workdps(dps):
        e = mpmath.exp(mpmath.mpf(eps0))
        p = 1 / (e + 1)
        c = (e**2 - 1) / (n * e)
        pmf = [mpmath.binomial(n, j) * p**j * (1 - p) ** (n - j) for j in range(n + 1)]
        total = 1 + mpmath.binomial(lam, 2) * (e - 1) ** 2 / (n * e)
        for i in range(3, lam + 1):
            moment = mpmath.fsum(w * (j - n * p) ** i for j, w in enumerate(pmf))
            total += mpmath.binomial(lam, i) * c**i * moment
        return float(mpmath.log(total) / (lam - 1))


@pytest.mark.parametrize("eps0,n", [(0.5, 5), (1.0, 20), (2.0, 50), (3.0, 200)])
def test_rdp_equals_equation_10_as_printed(eps0, n):
    ours = _rdp(LOWER, eps0, n)
    for lam in (2, 3, 4, 7, 12):
        assert ours[float(lam)] == pytest.approx(_eq10_mpmath(eps0, n, lam), rel=1e-10)


@functools.lru_cache(maxsize=64)
def _laws(eps0, n, k):
    """[(others' counts, P0, P1)] for every dataset of the other n - 1 users (u on x0 / on x1)."""
    out = []
    for counts in other_datasets(n, k):
        pair = []
        for x in (0, 1):
            full = list(counts)
            full[x] += 1
            pair.append(histogram_distribution_of_counts(tuple(full), k, epsilon_local=eps0))
        out.append((counts, pair[0], pair[1]))
    return out


def _renyi(P, Q, lam):
    with mpmath.workdps(50):
        return mpmath.log(mpmath.fsum(p**lam * Q[o] ** (1 - lam) for o, p in P.items())) / (lam - 1)


@functools.cache
def _worst_rdp(eps0, n, k, lam):
    return float(max(max(_renyi(P0, P1, lam), _renyi(P1, P0, lam)) for _, P0, P1 in _laws(eps0, n, k)))


def test_labels_and_refusals():
    accountant = get_accountant(LOWER, epsilon_local=1.0, n_users=10, k=2)
    assert accountant.kind is BoundKind.LOWER and "k = 2 only" in accountant.scope
    with pytest.raises(ValueError, match=r"`k` must be an integer in \[2, 2\] .*got 3\."):
        get_accountant(LOWER, epsilon_local=1.0, n_users=10, k=3)
    composed = get_accountant(LOWER, epsilon_local=1.0, n_users=10, k=2, compositions=3)
    assert composed.rdp()[1][0] == pytest.approx(3 * accountant.rdp()[1][0])
    with pytest.raises(ValueError, match=r"`compositions` must be an integer in \[1, 1\]"):
        composed.log_delta_for_epsilon([0.1])


@pytest.mark.parametrize("eps0,n", [(0.5, 4), (1.0, 6), (2.0, 5)])
def test_rdp_is_the_divergence_of_its_proof_pair(eps0, n):
    P0, P1 = (histogram_distribution_of_counts((n - 1 + x, 1 - x), 2, epsilon_local=eps0) for x in (1, 0))
    ours = _rdp(LOWER, eps0, n)
    for lam in (2, 3, 5, 9):
        assert ours[float(lam)] == pytest.approx(float(_renyi(P1, P0, lam)), rel=1e-10)


TINY = [(eps0, n, lam) for eps0 in (0.5, 1.0, 2.0, 3.0) for n in (2, 3, 4, 5, 6) for lam in (2, 3, 5, 10)]


def _counts(name, k, cases, upper):
    """(violations, total): cases where the bound is on the wrong side of the brute-force RDP. The order
    used is the accountant's order nearest lambda (girgis-rdp-simple evaluates a grid of real orders)."""
    bad = 0
    rdp = {}  # the accountant's orders and values, computed once per (eps0, n) (they do not depend on lambda)
    for eps0, n, lam in cases:
        if (eps0, n) not in rdp:
            rdp[eps0, n] = _rdp(name, eps0, n, k)
        ours = rdp[eps0, n]
        order = min(ours, key=lambda o: abs(o - lam))
        truth = _worst_rdp(eps0, n, k, mpmath.mpf(order))
        bad += (ours[order] < truth * (1 - 1e-9)) if upper else (ours[order] > truth * (1 + 1e-9))
    return bad, len(cases)


def test_validity_counts_rdp():
    """The counts recorded in docs/decisions/girgis.md ("Validity, measured"): no violation."""
    assert _counts(LOWER, 2, TINY, upper=False) == (0, 80)
    for name in ("girgis-rdp", "girgis-rdp-simple", "erlingsson-rdp"):
        for k in (2, 3):
            assert _counts(name, k, TINY, upper=True) == (0, 80)


@pytest.mark.parametrize("eps0,n", [(0.5, 4), (1.0, 6), (3.0, 5)])
def test_delta_is_the_pair_delta_and_below_the_worst_case(eps0, n):
    P0, P1 = (histogram_distribution_of_counts((n - 1 + x, 1 - x), 2, epsilon_local=eps0) for x in (1, 0))
    accountant = get_accountant(LOWER, epsilon_local=eps0, n_users=n, k=2)
    for eps in (0.0, 0.1, 0.3):
        pair = float(max(hockey_stick(P1, P0, eps), hockey_stick(P0, P1, eps)))
        ours = float(np.exp(accountant.log_delta_for_epsilon([eps])[0]))
        assert ours == pytest.approx(pair, rel=1e-10, abs=1e-300)
        assert ours <= float(true_worst_case_delta(eps, eps0, n, 2).delta) * (1 + 1e-9)


@pytest.mark.parametrize("eps0,n", [(1.0, 300_000), (0.5, 10**7), (3.0, 10**6)])
def test_large_n_matches_closed_central_moments(eps0, n):
    """Orders 2, 3, 4 in closed form from the binomial's central moments (eq. (10) with mu_2 = npq,
    mu_3 = npq(q - p), mu_4 = npq(1 + 3(n - 2)pq)), in mpmath: the window (n > 2 10^5) and the
    cancellation-free sum keep ~1e-12 relative precision where the RDP is ~1e-6..1e-9."""
    _, values = get_accountant(LOWER, epsilon_local=eps0, n_users=n, k=2).rdp()
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps0))
        p = 1 / (e + 1)
        q = 1 - p
        c = (e**2 - 1) / (n * e)
        mu = {2: n * p * q, 3: n * p * q * (q - p), 4: n * p * q * (1 + 3 * (n - 2) * p * q)}
        for lam in (2, 3, 4):
            inside = 1 + sum(mpmath.binomial(lam, i) * c**i * mu[i] for i in range(2, lam + 1))
            assert values[lam - 2] == pytest.approx(float(mpmath.log(inside) / (lam - 1)), rel=1e-11)
