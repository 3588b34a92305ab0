"""The fast paths that bring the validity sweep's calls at huge n within its limit
(docs/decisions/worst-case.md, "The validity sweep's unchecked calls at n = 10^15"): each against the path it
replaces, where both run, with a probe showing the comparison can fail.

* the split pair's series (``views.split_pair._series``): batched, in place, every 32 terms stopping a row
  once its next terms are each below half an ulp of its total -- the same values, bit for bit, as the term-by-term loop it replaces (kept here as the reference);
* the split pair's skip of the tail ratio where the series is certain (``views.split_pair._cancels``): the
  same values, bit for bit, as computing the ratio first;
* the binomial high part at d = 0 (``numerics.binomial``): the first term alone, bit for bit what the
  closed form gives with the ratio computed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accounting.numerics import binomial
from shuffledp.accounting.views import split_pair


def _series_reference(s, x, u, v, tolerance=1e-18):
    """The split pair's series as it was summed before: term by term, 64 between two remainder tests."""
    s = s.astype(float)
    m = (x - 1).astype(float)
    ratio, total = np.ones_like(s), np.zeros_like(s)
    active = np.ones(s.shape, dtype=bool)
    while active.any():
        idx = np.flatnonzero(active)
        sa, ma, ra, ta = s[idx], m[idx], ratio[idx], total[idx]
        for _ in range(64):
            valid = ma <= sa
            factor = np.maximum(u - v * (sa - ma) / (ma + 1.0), 0.0)
            ta = ta + np.where(valid, ra * factor, 0.0)
            ra = np.where(valid, ra * (sa - ma) / (ma + 1.0), 0.0)
            ma = ma + 1.0
        rho = np.clip((sa - ma) / (ma + 1.0), 0.0, 1.0)
        with np.errstate(divide="ignore"):
            remainder = np.where(rho < 1.0, ra * u / (1.0 - rho), np.inf)
        finished = (ra == 0.0) | (remainder <= tolerance * ta)
        m[idx], ratio[idx], total[idx] = ma, ra, ta
        active[idx[finished]] = False
    return total


def _series_rows(seed: int, size: int):
    """Rows (s, x) as the split pair forms them (x the first count past v (s + 1) / (u + v)), from small totals
    whose series reach the end of the support to totals of 10^8 deep in the tail, and u = u / v."""
    rng = np.random.default_rng(seed)
    s = np.concatenate(
        [rng.integers(1, 200, size), rng.integers(10**4, 10**6, size), rng.integers(10**7, 2 * 10**8, size)]
    )
    out = []
    for w in (0.9, 0.8, 0.28, 0.04, 7e-5):
        x = np.minimum(np.floor((s + 1.0) / (1.0 + w)).astype(np.int64) + 1, s + 1)
        out.append((s, x, w))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_split_pair_series_bit_for_bit(seed):
    for s, x, w in _series_rows(seed, 3000):
        ours = split_pair._series(s, x, w, 1.0)
        assert np.array_equal(ours, _series_reference(s, x, w, 1.0)), w


def test_split_pair_series_probe():
    """A series stopped earlier (remainder test at 1e-12 instead of 1e-18) is seen by the comparison."""
    s, x, w = _series_rows(0, 300)[0]
    early = _series_reference(s, x, w, 1.0, tolerance=1e-12)
    assert not np.array_equal(early, _series_reference(s, x, w, 1.0))


# the clones pair of feldman-numerical at eps0 = 4, k = 10^6, n = 10^10 (the sweep's call) and smaller
_PAIRS = [(4.0, 10**6, 10**10), (4.0, 10**6, 10**8), (2.0, 10, 10**7), (6.0, 3, 10**6)]


def _clones_log_inner(eps0, k, n_users, eps, with_skip: bool, monkeypatch):
    """log h_s over a window of totals around the weights' mode (the leaves of the pruned sum)."""
    from shuffledp.accounting.views.split_pair import _log_inner, _log_u_v

    alpha = math.exp(eps0) / (math.exp(eps0) + 1.0)
    log_u, log_v, log_e = _log_u_v(eps, math.log1p(-alpha), eps0)
    r = 2.0 * k / (math.exp(eps0) + k - 1.0) / k * 9.0  # a total of the size the clones pair's weights give
    mode = int(n_users * min(r, 0.5))
    s = np.arange(max(1, mode - 5000), mode + 5000, 7, dtype=np.int64)
    if not with_skip:
        monkeypatch.setattr(split_pair, "_cancels", lambda sf, xf, w: np.zeros(sf.shape, dtype=bool))
    out = _log_inner(s, log_u, log_v, log_e)
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("eps0, k, n_users", _PAIRS)
def test_split_pair_skipped_ratio_bit_for_bit(eps0, k, n_users, monkeypatch):
    for fraction in (0.001, 0.05, 0.3, 0.7, 0.99, 0.999):
        eps = fraction * eps0
        fast = _clones_log_inner(eps0, k, n_users, eps, True, monkeypatch)
        slow = _clones_log_inner(eps0, k, n_users, eps, False, monkeypatch)
        assert np.array_equal(fast, slow), (eps0, k, n_users, eps)


