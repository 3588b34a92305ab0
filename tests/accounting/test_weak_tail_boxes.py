"""The weak view's composed tail at large n: boxes of (s, d, m) (shuffledp.accounting.views.weak.tail_boxes).

Checks: the boxes' moment-generating function dominates the exact pair's at several orders (and a planted
box whose mass or loss is too small is caught by the same check); where the existing paths also apply,
the boxes' composed delta is at least the every-outcome one and close to it (and close to the
rectangles'); at n = 10^6 the composed delta is certified far below the PLD's floor.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from shuffledp.accounting import ShuffleSetting
from shuffledp.accounting.composition import PLD_FLOOR, compose
from shuffledp.accounting.numerics.composed_tail import epsilon_bound, log_delta_bound
from shuffledp.accounting.views.weak import tail as weak_tail
from shuffledp.accounting.views.weak import tail_boxes

ORDERS = (0.05, 0.5, 2.0, 8.0, 32.0, 128.0)


def _exact_pair(n: int, k: int, e0: float):
    """log P and log Q of every outcome (a, c, m) of the weak view (multinomial, enumerated)."""
    q = 1.0 / (math.exp(e0) + k - 1.0)
    a, c, m = np.meshgrid(*(np.arange(n + 1.0),) * 3, indexing="ij")
    a, c, m = a.ravel(), c.ravel(), m.ravel()
    rest = n - a - c - m
    ok = rest >= 0
    a, c, m, rest = a[ok], c[ok], m[ok], rest[ok]
    with np.errstate(divide="ignore"):
        log_mult = (
            gammaln(n + 1.0)
            - gammaln(a + 1.0)
            - gammaln(c + 1.0)
            - gammaln(m + 1.0)
            - gammaln(rest + 1.0)
            + (a + c) * math.log(q)
            + (m * math.log((k - 2) * q) if k > 2 else np.where(m > 0, -np.inf, 0.0))
            + rest * math.log1p(-k * q)
        )
        beta = math.expm1(e0)
        log_p = log_mult + np.log(a + c + m + beta * a) - math.log(n)
        log_q = log_mult + np.log(a + c + m + beta * c) - math.log(n)
    return log_p, log_q


def _exact_log_mgf(log_p, log_q, q: float, lam: float):
    """log sum P'^(1 + lam) Q'^(-lam) of REMOVE (P', Q') = (q P + (1 - q) Q, Q) and of ADD = (Q, P')."""
    with np.errstate(divide="ignore"):
        mixed = np.logaddexp(math.log(q) + log_p, (math.log1p(-q) if q < 1 else -np.inf) + log_q)
    keep = np.isfinite(mixed) & np.isfinite(log_q)
    mixed, log_q = mixed[keep], log_q[keep]
    remove = logsumexp((1.0 + lam) * mixed - lam * log_q)
    add = logsumexp((1.0 + lam) * log_q - lam * mixed)
    return float(remove), float(add)


def _dominates(rounds, log_p, log_q, q: float) -> bool:
    """Whether every tail round's log M(lam) is at least the exact pair's at each of ORDERS."""
    for lam in ORDERS:
        exact = _exact_log_mgf(log_p, log_q, q, lam)
        for tail, value in zip(rounds, exact):
            if tail.log_mgf(lam) < value - 1e-9 * max(1.0, abs(value)):
                return False
    return True


CASES = [(40, 2, 1.0, 1.0), (30, 3, 1.0, 1.0), (30, 4, 2.0, 0.3), (40, 2, 0.5, 0.1)]


@pytest.mark.parametrize("n,k,e0,q", CASES)
def test_boxes_mgf_dominates_the_exact_pair(n, k, e0, q):
    """The boxes' MGF (losses their box's largest, masses the bounds) is at least the pair's own at every
    order tried, both directions, with and without subsampling."""
    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    rounds = weak_tail.tail_rounds(setting, q, 1e-4, 1, max_pairs=0)  # the boxes, even at this size
    log_p, log_q = _exact_pair(n, k, e0)
    assert _dominates(rounds, log_p, log_q, q)


@pytest.mark.parametrize("plant", ["mass", "loss"])
def test_probe_a_planted_box_too_light_or_too_low_breaks_domination(plant, monkeypatch):
    """A box whose mass bound is too small (halved) or whose loss is too low (the largest losses lowered
    by 0.05) makes the check of the MGF fail."""
    n, k, e0, q = CASES[1]
    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    block = tail_boxes._block

    def planted(*args, **kwargs):
        high, low, log_p, log_q = block(*args, **kwargs)
        if plant == "mass":
            log_p = log_p - math.log(2.0)
        else:
            high = np.where(high > 0.5 * e0, high - 0.05, high)
        return high, low, log_p, log_q

    monkeypatch.setattr(tail_boxes, "_block", planted)
    rounds = weak_tail.tail_rounds(setting, q, 1e-4, 1, max_pairs=0)
    log_p, log_q = _exact_pair(n, k, e0)
    assert not _dominates(rounds, log_p, log_q, q)


def _composed(setting, q, T, **kwargs):
    rounds = weak_tail.tail_rounds(setting, q, 1e-4, T, **kwargs)
    epsilons = (0.25, 0.5, 1.0, 2.0)
    deltas = [max(log_delta_bound([r], e) for r in rounds) for e in epsilons]
    epsilons_at = [max(epsilon_bound([r], math.log(d)) for r in rounds) for d in (1e-15, 1e-50, 1e-300)]
    return np.array(deltas), np.array(epsilons_at)


def test_boxes_against_every_outcome_and_rectangles(monkeypatch):
    """Where the existing paths apply, the boxes' composed delta (T = 10) is at least the every-outcome
    path's (both valid: each box's loss and mass bound its outcomes') and within 1e-8 of it in log delta;
    against the rectangles of (a, m) (another upper bound, neither above the other everywhere) within
    1e-4 in log delta and 1e-6 relative in epsilon at 1e-15..1e-300."""
    setting = ShuffleSetting(epsilon_local=1.0, n_users=300, k=2)
    outcomes, eps_outcomes = _composed(setting, 1.0, 10)
    boxes, eps_boxes = _composed(setting, 1.0, 10, max_pairs=0)
    assert np.all(boxes >= outcomes - 1e-12)
    assert np.all(boxes - outcomes <= 1e-8)
    assert np.all(eps_boxes >= eps_outcomes * (1.0 - 1e-12)) and np.all(
        eps_boxes <= eps_outcomes * (1.0 + 1e-8)
    )

    setting = ShuffleSetting(epsilon_local=1.0, n_users=200, k=3)
    monkeypatch.setattr(weak_tail, "MAX_ENTRIES", 0)  # rectangles of (a, m)
    rectangles, eps_rectangles = _composed(setting, 1.0, 10)
    boxes, eps_boxes = _composed(setting, 1.0, 10, max_pairs=0)
    assert np.all(np.abs(boxes - rectangles) <= 1e-4)
    assert np.all(np.abs(eps_boxes / eps_rectangles - 1.0) <= 1e-6)


@pytest.mark.slow
def test_n_1e6_certified_far_below_the_pld_floor():
    """n = 10^6, k = 2, T = 10: the tail now applies (the (s, a) pairs are 10^9, far beyond MAX_PAIRS); the
    delta at a large epsilon is finite, below the PLD floor's values and below 1e-100, and epsilon at
    delta = 1e-300 is finite (and above epsilon at 1e-15)."""
    composed = compose("weak-adversary", epsilon_local=1.0, n_users=10**6, k=2, compositions=10)
    assert composed.has_tail_bound and composed.resolved_delta == 0.0
    floor_eps = composed.epsilon_for_delta(PLD_FLOOR)
    log_delta = float(composed.log_delta_for_epsilon(np.array([4.0 * floor_eps]))[0])
    assert math.isfinite(log_delta) and log_delta < math.log(PLD_FLOOR) and log_delta < math.log(1e-100)
    deep = composed.epsilon_for_delta(1e-300)
    assert math.isfinite(deep) and deep > composed.epsilon_for_delta(1e-15) > floor_eps


def test_boxes_refused_beyond_their_budget():
    """Where even the boxes are too many (n = 10^4 without subsampling, k = 4) the view has no tail
    (the PLD's floor stays); subsampled at q = 0.01 the same view has one."""
    setting = ShuffleSetting(epsilon_local=1.0, n_users=10**4, k=4)
    assert weak_tail.tail_rounds(setting, 1.0, 1e-4, 1) is None
    assert not weak_tail.has_boxes(setting, 1.0, weak_tail.FINEST_WIDTH)
    assert weak_tail.has_boxes(setting, 0.01, weak_tail.FINEST_WIDTH)
