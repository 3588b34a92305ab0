"""Exact hockey-stick divergence of the "binomial split" pair shared by the blanket and clones bounds.

Both the privacy-blanket adversary of Balle et al. (2019, Thm 3.1 proof; Koskela et al. 2021,
eq. (4.3)) and the clones reduction of Feldman, McMillan, Talwar (2021, Thm 3.2) end in the same
pair of distributions on pairs of counts:

    S ~ Bin(N, r),   B | S ~ Bin(S, 1/2),   Delta ~ Bernoulli(alpha),  independent,
    P = (B + Delta, S - B + 1 - Delta),      Q = (B + 1 - Delta, S - B + Delta),

with alpha in [1/2, 1]. The total S + 1 is seen, so ``H_{e^eps}(P || Q) = sum_s Bin(N, r)(s) h_s``
with the per-total divergence, for B_s ~ Bin(s, 1/2) and u = alpha - e^eps (1 - alpha),
v = e^eps alpha - (1 - alpha) (so v - u = e^eps - 1):

    h_s = sum_{x >= x_s} [u Pr(B_s = x - 1) - v Pr(B_s = x)]
        = u Pr(B_s = x_s - 1) - (e^eps - 1) Pr(B_s >= x_s),        x_s = floor(v (s + 1) / (u + v)) + 1,

every summand being positive (x_s is the first x where P > e^eps Q). When u <= 0 (eps >= log
(alpha / (1 - alpha))) nothing exceeds e^eps and the divergence is 0. Swapping the two coordinates
maps P to Q, so the divergence is the same in both directions.

Evaluation (all in log space). With log_odds = log(alpha / (1 - alpha)) (= eps0 for the clones
pair, inf for alpha = 1), u = (1 - alpha)(e^log_odds - e^eps) and v = (1 - alpha)(e^(eps + log_odds) -
1) are formed from log1mexp / log(e^x - 1), so both keep full relative precision for eps0 down to
1e-12 and never overflow; h_s is computed relative to u (and the series below relative to v), so
every finite eps works and e^eps is never formed. For alpha = 1 every finite likelihood ratio
x / (s + 1 - x) is at most N, so delta is constant for eps >= log(N + 1) + 1 (only the outcome with
Q = 0 remains) and larger eps, infinity included, are evaluated there: exact, not a clamp. For
alpha < 1 delta is 0 from eps = log_odds on.

**Bounded work, certified truncation.** h_s is non-increasing in s (one more split count is
independent noise, i.e. post-processing) and the binomial weights are log-concave, so a block of
totals [a, b] contributes at most (b - a + 1) * max_block(weight) * h_a. Totals are scanned
hierarchically: at most 4096 blocks of a power-of-64 size, then every block whose bound is not
``_LOG_SKIP`` nats below the largest single term found so far is split into 64 sub-blocks, down to
blocks of 64 totals whose terms are all summed. The work therefore follows the totals that matter
(a window of O(sqrt(N)) around the peak of weight * h) instead of N, and memory stays bounded
(leaves are summed in chunks). The bounds of the skipped blocks are *added* to the result (at most
e^-46 relative per skipped block), so the value never understates the divergence: every user of this
module is an upper bound. For each kept s, h_s = pmf(x_s - 1) (u - (e^eps - 1) R) with the tail ratio
R = Pr(B_s >= x_s) / Pr(B_s = x_s - 1) taken from the regularised incomplete beta function
(``scipy.special.betainc``) when pmf(x_s - 1) > e^-600, and from a Lentz continued fraction for R
itself in the far tail (no underflow at any n). When the subtraction would keep less than 1e-5 of
u, h_s is instead summed as the series of positive terms ``pmf(x - 1) (u - v (s + 1 - x) / x)``
relative to its first term (no cancellation). Checked against mpmath (60 digits) in the tests, down
to delta ~ 1e-646.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betainc

from shuffledp._numerics import log1mexp, log_expm1, logsumexp
from shuffledp.accounting.numerics.binomial import (
    beta_continued_fraction,  # shared Lentz CF
    log_binom_pmf_loader,
)

__all__ = ["log_split_pair_delta", "log_split_pair_delta_direct", "MAX_USERS_SPLIT_PAIR", "check_size"]

#: largest n accepted by the accountants built on the split pair: the kept totals are a window of
#: O(sqrt(n)), each costing an incomplete beta or a recurrence step (about 5 s per 4 epsilons at
#: n = 10^10; minutes beyond 10^11)
MAX_USERS_SPLIT_PAIR = 10**10


def check_size(name: str, n_users: int) -> None:
    """Refuse n above :data:`MAX_USERS_SPLIT_PAIR` before any work."""
    if n_users > MAX_USERS_SPLIT_PAIR:
        raise ValueError(
            f"`n_users` must be an integer in [1, {MAX_USERS_SPLIT_PAIR}] for accountant {name!r} (its work grows as "
            f"sqrt(n) incomplete-beta evaluations); got {n_users}."
        )


_LOG2 = float(np.log(2.0))
#: blocks whose best possible contribution is this far (in log) below a known term are skipped
_LOG_SKIP = 46.0
#: at most this many blocks at the first level; each kept block is split into _SPLIT sub-blocks
_FIRST_BLOCKS = 4096
_SPLIT = 64
#: longest run of consecutive totals whose centre tails follow from one incomplete beta
_RUN = 4096
#: totals below this use the incomplete beta directly (it is fast there)
_RUN_MIN_TOTAL = 4096
#: kept leaf terms summed per chunk (bounds memory)
_LEAF_CHUNK = 1 << 18
#: use the incomplete-beta path only above this log-pmf (far from double underflow)
_LOG_PMF_FLOOR = -600.0
#: below this fraction of u * pmf, u * pmf - (e^eps - 1) * tail is summed term by term instead
_CANCELLATION_LIMIT = 1e-5
#: log-ratio gaps smaller than this count as ties (P = e^eps Q) in the direct enumeration
_DIRECT_GAP_TOLERANCE = 1e-12


def _log_half_binom_pmf(x, s):
    """log Pr(Bin(s, 1/2) = x) for integer arrays with 0 <= x <= s (full precision at any s)."""
    return log_binom_pmf_loader(x, s, -_LOG2, -_LOG2)


def _near_center_tail(s, x, log_pmf):
    """Pr(B_s >= x) for totals near the centre (tail >= ~0.05), by runs of consecutive totals.

    The incomplete beta costs O(sqrt(s)) near the centre of Bin(s, 1/2). Along a run s, s + 1, ...
    (x rising by 0 or 1 per step) the tail follows exactly from
    Pr(B_{s+1} >= x) = Pr(B_s >= x) + pmf_s(x - 1) / 2 and Pr(B_{s+1} >= x + 1) = Pr(B_s >= x) - pmf_s(x) / 2,
    so the incomplete beta is evaluated once per run of at most ``_RUN`` totals. Near the centre the
    tail is >= 0.05 and each step moves it by O(1/sqrt(s)), so the accumulated rounding stays
    below ``_RUN`` * 1e-16 / 0.05 (1e-11) relative. ``log_pmf`` is log pmf_s(x - 1).
    """
    size = s.size
    follows = np.zeros(size, dtype=bool)
    follows[1:] = (s[1:] == s[:-1] + 1) & ((x[1:] - x[:-1]) >= 0) & ((x[1:] - x[:-1]) <= 1)
    run = _RUN
    while True:
        starts = np.flatnonzero(~follows)
        run_id = np.cumsum(~follows) - 1
        position = np.arange(size) - starts[run_id]
        split = follows & (position % run == 0)  # split long runs
        if split.any():
            follows = follows & ~split
            starts = np.flatnonzero(~follows)
            run_id = np.cumsum(~follows) - 1
            position = np.arange(size) - starts[run_id]
        width = int(position.max()) + 1
        if starts.size * width <= 4 * size + 4096 or run <= 64:
            break
        run = 64  # many short runs beside a long one: a padded table would be mostly empty
    values = np.empty(size)
    values[starts] = betainc(x[starts].astype(float), (s[starts] - x[starts] + 1).astype(float), 0.5)
    step = np.flatnonzero(follows)
    if step.size:
        previous = step - 1
        pmf_below = np.exp(log_pmf[previous])  # pmf_s(x - 1) of the previous total
        pmf_at = pmf_below * (s[previous] - x[previous] + 1) / x[previous]  # pmf_s(x)
        values[step] = np.where(x[step] == x[previous], 0.5 * pmf_below, -0.5 * pmf_at)
    table = np.zeros((starts.size, width))
    table[run_id, position] = values
    return np.cumsum(table, axis=1)[run_id, position]


def _log_inner(s, log_u, log_v, log_e):
    """log h_s (see the module docstring) for an integer array ``s``, one epsilon.

    ``log_u``, ``log_v`` are log u and log v, ``log_e`` is log(e^eps - 1). Terms are formed relative to u
    (u / v may underflow when eps is close to log_odds), the cancellation series relative to v.
    """
    s = np.asarray(s, dtype=np.int64)
    u = np.exp(log_u - log_v)  # u / v in [0, 1]
    fraction = 1.0 / (1.0 + u)  # v / (u + v) >= 1/2
    x = np.floor(fraction * (s + 1.0)).astype(np.int64) + 1
    x = np.clip(x, 1, s + 1)
    sf, xf = s.astype(float), x.astype(float)
    log_pmf = _log_half_binom_pmf(xf - 1.0, sf)
    # tail ratio R = Pr(B_s >= x) / Pr(B_s = x - 1); h_s = pmf(x - 1) * (u - (e^eps - 1) R)
    ratio = np.zeros(s.shape, dtype=float)  # x = s + 1: empty tail
    inside = x <= s
    # centre: (x - 1) - s/2 <= 0.8 sqrt(s) = 1.6 sd, where the tail is >= ~0.05
    centre = inside & (s >= _RUN_MIN_TOTAL) & ((xf - 1.0) - 0.5 * sf <= 0.8 * np.sqrt(sf))
    if centre.any():
        tail = _near_center_tail(s[centre], x[centre], log_pmf[centre])
        ratio[centre] = tail * np.exp(-log_pmf[centre])
    inside &= ~centre
    # rows whose h_s the closed form below would certainly leave to the series: R is not needed there
    cancels = inside & _cancels(sf, xf, u)
    inside &= ~cancels
    direct = inside & (log_pmf > _LOG_PMF_FLOOR)  # incomplete beta, no underflow
    if direct.any():
        tail = betainc(xf[direct], sf[direct] - xf[direct] + 1.0, 0.5)
        ratio[direct] = tail * np.exp(-log_pmf[direct])
    deep = inside & ~direct  # far tail: Lentz continued fraction for the ratio itself
    if deep.any():
        a, b = xf[deep], sf[deep] - xf[deep] + 1.0
        # I_{1/2}(a, b) = pmf(x) / 2 * cf and pmf(x) / pmf(x - 1) = b / a
        ratio[deep] = 0.5 * (b / a) * beta_continued_fraction(a, b, 0.5)
    # h_s = u pmf(x - 1) (1 - (e^eps - 1) R / u), a sum of positive terms; the scale is u itself, so
    # u / v may underflow (u << v at eps near log_odds; then x = s + 1 and R = 0)
    with np.errstate(over="ignore", divide="ignore"):
        share = np.where(ratio > 0, np.exp(log_e - log_u + np.log(np.where(ratio > 0, ratio, 1.0))), 0.0)
    out = np.full(s.shape, -np.inf)
    good = (1.0 - share >= _CANCELLATION_LIMIT) & ~cancels
    out[good] = log_u + log_pmf[good] + np.log1p(-share[good])
    todo = np.flatnonzero(~good)  # heavy cancellation: sum the positive terms instead
    if todo.size:
        out[todo] = log_v + log_pmf[todo] + np.log(_series(s[todo], x[todo], u, 1.0))
    return out


def _cancels(s, x, w):
    """Where u - (e^eps - 1) R keeps certainly less than half of :data:`_CANCELLATION_LIMIT` of u (so that
    :func:`_log_inner` sums h_s as the series whatever R it computes), for totals s above the centre
    (x > (s + 1) / 2), w = u / v.

    With rho_j = (s - x + 1 - j) / (x + j) (rho_0 < 1, decreasing), r_j = rho_0 ... rho_(j-1) <= rho_0^j:
    1 - (e^eps - 1) R / u = sum_j r_j (w - rho_j) / w, where |w - rho_0| <= 2 (1 + w) / x (x is the first
    count past v (s + 1) / (u + v), give or take one for rounding) and rho_0 - rho_j <= j (s + 1) / x^2, so
    it is at most (2 (1 + w) / (x (1 - rho_0)) + (s + 1) rho_0 / (x^2 (1 - rho_0)^2)) / w. Deep in the tail
    of a large total (x ~ 10^8) this is ~1e-7: the series is taken there anyway, and the incomplete beta or
    continued fraction for R is not computed (the computed share would need a relative error above 1e-6 to
    pass the test instead)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rho = (s - x + 1.0) / x
        gap = 1.0 - rho
        bound = (2.0 * (1.0 + w) / (x * gap) + (s + 1.0) * rho / (x * x * gap * gap)) / w
        return (rho < 1.0) & (bound <= 0.5 * _CANCELLATION_LIMIT)


