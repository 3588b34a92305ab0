"""Every fast override of the weak and worst-case views held to the view's own outcome stream.

The stream (``View.outcomes`` / ``left_out``) is the reference: the generic delta of
:func:`shuffledp.accounting.views.base.log_delta_from_outcomes` and a plain binning of the stream's
(log P, log Q). The weak stream itself is checked against the multinomial formula of Koskela et al.'s weak
adversary written out here independently (module docstring of views/weak/view.py: P(a, c, m) =
Mult_n(a, c, m) (a + c + m + beta a) / n). The composed tail is checked against the exact composed delta
of the product pair, enumerated directly, and against the plain Chernoff bound of the pair's own
outcomes (no grid, no blocks).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from scipy.special import gammaln

from shuffledp.accounting.numerics.composed_tail import TailRound, log_delta_bound
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.base import FamilyView, log_delta_from_outcomes
from shuffledp.accounting.views.binned import bin_index
from shuffledp.accounting.views.weak import tail as weak_tail
from shuffledp.accounting.views.weak import view as weak
from shuffledp.accounting.views.weak.tail import tail_rounds

WEAK_GRID = [(n, k, e0) for n in (2, 7, 23, 60) for k in (2, 3, 5, 10) for e0 in (0.4, 2.0, 9.0)]
K_FULL = 38.0  # at n <= 60 these windows hold the whole support (left-out mass 0 or ~e^-720)


def _weak_outcomes(n: int, k: int, e0: float):
    """Independent reference: (log P, log Q) of every outcome (a, c, m), from the multinomial formula.

    The outcomes in the order of itertools.product(range(n + 1), repeat=3) (a, then c, then m); the
    log-multinomials formed on arrays with the same operations in the same order as one outcome at a time (the
    same values to the bit), and the two last logs by math.log per outcome.
    """
    log_den = math.log(math.exp(e0) + k - 1.0)
    log_q1 = -log_den  # a blanket report on one given value
    log_rest = math.log(k - 2.0) - log_den if k > 2 else -math.inf
    log_true = math.log(math.exp(e0) - 1.0) - log_den  # 1 - gamma = (e^eps0 - 1) / (e^eps0 + k - 1)
    beta = math.expm1(e0)
    a, c, m = (axis.ravel() for axis in np.meshgrid(*[np.arange(n + 1)] * 3, indexing="ij"))
    j = a + c + m
    keep = (j <= n) & ~((m > 0) & (k == 2))
    a, c, m, j = a[keep], c[keep], m[keep], j[keep]
    with np.errstate(invalid="ignore"):  # 0 x -inf where m = 0 (k = 2): that term is 0
        rest_term = np.where(m > 0, m * log_rest, 0.0)
    log_mult = (
        gammaln(n + 1)
        - gammaln(a + 1)
        - gammaln(c + 1)
        - gammaln(m + 1)
        - gammaln(n - j + 1)
        + (a + c) * log_q1
        + rest_term
        + (n - j) * log_true
    )
    log_n = math.log(n)

    def log_weighted(weights):  # log_mult + log(weight) - log n, -inf where the weight is 0
        logs = np.array([math.log(w) if w > 0 else -math.inf for w in weights.tolist()])
        return log_mult + logs - log_n

    return log_weighted(j + beta * a), log_weighted(j + beta * c)


def _stream(view, K=K_FULL):
    chunks = list(view.outcomes(K))
    return np.concatenate([c.log_p for c in chunks]), np.concatenate([c.log_q for c in chunks])


def _delta(lp, lq, eps):
    """Exact delta of the pair at eps (sum of positive parts, linear space: small settings only)."""
    p, q = np.exp(lp), np.exp(lq)
    return float(np.sum(np.maximum(p - math.exp(eps) * q, 0.0)))


@pytest.mark.parametrize("n,k,e0", [(2, 2, 0.4), (7, 3, 2.0), (23, 10, 9.0), (30, 5, 1.0)])
def test_weak_stream_is_the_formula(n, k, e0):
    view = weak.WeakView(ShuffleSetting(epsilon_local=e0, n_users=n, k=k))
    lp, lq = _stream(view)
    ref_p, ref_q = _weak_outcomes(n, k, e0)
    assert math.isclose(np.exp(lp).sum(), 1.0, rel_tol=1e-12) and math.isclose(
        np.exp(ref_p).sum(), 1.0, rel_tol=1e-12
    )
    assert view.left_out(K_FULL).log_p < -700
    for eps in (0.0, 0.3 * e0, 0.8 * e0):
        assert math.isclose(_delta(lp, lq, eps), _delta(ref_p, ref_q, eps), rel_tol=1e-10, abs_tol=1e-300)


@pytest.mark.parametrize("n,k,e0", WEAK_GRID)
def test_weak_exact_delta_override_is_its_stream(n, k, e0):
    """WeakRows' certified delta (the override) equals the generic delta of the weak view's own stream."""
    view = weak.WeakView(ShuffleSetting(epsilon_local=e0, n_users=n, k=k))
    eps = np.array([0.0, 0.05, 0.25, 0.5, 0.9]) * e0
    override = view.log_deltas(eps.copy())
    generic = log_delta_from_outcomes(view, eps, K=K_FULL, upper=True)
    lower = log_delta_from_outcomes(view, eps, K=K_FULL, upper=False)
    assert np.all(generic >= lower)
    for o, g, eps_i in zip(override, generic, eps):
        if g < math.log(1e-290):  # the override returns its Chernoff bound below e^-700 (documented)
            assert o >= g - 1e-9
            continue
        assert math.isclose(o, g, rel_tol=0, abs_tol=1e-9), (eps_i, o, g)


def _assert_bins_match(lp, lq, binned, interval, pessimistic):
    """A binned PLD holds the stream's outcomes: per bin the same P- and Q-mass (to 1e-12 absolute);
    an outcome whose loss is a bin edge (to rounding) may land in either bin beside it."""
    live = np.isfinite(lp) | np.isfinite(lq)
    loss = lp[live] - lq[live]
    index = bin_index(loss, interval, pessimistic)
    # an outcome whose loss is a bin edge (to rounding) may land in either bin beside it
    tie = np.abs(loss / interval - np.rint(loss / interval)) < 1e-9
    edge = np.rint(loss / interval).astype(np.int64)
    lo = min(index.min(), binned.index.min(), edge.min()) - 1
    size = max(index.max(), binned.index.max(), edge.max()) - lo + 2
    for stream_mass, override_mass in ((np.exp(lp[live]), binned.p_mass), (np.exp(lq[live]), binned.q_mass)):
        ref = np.bincount(index - lo, weights=stream_mass, minlength=size)
        got = np.bincount(binned.index - lo, weights=override_mass, minlength=size)
        slack = np.zeros(size)
        for shift in (0, 1):  # edge j borders bins j and j + 1 (pessimistic) / j - 1 and j (optimistic)
            at = edge[tie] - lo + (shift if pessimistic else shift - 1)
            slack += np.bincount(at, weights=stream_mass[tie], minlength=size)
        assert np.all(np.abs(ref - got) <= 1e-12 + slack)
        assert math.isclose(ref.sum(), got.sum(), rel_tol=0, abs_tol=1e-12)


@pytest.mark.parametrize(
    "n,k,e0", [(n, k, e0) for n in (7, 60) for k in (2, 3, 10) for e0 in (0.4, 2.0, 9.0)]
)
@pytest.mark.parametrize("pessimistic", [True, False])
def test_weak_binned_override_is_its_stream(n, k, e0, pessimistic):
    """The binned PLD's run reduction (prefix-sum differences) bins the stream's outcomes: per bin the
    same P- and Q-mass (to the reduction's absolute rounding), the same dropped mass."""
    interval = 1e-2
    view = weak.WeakView(ShuffleSetting(epsilon_local=e0, n_users=n, k=k))
    binned = view.binned(interval=interval, pessimistic=pessimistic, K=9.0)
    lp, lq = _stream(view, 9.0)
    _assert_bins_match(lp, lq, binned, interval, pessimistic)
    assert math.isclose(binned.dropped, math.exp(view.left_out(9.0).log_p), rel_tol=1e-12, abs_tol=1e-300)


def _product_delta(lp, lq, rounds, eps, q=1.0):
    """Exact delta of the T-fold product of the (subsampled) pair, both directions: the composed loss
    distribution enumerated outcome tuple by outcome tuple (merged by exact loss value only)."""
    p, qq = np.exp(lp), np.exp(lq)
    mix = q * p + (1.0 - q) * qq
    best = 0.0
    for first, second in ((mix, qq), (qq, mix)):
        keep = first > 0
        loss = np.where(
            second[keep] > 0,
            np.log(first[keep]) - np.log(np.where(second[keep] > 0, second[keep], 1.0)),
            np.inf,
        )
        mass = first[keep]
        total_loss, total_mass = loss, mass
        for _ in range(rounds - 1):
            total_loss = (total_loss[:, None] + loss[None, :]).ravel()
            total_mass = (total_mass[:, None] * mass[None, :]).ravel()
        with np.errstate(over="ignore", invalid="ignore"):
            terms = total_mass * -np.expm1(np.minimum(eps - total_loss, 0.0))
        best = max(best, float(np.sum(np.where(np.isinf(total_loss), total_mass, terms))))
    return best


@pytest.mark.parametrize(
    "n,k,e0,rounds,q",
    [(3, 3, 1.0, 2, 1.0), (4, 2, 2.0, 3, 1.0), (3, 4, 0.7, 3, 1.0), (4, 3, 1.5, 2, 0.5), (3, 2, 3.0, 3, 0.3)],
)
@pytest.mark.parametrize("path", ["outcomes", "rectangles", "boxes"])
def test_weak_composed_tail_certified(n, k, e0, rounds, q, path, monkeypatch):
    """The tail rounds' Chernoff bound is at least the exact composed delta of the product pair, on the three
    paths of the tail (every outcome its own entry; rectangles of (a, m) with tail-formed masses; boxes of
    (s, d, m) with unimodality-bounded masses)."""
    if path == "rectangles":
        monkeypatch.setattr(weak_tail, "MAX_ENTRIES", 0)
    if path == "boxes":
        monkeypatch.setattr(weak_tail, "MAX_PAIRS", 0)
    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    lp, lq = _weak_outcomes(n, k, e0)
    remove, add = tail_rounds(setting, q, 1e-4, rounds)
    for eps in (0.0, 0.2, 0.5 * e0, e0, 1.5 * e0, rounds * e0 * 0.8):
        exact = _product_delta(lp, lq, rounds, eps, q)
        bound = max(log_delta_bound([remove], eps), log_delta_bound([add], eps))
        if exact > 0:
            assert bound >= math.log(exact) - 1e-12, (eps, bound, math.log(exact))


@functools.cache
def _plain_round(n: int, k: int, e0: float, rounds: int) -> TailRound:
    """The pair's own outcomes as one tail round (no grid, no blocks), formed once for both paths (the round
    keeps its moment-generating function's grid once computed)."""
    lp, lq = _weak_outcomes(n, k, e0)
    keep = np.isfinite(lp)
    return TailRound(lp[keep] - lq[keep], lp[keep], -math.inf, rounds)


@pytest.mark.parametrize("n,k,e0,rounds", [(100, 10, 2.0, 4), (40, 3, 1.0, 10)])
@pytest.mark.parametrize("path", ["outcomes", "rectangles"])
def test_weak_composed_tail_within_half_a_decade_of_chernoff(n, k, e0, rounds, path, monkeypatch):
    """The gridded tail (either path) is within half a decade of the plain Chernoff bound of the pair's
    own outcomes (each outcome its own loss, no grid), and the composition reaches far below the PLD floor."""
    from shuffledp.accounting.composition import compose

    if path == "rectangles":
        monkeypatch.setattr(weak_tail, "MAX_ENTRIES", 0)

    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    plain = _plain_round(n, k, e0, rounds)
    remove, _ = tail_rounds(setting, 1.0, 1e-4, rounds)
    composed = compose("weak-adversary", epsilon_local=e0, n_users=n, k=k, compositions=rounds)
    for eps in np.linspace(0.4, 0.75, 4) * rounds * e0:
        ours, reference = log_delta_bound([remove], eps), log_delta_bound([plain], eps)
        assert reference - 1e-9 <= ours <= reference + 0.5 * math.log(10.0)
        if reference < math.log(1e-16):
            assert float(composed.log_delta_for_epsilon(np.array([eps]))[0]) <= ours + 1e-12


# ------------------------------------------------------------------------------------------ worst case
WORST_GRID = [(n, k, e0) for n in (2, 9, 30) for k in (2, 3, 5, 10) for e0 in (0.4, 2.0, 9.0)]


@pytest.mark.parametrize("n,k,e0", WORST_GRID)
def test_worst_members_overrides_are_their_streams(n, k, e0):
    """Each explicit dataset of the lower bound (the family's members, and "every other user on x2"): its
    fast sum (the family's rows, third_value's rectangle) equals the generic delta of its own stream (the
    whole support)."""
    from shuffledp.accounting.worst_case.families.family import WorstFamilies
    from shuffledp.accounting.worst_case.families.members import ThirdValueView

    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    family = WorstFamilies(setting)
    eps = np.array([0.05, 0.25, 0.5, 0.9]) * e0
    members = list(family.members())
    assert [m.name for m in members] == (["worst-all-x0", "worst-none"] if k >= 3 else ["worst-all-x0"])
    for member in members + ([ThirdValueView(setting)] if k >= 3 else []):
        lp, lq = _stream(member)
        assert math.isclose(np.exp(lp).sum(), 1.0, rel_tol=1e-12) and math.isclose(
            np.exp(lq).sum(), 1.0, rel_tol=1e-12
        )
        generic = log_delta_from_outcomes(member, eps, upper=True)
        override = member.log_delta(eps)
        for o, g in zip(override, generic):
            if g < math.log(1e-290):  # below the accuracy promise the sums may stop early (a lower value)
                assert o <= g + 1e-9
                continue
            assert math.isclose(o, g, rel_tol=0, abs_tol=1e-9), (member.name, o, g)
    # the family's value is the maximum over its members, bit for bit (its fast path reads the same rows)
    expected = np.max([m.log_delta(eps) for m in members], axis=0)
    assert np.array_equal(family.log_delta(eps), expected)
    # and the generic FamilyView maximum over the same members agrees
    assert np.array_equal(FamilyView.log_delta(family, eps), expected)


@pytest.mark.parametrize(
    "n,k,e0", [(n, k, e0) for n in (5, 30) for k in (2, 3, 10) for e0 in (0.4, 2.0, 9.0)]
)
@pytest.mark.parametrize("pessimistic", [True, False])
def test_worst_binned_override_is_its_streams(n, k, e0, pessimistic):
    """worst-case-lower's binned PLDs (the families' own enumeration) bin its members' streams."""
    from shuffledp.accounting.worst_case.families import family as families
    from shuffledp.accounting.worst_case.families import members

    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    views = families.binned(
        epsilon_local=e0, n_users=n, k=k, interval=1e-2, pessimistic=pessimistic, K=K_FULL
    )
    streams = ([members.NoMatchView(setting)] if k >= 3 else []) + [members.AllOnX0View(setting)]
    assert len(views) == len(streams)
    for binned, member in zip(views, streams):
        lp, lq = _stream(member)
        _assert_bins_match(lp, lq, binned, 1e-2, pessimistic)