def test_split_pair_skip_is_taken_and_probe(monkeypatch):
    """The skip is taken at the sweep's setting (deep rows of totals ~10^8), and a skip planted where the
    closed form is kept (every row above the centre) changes values: the comparison above would fail."""
    s = np.arange(9 * 10**7, 9 * 10**7 + 4000, dtype=np.int64).astype(float)
    for w in (0.8, 0.28):
        x = np.floor((s + 1.0) / (1.0 + w)) + 1.0
        assert split_pair._cancels(s, x, w).all()
    eps0, k, n_users, eps = 1.0, 10, 10**5, 0.2
    slow = _clones_log_inner(eps0, k, n_users, eps, False, monkeypatch)
    monkeypatch.setattr(split_pair, "_cancels", lambda sf, xf, w: (xf <= sf) & (2.0 * xf > sf + 1.0))
    planted = _clones_log_inner(eps0, k, n_users, eps, True, monkeypatch)
    assert not np.array_equal(planted, slow)


def _high_part_reference(i, t, n_trials, d, log_pi, log_1mpi):
    """The closed form with the tail ratio always computed (the path before d = 0 skipped it)."""
    lp = binomial.log_pmf(i, n_trials, log_pi, log_1mpi)
    ratio = binomial._tail_ratio(i, n_trials, lp, log_pi, log_1mpi)
    first = np.exp(log_1mpi) * i
    value = first - d * ratio
    return lp + np.log(value), value > 1e-6 * first


@pytest.mark.parametrize("n_trials, pi", [(10**6, 0.3), (10**12, 5e-7), (3 * 10**9, 0.5)])
def test_high_part_at_d_zero_bit_for_bit(n_trials, pi):
    """At d = 0 (t at the mean, eps = 0 in the worst-case rows) the ratio is not computed; the value is the
    same to the bit (with d = 0 the closed form is the first term; no row falls to the series)."""
    log_pi, log_1mpi = math.log(pi), math.log1p(-pi)
    mean = n_trials * pi
    t = np.array([mean, mean, mean])
    n = np.full(3, float(n_trials))
    d = np.array([0.0, -0.0, 0.0])
    ours = binomial.high_part(np.floor(t) + 1.0, t, n, log_pi, log_1mpi, d=d)
    reference, closed = _high_part_reference(np.floor(t) + 1.0, t, n, d, log_pi, log_1mpi)
    assert closed.all()
    assert np.array_equal(ours, reference)
    # probe: with d != 0 the ratio is computed and enters the value
    d_probe = np.full(3, 1e-3)
    moved = binomial.high_part(np.floor(t) + 1.0, t, n, log_pi, log_1mpi, d=d_probe)
    assert not np.array_equal(moved, ours)


# ----------------------------------------------------------------------------- the family's coarse sums

from shuffledp.accounting.numerics.binomial import LogPmfRange, log_pmf  # noqa: E402
from shuffledp.accounting.params import ShuffleSetting  # noqa: E402
from shuffledp.accounting.worst_case.families import sums as family_sums  # noqa: E402


def _member_values(eps0, n_users, k, epsilons, coarse: bool, monkeypatch):
    """The family members' log deltas, by the coarse sums (as the accountant) or by the rows (the gate raised)."""
    if not coarse:
        monkeypatch.setattr(family_sums, "_COARSE_MIN_ROWS", 1 << 40)
    sums = family_sums.FamilySums(ShuffleSetting(epsilon_local=eps0, n_users=n_users, k=k))
    out = [sums.member_log_deltas(float(eps)) for eps in epsilons]
    monkeypatch.undo()
    return out


# eps0 = 4, k = 3, n = 10^10: the "all on x0" windows hold 2.1e5 rows (coarse), the rows still cheap enough
_SETTING = (4.0, 10**10, 3)
_FRACTIONS = (0.0, 1e-4, 0.001, 0.01, 0.3, 0.9)