def _series(s, x, u, v):
    """sum_{j >= 0} [pmf(x - 1 + j) / pmf(x - 1)] (u - v (s - m_j) / (m_j + 1)), m_j = x - 1 + j.

    In batches of :data:`_SERIES_BATCH` rows (the work arrays stay in cache); each row's terms and stopping
    point do not depend on the others."""
    s = s.astype(float)
    m = (x - 1).astype(float)
    total = np.empty_like(s)
    for start in range(0, s.size, _SERIES_BATCH):
        part = slice(start, start + _SERIES_BATCH)
        total[part] = _series_batch(s[part], m[part].copy(), u, v)
    return total


_SERIES_BATCH = 16384
#: terms of the series summed between two tests of its remainder
_SERIES_STEP = 32
#: 2^54: a term below 2^-54 of a positive total is below half its ulp
_TWO_54 = float(2**54)


def _series_batch(s, m, u, v):
    """:func:`_series` on one batch (``m`` = x - 1, overwritten), :data:`_SERIES_STEP` terms at a time.

    The same values, bit for bit, as summing 64 terms between two tests of the remainder (the reference form of
    tests/accounting/test_huge_n_fast_paths.py), i.e. as summing every term one by one: a row stops once no
    later term can change its total. Every term is ra * factor with 0 <= factor <= u, and once
    rho = (s - m) / (m + 1) < 1 the computed ratio ra never rises again (fl(fl(ra (s - m)) / (m + 1)) <= ra
    for s - m < m + 1 < 2^53) while the total never falls; so when ra * u <= 2^-54 * total, every later
    term is below half an ulp of the total it is added to and leaves it unchanged (round to nearest).
    Testing every :data:`_SERIES_STEP` terms only adds terms that change nothing. A step whose terms all lie
    inside the support (m + 31 <= s) takes the same operations on each row in place (s - m and m + 1 are
    exact integers, carried by one step each; d * v is d itself when v = 1, and the clamp at 0 is left out
    when the step's first factors are all >= 0, since the computed factor u - fl(d / den) does not fall
    along a row); the others are masked term by term."""
    ratio = np.ones_like(s)  # pmf(m) / pmf(x - 1)
    total = np.zeros_like(s)
    active = np.arange(s.size)
    unit = v == 1.0
    while active.size:
        sa, ma, ra, ta = s[active], m[active], ratio[active], total[active]
        if np.all(ma + (_SERIES_STEP - 1) <= sa):
            d, den, q = sa - ma, ma + 1.0, np.empty_like(sa)
            clamp = False
            for term in range(_SERIES_STEP):
                if unit:
                    np.divide(d, den, out=q)
                else:
                    np.multiply(d, v, out=q)
                    np.divide(q, den, out=q)
                np.subtract(u, q, out=q)
                if not term:  # factors rise along a row: >= 0 at the step's first term, >= 0 for the step
                    clamp = not bool(np.all(q >= 0.0))
                if clamp:
                    np.maximum(q, 0.0, out=q)  # factor
                np.multiply(ra, q, out=q)
                np.add(ta, q, out=ta)
                np.multiply(ra, d, out=ra)
                np.divide(ra, den, out=ra)
                d -= 1.0
                den += 1.0
            ma = ma + float(_SERIES_STEP)
        else:
            for _ in range(_SERIES_STEP):
                valid = ma <= sa  # pmf(m) > 0
                factor = np.maximum(u - v * (sa - ma) / (ma + 1.0), 0.0)
                ta = ta + np.where(valid, ra * factor, 0.0)
                ra = np.where(valid, ra * (sa - ma) / (ma + 1.0), 0.0)
                ma = ma + 1.0
        # ra * u * 2^54 is exact (a power of two) unless it overflows to inf, which never stops a row
        finished = (ra == 0.0) | (((sa - ma) < (ma + 1.0)) & (ra * u * _TWO_54 <= ta))
        m[active], ratio[active], total[active] = ma, ra, ta
        active = active[~finished]
    return total


