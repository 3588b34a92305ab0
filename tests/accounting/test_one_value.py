"""The whole-histogram delta of "every other user on x2" at any n (views/one_value.py).

References, each able to fail:
* brute force: the exact law of the shuffled histogram of both datasets, enumerated in 50-digit mpmath
  (``brute_force.histogram_distribution_of_counts``), for n <= 7 and k in {3, 4, 5};
* an independent code path: :func:`shuffledp.accounting.worst_case.exact.enumeration.third_value_delta` (the
  three-count law built by convolution, summed cell by cell) at n up to 150;
* an independent summation in the other conditioning order (h2, then t = h0 + h1, then h0 summed
  term by term with scipy's gammaln) at n = 400.
The value is a partial sum of positive terms, so it may only fall short of the truth: each comparison
is one-sided beyond a 1e-9 relative allowance for rounding.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from brute_force import histogram_distribution_of_counts, hockey_stick
from scipy.special import gammaln, logsumexp

from shuffledp.accounting import get_accountant
from shuffledp.accounting.worst_case.exact.enumeration import third_value_delta
from shuffledp.accounting.worst_case.families import third_value as one_value
from shuffledp.accounting.worst_case.families.third_value import OneValueView


def _brute(n, k, e0, eps):
    rest = [0] * (k - 3)
    P = histogram_distribution_of_counts([1, 0, n - 1] + rest, k, epsilon_local=e0)
    Q = histogram_distribution_of_counts([0, 1, n - 1] + rest, k, epsilon_local=e0)
    return float(hockey_stick(P, Q, mpmath.mpf(eps)))


@pytest.mark.parametrize(
    "n,k,e0,f",
    [
        (n, k, e0, f)
        for n in (1, 2, 4, 7)
        for k in (3, 4, 5)
        for e0 in (0.5, 2.0, 4.0)
        for f in (0.1, 0.5, 0.9)
    ],
)
def test_equals_brute_force(n, k, e0, f):
    truth = _brute(n, k, e0, f * e0)
    value = math.exp(OneValueView(n_users=n, k=k, epsilon_local=e0).log_delta(f * e0))
    assert value <= truth * (1 + 1e-9) + 1e-300
    assert value >= truth * (1 - 1e-9), (value, truth)


@pytest.mark.parametrize(
    "n,k,e0,f",
    [(30, 4, 1.0, 0.5), (60, 4, 0.5, 0.6), (100, 10, 4.0, 0.75), (150, 100, 8.0, 0.75), (120, 10, 2.0, 0.2)],
)
def test_equals_the_convolved_three_count_law(n, k, e0, f):
    other = third_value_delta(
        f * e0, n_users=n, k=k, epsilon_local=e0
    )  # a certified lower value of the same delta
    value = math.exp(OneValueView(n_users=n, k=k, epsilon_local=e0).log_delta(f * e0))
    assert other * (1 - 1e-12) <= value <= other * (1 + 1e-9), (value, other)


def _other_order(n, k, e0, eps):
    """log delta by h2 ~ Bin(n, p), t | h2 ~ Bin(n - h2, 2 / (k - 1)), h0 | t ~ Bin(t, 1/2), summed term by term."""
    E = math.exp(e0)
    q = 1.0 / (E + k - 1)
    p, r, ee = E * q, 2.0 / (k - 1), math.exp(eps)

    def log_binom(x, N, pi):
        return (
            gammaln(N + 1)
            - gammaln(x + 1)
            - gammaln(N - x + 1)
            + x * math.log(pi)
            + (N - x) * math.log1p(-pi)
        )

    parts = []
    for h2 in range(n + 1):
        m = n - h2
        t = np.arange(m + 1.0)[:, None]
        a = np.arange(m + 1.0)[None, :]
        ok = a <= t
        y = a - ee * (t - a) + math.expm1(eps) * h2 / E - math.expm1(eps) * n / math.expm1(e0)
        use = ok & (y > 0)
        if use.any():
            log_w = (
                log_binom(h2, n, p)
                + log_binom(t, m, r)
                + np.where(ok, gammaln(t + 1) - gammaln(a + 1) - gammaln(np.maximum(t - a, 0) + 1), 0)
                + t * math.log(0.5)
            )
            parts.append(logsumexp(log_w[use], b=y[use]))
    return logsumexp(parts) + math.log(math.expm1(e0) / n)


@pytest.mark.parametrize("k,e0,eps", [(10, 2.0, 1.0), (10, 1.0, 0.1), (100, 8.0, 6.5)])
def test_equals_the_other_conditioning_order(k, e0, eps):
    reference = _other_order(400, k, e0, eps)
    value = OneValueView(n_users=400, k=k, epsilon_local=e0).log_delta(eps)
    assert value <= reference + 1e-9 and value >= reference - 1e-9, (value, reference)


def test_a_truncated_sum_stays_below(monkeypatch):
    """Deep in the tail the first rectangle holds no positive term: capped there, the sum is 0 (a lower
    value), uncapped it grows to the terms."""
    full = OneValueView(n_users=2000, k=10, epsilon_local=2.0).log_delta(1.9)
    monkeypatch.setattr(one_value, "MAX_CELLS_THIRD_VALUE", 10)
    part = OneValueView(n_users=2000, k=10, epsilon_local=2.0).log_delta(1.9)
    assert np.isfinite(full) and part < full


def test_zero_at_and_above_eps0():
    view = OneValueView(n_users=500, k=10, epsilon_local=1.0)
    assert view.log_delta(1.0) == -np.inf and view.log_delta(2.0) == -np.inf


@pytest.mark.parametrize(
    "n,k,e0,delta",
    [
        (1000, 10, 4.0, 1e-9),
        (1000, 100, 8.0, 1e-12),
        (5000, 10, 1.0, 1e-6),
        (10000, 100, 2.0, 1e-9),
        (300, 4, 2.0, 1e-6),
    ],
)
def test_lower_rises_and_stays_below_the_upper_end(n, k, e0, delta):
    lower = get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k)
    eps = lower.epsilon_for_delta(delta)
    members = lower.member_log_deltas(eps * 0.999)
    assert members["one value"] >= members["none"]  # the whole histogram of the "none" dataset class
    upper = get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k).epsilon_for_delta(delta)
    assert eps <= upper * (1 + 1e-9), (eps, upper)


def test_needs_a_third_value():
    with pytest.raises(ValueError, match="`k` must be >= 3"):
        OneValueView(n_users=5, k=2, epsilon_local=1.0)