def test_coarse_sums_below_and_close_to_the_rows(monkeypatch):
    """Within the accuracy promise (log delta >= -700) the coarse sum is below the row sum and within 1e-9 of it
    (in log: the blocks' loss bound). Beyond it both are partial sums of the terms (the windows are not widened
    there; the blocks reach a little beyond the rows' first window), so they are not ordered."""
    eps0, n_users, k = _SETTING
    epsilons = [f * eps0 for f in _FRACTIONS]
    coarse = _member_values(eps0, n_users, k, epsilons, True, monkeypatch)
    rows = _member_values(eps0, n_users, k, epsilons, False, monkeypatch)
    compared = 0
    for eps, ours, reference in zip(epsilons, coarse, rows):
        for name in ("all-x0 D||D'", "all-x0 D'||D"):
            a, b = ours[name], reference[name]
            if b == -np.inf:
                assert a == -np.inf
                continue
            if b >= -700.0:
                assert b - 1e-9 <= a <= b + 1e-12 * abs(b), (eps, name, a, b)
                compared += 1
            else:  # both are partial sums of the same terms there (windows not widened), both lower values
                assert np.isfinite(a) and a < -600.0, (eps, name, a, b)
    assert compared >= 4


def test_coarse_sums_probe(monkeypatch):
    """A block taking g at its end instead of its start (g planted one block ahead) comes out above the row sum
    within the promise: the comparison above fails on it."""
    eps0, n_users, k = _SETTING
    rows = _member_values(eps0, n_users, k, [0.0], False, monkeypatch)[0]
    sums = family_sums.FamilySums(ShuffleSetting(epsilon_local=eps0, n_users=n_users, k=k))
    member = sums._members(0.0)["all-x0 D||D'"]
    block, chord = sums.coarse.strides(member)
    honest = member.rising
    member.rising = lambda s: honest(s + 64.0 * block)
    lo, hi = family_sums._window(n_users, member.mean, member.var, member.s_min)
    planted, _ = sums.coarse.coarse_sum(member, lo, hi, n_users, block, chord)
    assert member.finish(planted) > rows["all-x0 D||D'"] + 1e-12


@pytest.mark.parametrize("n_trials, pi", [(10**8, 0.3), (10**12, 0.018)])
def test_block_weights_chord_below_and_close(n_trials, pi):
    """The chord's block weights are below the rows' sum and within 1e-10 (relative) of it; a chord planted
    through the larger end (the max of its two ends) is above it (probe)."""
    law = LogPmfRange(n_trials, math.log(pi), math.log1p(-pi))
    sd = math.sqrt(n_trials * pi * (1 - pi))
    chord = max(1, int(math.sqrt(8e-10 * n_trials * pi * (1 - pi))))
    block = chord * 16
    starts = (np.round((n_trials * pi + sd * np.array([-3.0, -0.5, 0.0, 2.0])) / block) * block).astype(
        np.int64
    )
    ours = family_sums._log_block_weights(law, starts, block, chord)
    exact = np.array(
        [
            float(
                family_sums.logsumexp(
                    log_pmf(np.arange(a, a + block, dtype=float), n_trials, law.log_pi, law.log_1mpi)
                )
            )
            for a in starts
        ]
    )
    assert np.all(ours <= exact + 1e-13 * np.abs(exact))
    assert np.all(ours >= exact - 1e-10)
    ends = log_pmf(np.stack([starts, starts + block]).astype(float), n_trials, law.log_pi, law.log_1mpi)
    planted = np.log(block) + ends.max(axis=0)
    assert np.any(planted > exact)


def test_worst_case_lower_at_the_sweep_setting_monotone():
    """The sweep's call (eps0 = 14.5, n = 10^15, k = 3), now within its limit: non-increasing in eps, finite
    below eps0 and at eps = 0 equal to the rows' value (its d = 0 rows are cheap; -10.5917541...)."""
    from shuffledp.accounting import get_accountant

    eps0 = 14.5
    fractions = (0.0, 0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999)
    accountant = get_accountant("worst-case-lower", epsilon_local=eps0, n_users=10**15, k=3)
    values = accountant.log_delta_for_epsilon(np.array([f * eps0 for f in fractions]))
    assert np.all(np.isfinite(values))
    assert np.all(np.diff(values) <= 0.0)
    assert abs(values[0] - (-10.59175414919996)) <= 1e-12 * 10.6