def _log_weights(s, n_trials, log_r, log_1mr):
    """log Bin(N, r)(s), full precision at any N."""
    return log_binom_pmf_loader(np.asarray(s, dtype=float), float(n_trials), log_r, log_1mr)


def _log_u_v(eps: float, log_1malpha: float, log_odds: float) -> tuple[float, float, float]:
    """(log u, log v, log(e^eps - 1)) with u = alpha - e^eps (1 - alpha), v = e^eps alpha - (1 - alpha).

    u = (1 - alpha)(e^log_odds - e^eps) and v = (1 - alpha)(e^(eps + log_odds) - 1); alpha = 1 is
    log_odds = inf (u = 1, v = e^eps). log u = -inf when eps >= log_odds (no outcome exceeds e^eps).
    """
    log_e = float(log_expm1(eps))
    if log_odds == np.inf:
        return 0.0, float(eps), log_e
    if eps >= log_odds:
        return -np.inf, np.inf, log_e
    log_alpha = log_1malpha + log_odds  # formed first, so that eps is not lost beside a huge log_odds
    log_u = log_alpha + float(log1mexp(eps - log_odds))
    log_v = (
        log_alpha + eps + float(log1mexp(-(eps + log_odds)))
    )  # log(1 - alpha) + log(e^(eps + log_odds) - 1)
    return log_u, log_v, log_e


