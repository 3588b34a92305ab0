"""The weak adversary's summed delta at large eps0, where cancellations put it below the truth.

Cause: the rows formed s - a_at(m) and s - t* (the distance from the top of a row to the threshold, about
s e^-eps) as differences of numbers near s, and 1 - theta of the S-tail bound as a difference of numbers near
1; once e^-eps nears 2^-52 every digit was lost (delta 0.435 instead of 0.978 at eps0 = 38, a log delta of
+8.3 at eps0 = 50, 1e-10 low at eps0 = 15). Each check below failed before the fix.

Reference: the weak pair summed outcome by outcome in 50-digit arithmetic, P(a, c, m) = Mult_n(a, c, m)
(a + c + m + beta a) / n and Q with beta c (Koskela et al. 2021, Def. 3; derivation in the view's module
docstring), itself checked against the literal enumeration of blanket bits and reports
(``weak_adversary_view_bruteforce``) at n = 4.
"""

from __future__ import annotations

import functools

import mpmath
import numpy as np
import pytest
from brute_force import weak_adversary_view_bruteforce

from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.weak import view as weak_view

FRACTIONS = (0.3, 0.5, 0.8, 0.9, 0.95, 0.99)


@functools.cache
def _weak_pair_outcomes(n: int, k: int, e0: float) -> tuple[mpmath.mpf, tuple]:
    """(beta, every outcome (a, c, m) with its multinomial probability), 50 digits: formed once per setting and
    read by every epsilon of it (the same mpf values as formed for each epsilon)."""
    with mpmath.workdps(50):
        e0 = mpmath.mpf(e0)
        q = 1 / (mpmath.e**e0 + k - 1)
        beta, rest, stay = mpmath.e**e0 - 1, (k - 2) * q, 1 - k * q
        outcomes = []
        for a in range(n + 1):
            for c in range(n + 1 - a):
                for m in range(n + 1 - a - c):
                    r = n - a - c - m
                    mult = (
                        mpmath.factorial(n)
                        / (
                            mpmath.factorial(a)
                            * mpmath.factorial(c)
                            * mpmath.factorial(m)
                            * mpmath.factorial(r)
                        )
                        * q ** (a + c)
                        * rest**m
                        * stay**r
                    )
                    outcomes.append((a, c, m, mult))
        return beta, tuple(outcomes)


def weak_pair_delta(n: int, k: int, e0: float, eps: float) -> mpmath.mpf:
    """H_{e^eps}(P || Q) of the weak pair over every (a, c, m), 50 digits (one direction: the pair is symmetric)."""
    with mpmath.workdps(50):
        beta, outcomes = _weak_pair_outcomes(n, k, e0)
        scale = mpmath.e ** mpmath.mpf(eps)
        total = mpmath.mpf(0)
        for a, c, m, mult in outcomes:
            excess = (a + c + m + beta * a) - scale * (a + c + m + beta * c)
            if excess <= 0:
                continue
            total += mult * excess / n
        return total


@pytest.mark.parametrize("e0", [2.0, 3.0])
def test_the_reference_is_the_weak_view(e0):
    n, k = 4, 3
    for eps in (0.1, 0.5 * e0):
        literal = weak_adversary_view_bruteforce(eps, e0, n, k)
        assert float(weak_pair_delta(n, k, e0, eps)) == pytest.approx(float(literal), rel=1e-12)


@pytest.mark.parametrize("n,k", [(10, 3), (12, 10)])
@pytest.mark.parametrize("e0", [12.0, 15.0, 24.0, 38.0, 50.0])
def test_the_summed_weak_delta_is_its_pair_at_large_eps0(n, k, e0):
    """Both evaluation paths (one epsilon alone; four or more together, from shared tables) are at or
    above the exact value of the pair and within 1e-9 of it. Before the fix: 1e-10 low at eps0 = 15,
    0.81 low in log at eps0 = 38 (the joint path returned delta = 0 there), log delta +8.3 at eps0 = 50."""
    eps = np.array(FRACTIONS) * e0
    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    joint = weak_view.WeakView(setting).log_deltas(eps)
    for i, x in enumerate(eps):
        exact = float(mpmath.log(weak_pair_delta(n, k, e0, float(x))))
        alone = float(weak_view.WeakView(setting).log_deltas(np.array([x]))[0])
        for value in (alone, float(joint[i])):
            assert value >= exact - 1e-12, (x, value, exact)  # rounding of the log-space sums only
            assert value <= exact + 1e-9, (x, value, exact)
