"""Composed delta down to 1e-300: the Chernoff bound of numerics/composed_tail.py against an
exact log-space convolution of the clones pairs, built here from their definition (Feldman, McMillan,
Talwar 2021, Thm 3.2; the k-RR pair of Koskela et al.) over every outcome, with scipy only.

Reference: each outcome's loss log P - log Q is rounded to a grid of width H up (upper reference) or down
(lower reference), the P-masses summed per bin in log space, and the T-fold convolution done in log
space; the true composed delta lies between the two references (delta is non-decreasing in every loss).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from shuffledp._numerics import row_logsumexp
from shuffledp.accounting import Direction, ShuffleSetting, get_accountant
from shuffledp.accounting.composition import PLD_FLOOR, Round, compose
from shuffledp.accounting.composition_tail import tail_rounds
from shuffledp.accounting.numerics.composed_tail import (
    ORDERS,
    TailRound,
    epsilon_bound,
    log_c,
    log_delta_bound,
)
from shuffledp.accounting.views.derived.pld import direction_bins
from shuffledp.accounting.views.derived.tail import tail_round
from shuffledp.accounting.views.strong import view as strong_view

H = 0.01  # reference grid


def _log_binom(k, n, log_p, log_1mp):
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + k * log_p + (n - k) * log_1mp


def _clones_outcomes(n: int, e0: float, k: int | None):
    """(loss, log P) of every outcome of the clones pair: generic (k None: r = e^-eps0, weight 1) or k-RR."""
    if k is None:
        r, weight = math.exp(-e0), 1.0
    else:
        q_k = 1.0 / (math.exp(e0) + k - 1)
        r, weight = 2.0 * q_k, (math.exp(e0) + 1.0) * q_k
    log_alpha, log_1ma = e0 - math.log1p(math.exp(e0)), -math.log1p(math.exp(e0))
    c = np.repeat(np.arange(n, dtype=float), np.arange(n) + 2)
    x = np.concatenate([np.arange(ci + 2, dtype=float) for ci in range(n)])
    log_c_law = _log_binom(c, n - 1.0, math.log(r), math.log1p(-r))
    with np.errstate(invalid="ignore"):
        b = np.where((x >= 0) & (x <= c), _log_binom(x, c, math.log(0.5), math.log(0.5)), -np.inf)
        bm1 = np.where(
            (x - 1 >= 0) & (x - 1 <= c), _log_binom(x - 1, c, math.log(0.5), math.log(0.5)), -np.inf
        )
    log_p = math.log(weight) + log_c_law + np.logaddexp(log_alpha + bm1, log_1ma + b)
    log_q = math.log(weight) + log_c_law + np.logaddexp(log_alpha + b, log_1ma + bm1)
    loss, log_p = log_p - log_q, log_p
    if weight < 1.0:
        loss, log_p = np.append(loss, 0.0), np.append(log_p, math.log1p(-weight))
    return loss, log_p


def _binned(loss, log_p, up: bool):
    index = (np.ceil(loss / H - 1e-9) if up else np.floor(loss / H + 1e-9)).astype(np.int64)
    lo = int(index.min())
    out = np.full(int(index.max()) - lo + 1, -np.inf)
    order = np.argsort(index, kind="stable")
    index, log_p = index[order], log_p[order]
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    top = np.maximum.reduceat(log_p, starts)  # per-bin maximum, then a scaled sum: log-space per bin
    scaled = np.add.reduceat(np.exp(log_p - np.repeat(top, np.diff(np.r_[starts, index.size]))), starts)
    out[index[starts] - lo] = top + np.log(scaled)
    return lo, out


def _convolve(a, b):
    (lo_a, la), (lo_b, lb) = a, b
    out = np.full(la.size + lb.size - 1, -np.inf)
    for i, value in enumerate(la):
        if value > -np.inf:
            out[i : i + lb.size] = np.logaddexp(out[i : i + lb.size], value + lb)
    return lo_a + lo_b, out


def _power(single, T: int):
    composed = single
    for _ in range(T - 1):
        composed = _convolve(composed, single)
    return composed


@functools.cache
def _clones_reference(n: int, e0: float, k: int | None, T: int, up: bool):
    """The T-fold upper (``up``) or lower reference of the clones pair: computed once per setting, as the
    tests below read the same ones (read-only arrays: a cached value is never changed)."""
    loss, log_p = _clones_outcomes_once(n, e0, k)
    lo, log_mass = _power(_binned(loss, log_p, up), T)
    log_mass.flags.writeable = False
    return lo, log_mass


@functools.cache
def _clones_outcomes_once(n: int, e0: float, k: int | None):
    """_clones_outcomes, computed once per setting (read-only arrays)."""
    loss, log_p = _clones_outcomes(n, e0, k)
    loss.flags.writeable = log_p.flags.writeable = False
    return loss, log_p


def _reference_log_delta(composed, eps: float) -> float:
    lo, log_mass = composed
    s = (lo + np.arange(log_mass.size)) * H
    keep = s > eps
    with np.errstate(divide="ignore"):
        return float(logsumexp(log_mass[keep] + np.log(-np.expm1(eps - s[keep])))) if keep.any() else -np.inf


@pytest.mark.parametrize("name, k", [("clones-krr", 4), ("feldman-numerical", None)])
@pytest.mark.parametrize("T", [1, 8])
def test_composed_delta_is_certified_and_close_down_to_1e_200(name, k, T):
    n, e0 = 1000, 2.0
    upper_ref, lower_ref = _clones_reference(n, e0, k, T, True), _clones_reference(n, e0, k, T, False)
    accountant = compose(name, epsilon_local=e0, n_users=n, k=k or 2, compositions=T)
    directions = tail_rounds(name, [Round(e0, n, k or 2)] * T, 1e-5)  # the Chernoff bound alone (T = 1 too)
    reached, worst = False, -np.inf
    for eps in np.linspace(0.2, T * e0 - 0.05, 12):
        ours = float(accountant.log_delta_for_epsilon(eps)[0])
        low, high = _reference_log_delta(lower_ref, eps), _reference_log_delta(upper_ref, eps)
        if low < math.log(1e-300):
            continue
        reached |= low < math.log(1e-200)
        assert ours >= low - 1e-9, (eps, ours, low)  # an upper bound on the exact composed delta
        chernoff = max(log_delta_bound(d, eps) for d in directions)
        assert chernoff >= low - 1e-9 and chernoff <= high + 4.0, (eps, chernoff, low, high)
        if high < math.log(PLD_FLOOR):  # the Chernoff range: within a factor e^4 of the exact value
            assert ours <= high + 4.0, (eps, ours, high)  # measured: at most e^2.06 (T = 8)
            worst = max(worst, ours - high)
    print(f"{name} T={T}: largest log(ours / upper reference) in the Chernoff range {worst:.2f}")
    assert reached or T < 8


def test_epsilon_down_to_1e_300_is_above_the_exact_one():
    n, e0, T = 1000, 2.0, 8
    lower_ref = _clones_reference(n, e0, 4, T, False)  # the same as the T = 8 clones-krr case above
    accountant = compose("clones-krr", epsilon_local=e0, n_users=n, k=4, compositions=T)
    for log10_delta in (-20, -100, -200, -300):
        eps = accountant.epsilon_for_delta(10.0**log10_delta)
        assert eps < T * e0  # resolved (not the trivial maximum loss)
        # the exact delta at our epsilon is at most the target (the lower reference is below the exact one)
        assert _reference_log_delta(lower_ref, eps) <= log10_delta * math.log(10) + 1e-9


def test_chernoff_pieces():
    # c(lam) is the maximum of (1 - e^-x) e^(-lam x): check at its argmax and a grid
    for lam in (0.01, 1.0, 37.0):
        x = np.linspace(1e-6, 50, 200001)
        assert np.max(-np.expm1(-x) * np.exp(-lam * x)) <= math.exp(log_c(lam)) * (1 + 1e-12)
        at = math.log1p(1.0 / lam)
        assert math.exp(log_c(lam)) == pytest.approx(-math.expm1(-at) * math.exp(-lam * at), rel=1e-12)
    # a pair with an infinite loss: delta never below the infinity mass, eps infinite below it
    r = TailRound(np.array([0.0]), np.array([math.log(1 - 1e-5)]), math.log(1e-5), count=3)
    assert log_delta_bound([r], 10.0) >= math.log(3e-5 * (1 - 2e-5))
    assert epsilon_bound([r], math.log(1e-6)) == math.inf


def _rows_of_a_tail_grid():
    """Matrices of the form the MGF grid sums (log P-mass + lam x loss on ORDERS), of the clones pair and of
    random pairs, with ties, -inf entries, a row of -inf and non-finite entries (scipy's own path)."""
    rng = np.random.default_rng(11)
    loss, log_p = _clones_outcomes(60, 2.0, 4)
    yield log_p[None, :] + ORDERS[:, None] * loss[None, :]
    for size in (1, 2, 37, 1000):
        loss, log_p = rng.normal(0.0, 3.0, size), rng.normal(-20.0, 10.0, size)
        yield log_p[None, :] + ORDERS[::7, None] * loss[None, :]
    tied = np.array([[0.0, 0.0, -1.0, -np.inf], [-np.inf] * 4, [2.0, 2.0, 2.0, 2.0], [np.inf, 0.0, 1.0, 2.0]])
    yield tied
    yield np.array([[np.nan, 0.0, 1.0], [5.0, -3.0, 5.0 - 1e-15]])


def _same_bits(ours: np.ndarray, theirs: np.ndarray) -> bool:
    return ours.shape == theirs.shape and ours.tobytes() == theirs.tobytes()


def test_row_logsumexp_is_scipys_to_the_bit():
    """The MGF grid's row-wise log-sum-exp is scipy.special.logsumexp(axis=1), bit for bit (NaN where scipy
    gives NaN), on the grids' own form and at the corners (ties, -inf, inf, NaN)."""
    for rows in _rows_of_a_tail_grid():
        kept = rows.copy()
        with np.errstate(invalid="ignore"):
            expected = logsumexp(rows, axis=1)
            assert _same_bits(row_logsumexp(rows), expected), rows
            assert _same_bits(rows, kept)  # not overwritten unless allowed
            assert _same_bits(row_logsumexp(rows.copy(), overwrite=True), expected), rows


def test_probe_a_plain_logsumexp_is_not_scipys_to_the_bit():
    """Probe: the textbook log-sum-exp (the largest not taken out of the sum) differs from scipy's in the last
    bits on these grids, so the check above can fail."""

    def plain(rows):
        largest = rows.max(axis=1, keepdims=True)
        return np.log(np.sum(np.exp(rows - largest), axis=1)) + largest[:, 0]

    rows = next(_rows_of_a_tail_grid())
    assert not _same_bits(plain(rows), logsumexp(rows, axis=1))


def _strong_outcomes(n: int, e0: float, k: int):
    """(loss, log P) of every outcome of the strong adversary's pair (Koskela et al. eq. (4.3)), from the
    trinomial law of (A, C) over n - 1 users (probabilities q, q), with the blanket's equal-law part."""
    q = 1.0 / (math.exp(e0) + k - 1)
    log_1mgamma = math.log1p(-k * q)
    a, c = (v.ravel().astype(float) for v in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    ok = a + c <= n - 1
    a, c = a[ok], c[ok]
    log_tri = (
        gammaln(n)
        - gammaln(a + 1)
        - gammaln(c + 1)
        - gammaln(n - a - c)
        + (a + c) * math.log(q)
        + (n - 1 - a - c) * math.log1p(-2 * q)
    )
    # P = (A + 1, C), Q = (A, C + 1): the outcome (a + 1, c) has P-mass T(a, c), Q-mass T(a + 1, c - 1)
    finite = c > 0
    loss = np.log((a[finite] + 1.0) / c[finite])
    log_p = log_1mgamma + log_tri[finite]
    loss, log_p = np.append(loss, 0.0), np.append(log_p, math.log(k * q))
    log_infinity = float(logsumexp(log_1mgamma + log_tri[~finite]))
    return loss, log_p, log_infinity


def test_strong_adversary_certified_down_to_1e_200():
    n, e0, k, T = 2800, 1.0, 2, 4  # infinity mass (1 - gamma)(1 - q)^(n - 1) ~ e^-869: below 1e-300
    loss, log_p, log_inf = _strong_outcomes(n, e0, k)
    assert log_inf < math.log(1e-300)
    lower_ref = _power(_binned(loss, log_p, False), T)
    accountant = compose("strong-adversary", epsilon_local=e0, n_users=n, k=k, compositions=T)
    reached = False
    for eps in np.linspace(1.0, 12.0, 12):
        low = _reference_log_delta(lower_ref, eps)
        if low < math.log(1e-300):
            continue
        reached |= low < math.log(1e-200)
        ours = float(accountant.log_delta_for_epsilon(eps)[0])
        assert ours >= low - 1e-9, (eps, ours, low)
    assert reached


def test_log_masses_match_the_linear_ones_and_keep_the_underflowed():
    view = strong_view.StrongView(ShuffleSetting(epsilon_local=2.0, n_users=3000, k=3)).binned(
        interval=1e-3,
        pessimistic=True,
        K=38.0,
        log_masses=True,
    )
    logs = view.logs
    _, at_lin, at_log = np.intersect1d(view.index, logs.index, return_indices=True)
    normal = view.p_mass[at_lin] > 1e-290
    assert np.allclose(
        np.exp(logs.log_p_mass[at_log][normal]), view.p_mass[at_lin][normal], rtol=1e-11, atol=0
    )
    assert logs.index.size > view.index.size  # bins whose linear masses underflow to 0 are kept
    assert logs.log_p_mass.min() < -800


@pytest.mark.parametrize("q", [1.0, 0.25])
def test_log_directions_match_the_linear_ones(q):
    r = Round(2.0, 400, 4, q)
    view = get_accountant("clones-krr", epsilon_local=2.0, n_users=r.per_round, k=4).binned_views(
        interval=1e-3, pessimistic=True, K=38.0, log_masses=True
    )[0]
    for direction in (Direction.REMOVE, Direction.ADD):
        index, mass, infinity = direction_bins(view, q, direction)
        tail = tail_round(view.logs, 1e-3, q, direction)
        loss, log_mass, log_infinity = tail.loss, tail.log_mass, tail.log_infinity
        linear, logs = {}, {}  # summed per grid point (subsampling maps several bins to one)
        for value, m in zip(np.rint(index).tolist(), mass):
            linear[value] = linear.get(value, 0.0) + m
        for value, lm in zip(np.rint(loss / 1e-3).tolist(), log_mass):
            logs[value] = np.logaddexp(logs.get(value, -np.inf), lm)
        checked = [v for v in linear if linear[v] > 1e-290]
        assert len(checked) > 100
        for value in checked:
            assert math.exp(logs[value]) == pytest.approx(linear[value], rel=1e-10)
        assert math.exp(log_infinity) == pytest.approx(infinity, rel=1e-9, abs=1e-300)


def test_one_direction_at_a_time():
    """The derived PLD and tail form REMOVE or ADD; BOTH is refused in one line."""
    view = get_accountant("clones-krr", epsilon_local=2.0, n_users=50, k=4).binned_views(
        interval=1e-3, pessimistic=True, K=9.0, log_masses=True
    )[0]
    forms = (
        lambda d: direction_bins(view, 1.0, d),
        lambda d: (lambda t: (t.loss, t.log_mass, t.log_infinity))(tail_round(view.logs, 1e-3, 1.0, d)),
    )
    for form in forms:
        with pytest.raises(ValueError, match=r"`direction` must be one of 'forward', 'reverse'; got 'both'"):
            form(Direction.BOTH)
        assert all(np.array_equal(a, b) for a, b in zip(form("reverse"), form(Direction.ADD)))
        assert not all(np.array_equal(a, b) for a, b in zip(form(Direction.REMOVE), form(Direction.ADD)))


def test_only_per_outcome_views_have_a_tail():
    # The weak view forms its tail from its own outcomes where its windows allow (n up to ~1e4 by outcomes
    # or rectangles, n = 10^6 and beyond by boxes of (s, d, m)); not where even the boxes are too many
    weak = compose("weak-adversary", epsilon_local=2.0, n_users=300, k=4, compositions=3)
    assert weak.resolved_delta == 0.0 and weak.has_tail_bound
    large = compose("weak-adversary", epsilon_local=2.0, n_users=10**4, k=4, compositions=3)
    assert large.resolved_delta == PLD_FLOOR and not large.has_tail_bound
    with pytest.raises(ValueError, match="accountant"):
        tail_rounds("worst-case-lower", [Round(2.0, 300, 4)], 1e-4)


def test_lower_bound_states_where_it_stops_being_resolved():
    lower = compose("worst-case-lower", epsilon_local=2.0, n_users=300, k=4, compositions=4)
    upper = compose("strong-adversary", epsilon_local=2.0, n_users=300, k=4, compositions=4)
    assert lower.resolved_delta == PLD_FLOOR and upper.resolved_delta == 0.0
    with pytest.raises(ValueError, match="log_masses"):
        get_accountant("worst-case-lower", epsilon_local=2.0, n_users=30, k=4).binned_views(
            interval=1e-3, pessimistic=False, K=9.0, log_masses=True
        )
    assert lower.epsilon_for_delta(1e-30) == lower.epsilon_for_delta(PLD_FLOOR)
    assert lower.epsilon_for_delta(1e-30) <= upper.epsilon_for_delta(1e-30)
    assert (
        float(lower.delta_for_epsilon(7.9)[0]) == 0.0 or float(lower.delta_for_epsilon(7.9)[0]) >= PLD_FLOOR
    )