def _log_sum(values: np.ndarray) -> float:
    """log sum exp of a 1-d array (-inf when empty or all -inf); lighter than scipy's for many small calls."""
    if values.size == 0:
        return -np.inf
    top = float(np.max(values))
    if not np.isfinite(top):
        return top
    return top + float(np.log(np.sum(np.exp(values - top))))


def _first_block_size(n_totals: int) -> int:
    """Smallest power of _SPLIT (1 included) splitting [0, n_totals) into at most _FIRST_BLOCKS blocks."""
    size = 1
    while size * _FIRST_BLOCKS < n_totals:
        size *= _SPLIT
    return size


def _pruned_log_sum(
    n_trials: int, log_r: float, log_1mr: float, mode: int, log_u: float, log_v: float, log_e: float
) -> float:
    """log sum_s Bin(N, r)(s) h_s over kept blocks, plus the bounds of the skipped blocks (module doc)."""

    def log_terms(s):
        return _log_weights(s, n_trials, log_r, log_1mr) + _log_inner(s, log_u, log_v, log_e)

    known = float(log_terms(np.array([mode]))[0])  # a term of the sum: a lower bound on it
    skipped = [np.array([-np.inf])]
    size = _first_block_size(n_trials + 1)
    lows = np.arange(0, n_trials + 1, size, dtype=np.int64)
    while size > _SPLIT:
        highs = np.minimum(lows + size - 1, n_trials)
        inner = _log_inner(lows, log_u, log_v, log_e)  # h is non-increasing: its block maximum
        known = max(known, float(np.max(_log_weights(lows, n_trials, log_r, log_1mr) + inner)))
        best_weight = _log_weights(np.clip(mode, lows, highs), n_trials, log_r, log_1mr)
        bound = np.log((highs - lows + 1).astype(float)) + best_weight + inner
        skip = bound < known - _LOG_SKIP
        skipped.append(bound[skip])
        size //= _SPLIT
        kept = lows[~skip]
        lows = (kept[:, None] + size * np.arange(_SPLIT, dtype=np.int64)[None, :]).ravel()
        lows = lows[lows <= n_trials]
    # leaves: blocks of at most _SPLIT totals, every term summed, in chunks
    if size > 1:
        highs = np.minimum(lows + size - 1, n_trials)
        inner = _log_inner(lows, log_u, log_v, log_e)
        known = max(known, float(np.max(_log_weights(lows, n_trials, log_r, log_1mr) + inner)))
        best_weight = _log_weights(np.clip(mode, lows, highs), n_trials, log_r, log_1mr)
        bound = np.log((highs - lows + 1).astype(float)) + best_weight + inner
        skip = bound < known - _LOG_SKIP
        skipped.append(bound[skip])
        lows = lows[~skip]
        totals = (lows[:, None] + np.arange(size, dtype=np.int64)[None, :]).ravel()
        totals = totals[totals <= n_trials]
    else:
        totals = lows
    sums = [-np.inf]
    for first in range(0, totals.size, _LEAF_CHUNK):
        sums.append(_log_sum(log_terms(totals[first : first + _LEAF_CHUNK])))
    return float(np.logaddexp(_log_sum(np.array(sums)), _log_sum(np.concatenate(skipped))))


def log_split_pair_delta(
    epsilons,
    *,
    n_trials: int,
    log_r: float,
    log_1mr: float,
    log_alpha: float = 0.0,
    log_1malpha: float = -np.inf,
    log_odds: float | None = None,
) -> np.ndarray:
    """log H_{e^eps}(P || Q) of the split pair (module docstring) for each epsilon in [0, inf].

    ``n_trials`` is N, ``log_r``/``log_1mr`` are log r and log(1 - r) (both given, for precision),
    ``log_alpha``/``log_1malpha`` log alpha and log(1 - alpha) (defaults: alpha = 1, Delta = 1), and
    ``log_odds`` log(alpha / (1 - alpha)) when the caller knows it exactly (for the clones pair it is
    eps0; computed from the two logs when omitted). Exact up to floating point (relative error ~1e-12,
    tested against mpmath) and never below the exact value (skipped blocks are added as bounds);
    work grows with the totals that matter, O(sqrt(N)), not with N.
    """
    epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))
    n_trials = int(n_trials)
    if log_odds is None:
        log_odds = np.inf if log_1malpha == -np.inf else float(log_alpha - log_1malpha)
    if log_r == -np.inf:
        mode = 0
    elif log_1mr == -np.inf:
        mode = n_trials
    else:
        mode = int(min(n_trials, np.floor((n_trials + 1) * np.exp(log_r))))
    out = np.empty(epsilons.shape, dtype=float)
    for i, eps in enumerate(epsilons):
        eps = float(eps)
        if log_odds == np.inf:
            # alpha = 1: finite likelihood ratios x / (s + 1 - x) are <= N, so delta is constant
            # from eps = log(N + 1) on (only the outcome with Q = 0 remains): evaluate it there
            eps = min(eps, float(np.log1p(n_trials)) + 1.0)
        log_u, log_v, log_e = _log_u_v(eps, log_1malpha, log_odds)
        if log_u == -np.inf:
            out[i] = -np.inf
            continue
        out[i] = min(0.0, _pruned_log_sum(n_trials, log_r, log_1mr, mode, log_u, log_v, log_e))
    return out


def log_split_pair_delta_direct(
    epsilons,
    *,
    n_trials: int,
    log_r: float,
    log_1mr: float,
    log_alpha: float = 0.0,
    log_1malpha: float = -np.inf,
    log_odds: float | None = None,
) -> np.ndarray:
    """Straightforward O(N^2) evaluation of the same divergence, for tests and benchmarks.

    ``log_odds`` is accepted for a common signature and unused (P and Q are built from the mixture).

    Enumerates every outcome (x, y) with x + y = s + 1, s = 0..N, builds log P and log Q from the
    mixture definition and sums max(P - e^eps Q, 0) in log space. No tail identities, no pruning.
    """
    epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))[:, None]
    pieces: list[list[np.ndarray]] = [[] for _ in range(epsilons.shape[0])]
    for s in range(int(n_trials) + 1):
        x = np.arange(s + 2, dtype=float)
        log_w = _log_weights(s, n_trials, log_r, log_1mr)
        with np.errstate(divide="ignore", invalid="ignore"):
            lb_minus = np.where(
                (x >= 1) & (x - 1 <= s), _log_half_binom_pmf(np.clip(x - 1, 0, s), float(s)), -np.inf
            )
            lb_same = np.where(x <= s, _log_half_binom_pmf(np.clip(x, 0, s), float(s)), -np.inf)
        log_p = log_w + np.logaddexp(log_alpha + lb_minus, log_1malpha + lb_same)
        log_q = log_w + np.logaddexp(log_1malpha + lb_minus, log_alpha + lb_same)
        gap = epsilons + log_q[None, :] - log_p[None, :]
        with np.errstate(invalid="ignore"):
            # a gap within rounding of 0 is an outcome with P = e^eps Q exactly (e.g. eps = eps0)
            positive = (gap < -_DIRECT_GAP_TOLERANCE) & np.isfinite(log_p)[None, :]
            terms = np.where(positive, log_p[None, :] + log1mexp(np.where(positive, gap, -1.0)), -np.inf)
        for i in range(epsilons.shape[0]):
            pieces[i].append(terms[i])
    return np.array([min(0.0, float(logsumexp(np.concatenate(p)))) for p in pieces])
