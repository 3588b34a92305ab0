"""The worst-case family's exact sums: the exact delta of explicit datasets (marginals of the real
shuffled histogram) as row sums (:class:`FamilySums`). Each is a LOWER bound on the worst case over
datasets: a marginal (post-processing) of the histogram of one pair of neighbouring datasets. The family
as a view is :class:`~shuffledp.accounting.worst_case.families.family.WorstFamilies`; its members as
views are in :mod:`~shuffledp.accounting.worst_case.families.members` (their fast sums are read here).

The differing user u holds x0 in D and x1 in D'; the family is:

* **"none"** (k >= 3): no other user holds x0 or x1. The (h_x0, h_x1) marginal has
  P(a, c) = Tri_n(a, c) (e^eps0 a + c + rho (n - s)) / n and Q with a and c swapped, Tri_n the trinomial
  law over n trials with probabilities (q, q), s = a + c, rho = (k - 2) / (e^eps0 + k - 3) (a
  trinomial-ratio computation). This is the weak adversary's view with the count M of other values
  replaced by its conditional mean, so by Jensen it never exceeds ``weak-adversary``. For k = 3 the pair
  is the whole histogram; for k >= 4 it is a lower bound on that dataset's histogram delta.
  delta(eps) = (lambda / n) sum_s Bin(n, 2q)(s) E[(A - t_s)_+], A ~ Bin(s, 1/2),
  lambda = (e^eps0 - 1)(1 + e^eps), t_s = (s (e^(eps + eps0) - 1) + (e^eps - 1) rho (n - s)) / lambda.
  Symmetric in the two directions.
* **"all on x0"**: every other user holds x0 (and, mirrored by relabelling, "all on x1"). The pair
  (h_x0, h_x1) is sufficient here (the other values have the same law under both), so this is the
  exact histogram delta of that dataset. With S ~ Bin(n, p + q), A | S ~ Bin(S, e^eps0 / (e^eps0 + 1)):
  D || D': (e^eps (e^eps0 - e^-eps0) / n) E[(A - t_S)_+],
  D' || D: ((e^eps0 - e^-eps0) / n) E[(t'_S - A)_+],
  t_s = (s + (n - s) e^-eps0 - n e^(-eps - eps0)) / (1 - e^(-2 eps0)),
  t'_s = (s + (n - s) e^-eps0 - n e^(eps - eps0)) / (1 - e^(-2 eps0)).
  "All on x1" in one direction equals "all on x0" in the other, so both directions cover both datasets.

Every sum over s is one closed-form expected excess per s (:mod:`shuffledp.accounting.numerics.binomial`),
over a window of s around the mean widened on each side until its edge term is e^-40 below the
largest term (the terms are unimodal in s; each widening step is sized from the slope of the log
terms at that edge, so the window ends a little beyond that point instead of doubling); what lies outside only makes the true value larger, so it
is dropped. A window also stops growing beyond 2^20 terms or once its peak is below e^-700 (outside
the accuracy promise; the partial sum is still a lower bound). delta = 0 for eps >= eps0 comes out of
the sums (t_s >= s there).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.binomial import (
    LogPmfRange,
    log_excess_above,
    log_excess_above_bound,
    log_excess_below,
    log_excess_below_bound,
    summed_directly,
)
from shuffledp.accounting.params import KrrParams, ShuffleSetting

__all__ = ["FamilySums", "FAMILY"]

#: the datasets (and directions) the lower bound maximises over
FAMILY = ("none", "all-x0 D||D'", "all-x0 D'||D")
_LOG_EDGE = 40.0  # a window is widened while its edge term is within e^40 of the largest
_LOG_BEYOND_PROMISE = -700.0  # below e^-700 (~1e-304) a lower value is returned without widening
_MAX_WINDOW = 1 << 20  # rows summed per family member at most
_SKIP_MIN_ROWS = 64  # blocks of fewer rows are evaluated whole
_LOG_FIRST = 2.0  # rows whose bound is within e^2 of the block's largest bound are evaluated first
#: rows whose bound is this far below an exact row are not evaluated: at most _MAX_WINDOW rows each below e^-50 of the largest term leave out at most
#: 2^20 e^-50 = 2.0e-16 of the sum, half an ulp, and only non-negative terms (the sum stays a lower value)
_LOG_LEFT_OUT = 50.0
_LOG_BOUND_MARGIN = 1e-9  # relative allowance for the rounding of a member's value and of its bound


def _growth_step(values, peak, width, from_low):
    """Rows to add on one side of a window of log terms so that its edge falls to peak - _LOG_EDGE.

    Extrapolates the slope of the last rows at that edge linearly (the log terms are close to concave,
    so this overshoots rather than undershoots); at least 16, at most the current width (doubling).
    Only the speed depends on this: the window keeps growing until its edges are low enough."""
    if not np.isfinite(peak) or values.size < 3:
        return max(16, width)
    edge, inner = (values[0], values[2]) if from_low else (values[-1], values[-3])
    slope = 0.5 * (inner - edge)  # log-decrease per row outwards
    if not (np.isfinite(edge) and np.isfinite(slope)) or slope <= 0:
        return max(16, width)
    need = (edge - (peak - _LOG_EDGE)) / slope
    return int(min(max(16, width), max(16, math.ceil(1.25 * need) + 16)))


class _Member:
    """One family member at one epsilon: ``rows(s, keep=None)`` (log terms of the sum over s; with a mask
    ``keep`` only those rows are evaluated, the others are -inf), ``bound(s)`` (certified upper bounds
    on the same terms, elementary operations only), the window's mean, variance and smallest s, and
    ``finish`` (the constant added to the log sum); ``total`` (phi -> (pre, log g), optional) gives a
    certified bound on the whole sum over s (:func:`_mgf_bound`)."""

    __slots__ = ("bound", "finish", "mean", "rows", "s_min", "total", "var")

    def __init__(self, rows, bound, mean, var, s_min, finish, total=None):
        self.rows, self.bound, self.mean, self.var, self.s_min, self.finish = (
            rows,
            bound,
            mean,
            var,
            s_min,
            finish,
        )
        self.total = total


#: the exponents phi tried by :func:`_mgf_bound` (any phi > 0 gives a valid bound; the grid only makes it tight)
_PHIS = np.exp(np.linspace(-12.0, 5.0, 86))


def _mgf_bound(total, n, log_p):
    """Certified bound on log sum_s Bin(n, p)(s) E[(Y_s)_+] where, for every phi > 0,
    E[e^(phi Y_S)] = e^pre(phi) (1 - p + p g(phi))^n (``total(phi)`` = (pre, log g)): from
    x_+ <= e^(phi x - 1) / phi, the minimum over a grid of phi of pre - 1 - log phi + n log(1 + p (g - 1))."""
    pre, log_g = total(_PHIS)
    with np.errstate(over="ignore", invalid="ignore"):
        value = pre - 1.0 - np.log(_PHIS) + n * np.log1p(math.exp(log_p) * np.expm1(log_g))
    value = value[np.isfinite(value)]
    return float(np.min(value)) if value.size else np.inf


def _masked(function, keep, t, N, *args):
    """``function(t, N, *args)`` (a binomial excess, elementwise) on the rows ``keep`` only; -inf elsewhere
    (array arguments are taken at the same rows, scalars as they are)."""
    if keep is None:
        return function(t, N, *args)
    out = np.full(t.shape, -np.inf)
    if keep.any():
        out[keep] = function(t[keep], N[keep], *(a[keep] if np.ndim(a) else a for a in args))
    return out


def _window(n_max, mean, var, s_min):
    """The first window (lo, hi) of :meth:`FamilySums._sum_rows` (None: empty sum)."""
    s_min = max(0, int(math.floor(s_min)))
    if s_min > n_max:
        return None
    centre = min(max(mean, s_min), n_max)
    half = 8.0 * math.sqrt(var) + 32.0
    return max(s_min, int(centre - half)), min(n_max, int(math.ceil(centre + half)))


def _x0_totals(d_forward, d_reverse, gamma, log_pi0, log_1mpi0):
    """The moment generating functions of "all on x0" for :func:`_mgf_bound`: u_s = d + gamma s and
    B | S ~ Bin(S, 1 - pi0); Y = u_S - B (forward), B - u'_S (reverse)."""

    def total_forward(phi):
        return phi * d_forward, phi * gamma + np.logaddexp(log_pi0, log_1mpi0 - phi)

    def total_reverse(phi):
        return -phi * d_reverse, -phi * gamma + np.logaddexp(log_pi0, log_1mpi0 + phi)

    return total_forward, total_reverse


class FamilySums:
    """The exact log delta of each member of the family (module docstring) for one setting, as row sums;
    the weights of the sums over s do not depend on epsilon and are cached across epsilons. These are the
    fast evaluations of the member views of :mod:`shuffledp.accounting.worst_case.families.members`
    ("none", "all on x0" in both directions); :meth:`log_delta_max` is their maximum (the family's value,
    :class:`~shuffledp.accounting.worst_case.families.family.WorstFamilies`).

    Work that cannot move the value by more than half an ulp, and only downwards, is skipped: (i) a row
    whose certified upper bound lies more than :data:`_LOG_LEFT_OUT` (50 nats) below an exact row of its
    block is not evaluated (-inf in its place: at most 2^20 such rows, each below e^-50 of the sum, leave
    out at most 2.0e-16 of it, all non-negative, so the value stays a lower one; the rows near the largest
    bound (within e^2) are evaluated first to find the peak, and the three rows at each block edge, read
    by the widening, always); (ii) :meth:`log_delta_max` skips a member whose certified upper bound on its
    *computed* value lies below another member's value."""

    def __init__(self, setting: ShuffleSetting):
        self.setting = setting
        self._logs = KrrParams.of(setting.epsilon_local, setting.k)
        self._weights: dict[str, LogPmfRange] = {}

    def _weight(self, name: str, log_pi: float, log_1mpi: float) -> LogPmfRange:
        if name not in self._weights:
            self._weights[name] = LogPmfRange(self.setting.n_users, log_pi, log_1mpi)
        return self._weights[name]

    @staticmethod
    def _block(member, s):
        """Log terms of the rows ``s`` (exact, or -inf where the term provably underflows, see the class doc)."""
        if member.bound is None or s.size < _SKIP_MIN_ROWS:
            return member.rows(s)
        with np.errstate(invalid="ignore"):
            bound = member.bound(s)
            first = np.ones(s.shape, dtype=bool)
            top = float(np.max(bound))
            if np.isfinite(top):  # the rows near the largest bound, and the block's edges, first
                first = ~(bound < top - _LOG_FIRST)
                first[:3] = first[-3:] = True
            values = member.rows(s, first)
            peak = float(np.max(values[first]))
            rest = ~first & ~(bound < peak - _LOG_LEFT_OUT)  # NaN bounds: evaluated
        if rest.any():
            values[rest] = member.rows(s, rest)[rest]
        return values

    def _sum_rows(self, member, n_max):
        """log sum over s in [0, n_max] of ``member.rows(s)`` (log values of a unimodal sequence, zero for s
        below ``member.s_min``): a window around the mean (moved into s >= s_min) widened on each side
        until its edge row is e^-40 below the largest row or the range ends. Memory stays O(width of the
        window)."""
        s_min = max(0, int(math.floor(member.s_min)))
        window = _window(n_max, member.mean, member.var, member.s_min)
        if window is None:
            return -np.inf
        lo, hi = window
        values = self._block(member, np.arange(lo, hi + 1, dtype=float))
        while True:
            peak = float(np.max(values))
            if peak == -np.inf and lo == s_min and hi == n_max:
                return -np.inf
            # an all-zero window (every term 0) is widened on both sides until a term appears
            grow_lo = lo > s_min and (peak == -np.inf or values[0] > peak - _LOG_EDGE)
            grow_hi = hi < n_max and (peak == -np.inf or values[-1] > peak - _LOG_EDGE)
            # a lower bound may stop anywhere: beyond the accuracy promise (peak below e^-700) or at
            # _MAX_WINDOW rows (memory and time bounded) the partial sum is returned as it is
            if (
                not (grow_lo or grow_hi)
                or (np.isfinite(peak) and peak < _LOG_BEYOND_PROMISE)
                or hi - lo + 1 >= _MAX_WINDOW
            ):
                return float(logsumexp(values))
            if grow_lo:
                new_lo = max(s_min, lo - _growth_step(values, peak, hi - lo + 1, from_low=True))
                values = np.concatenate([self._block(member, np.arange(new_lo, lo, dtype=float)), values])
                lo = new_lo
            if grow_hi:
                new_hi = min(n_max, hi + _growth_step(values, peak, hi - lo + 1, from_low=False))
                values = np.concatenate(
                    [values, self._block(member, np.arange(hi + 1, new_hi + 1, dtype=float))]
                )
                hi = new_hi

    def _value(self, member) -> float:
        return member.finish(self._sum_rows(member, self.setting.n_users))

    def _value_bound(self, member, rows: bool = True) -> float:
        """Certified upper bound on the member's computed value, +inf where none is cheap: the closed-form
        bound on the whole sum over s, and (``rows``) when every row bound of the first window is below
        e^-700, the window is not widened (the peak is beyond the promise) and its logsumexp is at most
        that of the bounds."""
        n = self.setting.n_users
        window = _window(n, member.mean, member.var, member.s_min)
        if window is None:
            return -np.inf
        value = np.inf
        if member.total is not None and self.setting.k > 2:  # the whole sum over s (any window)
            value = member.finish(_mgf_bound(member.total, n, self._log_p(member)))
        with np.errstate(invalid="ignore"):
            bound = (
                member.bound(np.arange(window[0], window[1] + 1, dtype=float)) if rows else np.full(1, np.inf)
            )
        top = float(np.max(bound))
        if np.isfinite(top) and top < _LOG_BEYOND_PROMISE - 1.0 and not np.isnan(bound).any():
            value = min(value, member.finish(float(logsumexp(bound))))
        return value + _LOG_BOUND_MARGIN * (1.0 + abs(value)) if np.isfinite(value) else value

    def _log_p(self, member) -> float:
        """log of the success probability of S in the member's weights (mean / n)."""
        return math.log(member.mean / self.setting.n_users)

    def _member_none(self, eps) -> _Member:
        s_set, logs = self.setting, self._logs
        n = s_set.n_users
        log_lam = logs.log_beta + float(np.logaddexp(0.0, eps))
        rho = math.exp(logs.log_rho)
        half = math.log(0.5)
        c_per_s, extra = math.expm1(eps + s_set.epsilon_local), math.expm1(eps) * rho
        # t_s - s / 2 = nu (s ((e^eps0 + 1) / 2 - rho) + rho n) / lambda, without cancellation
        slope = 0.5 * (math.exp(s_set.epsilon_local) + 1.0) - rho
        weight = self._weight("none", logs.log_2q, logs.log_1m2q)

        # s - t_s = (s (lambda - c) - extra (n - s)) / lambda with lambda - c = e^eps0 - e^eps, without the
        # difference of t_s and s (near eps0 they agree to ~e^-eps digits, and t_s alone has lost them)
        gap = math.exp(eps) * math.expm1(s_set.epsilon_local - eps)

        def rows(s, keep=None):
            t = (s * c_per_s + extra * (n - s)) / math.exp(log_lam)
            d = math.expm1(eps) * (s * slope + rho * n) / math.exp(log_lam)
            log_weight = weight.of(s)
            out = log_weight + _masked(log_excess_above, keep, t, s, half, half, d)
            u = (s * gap - extra * (n - s)) / math.exp(log_lam)
            # t_s > s - 1: only A = s exceeds it, E[(A - t_s)_+] = (s - t_s) 2^-s; taken where s - t_s from t_s
            # would carry a relative error above 100 ulp (s - t_s < s / 100), elsewhere the sum above is as exact
            near = (u < np.minimum(1.0, 0.01 * s)) & (u > 0.0)
            if np.any(near):
                out = np.where(near, log_weight + np.log(np.where(near, u, 1.0)) + s * half, out)
            return out

        def bound(s):
            t = (s * c_per_s + extra * (n - s)) / math.exp(log_lam)
            return weight.of(s) + log_excess_above_bound(t, s, half, half)

        p = math.exp(logs.log_2q)
        # E[(A - t_s)_+] > 0 needs t_s < s, i.e. s > extra n / (lambda - c + extra)
        s_min = extra * n / (math.exp(log_lam) - c_per_s + extra) if extra > 0 else 0.0

        # t_s = extra n / lambda + s (c - extra) / lambda, A | S ~ Bin(S, 1/2)
        def total(phi):
            lam = math.exp(log_lam)
            return -phi * extra * n / lam, -phi * (c_per_s - extra) / lam + np.logaddexp(0.0, phi) - math.log(
                2.0
            )

        return _Member(rows, bound, n * p, n * p * (1 - p), s_min, lambda v: v + log_lam - math.log(n), total)

    def _members_all_x0(self, eps) -> tuple[_Member, _Member]:
        s_set = self.setting
        n, e0, k = s_set.n_users, s_set.epsilon_local, s_set.k
        krr = self._logs
        # p + q and 1 - p - q, each pair from the smaller (KrrParams): as a difference of logs of size eps0, p + q
        # carried an absolute error ~1e-16 eps0 that the n users' binomial weights multiply by n (issue 34: 2e-9
        # at n = 1e6, eps0 = 11)
        log_ppq, log_rest = krr.log_ppq, krr.log_rest
        # pi0 = e^eps0 / (e^eps0 + 1) and its complement, both without a difference of large logs
        log_pi0, log_1mpi0 = krr.log_alpha, krr.log_1malpha
        denominator = -math.expm1(-2.0 * e0)  # 1 - e^(-2 eps0)
        log_scale = e0 + float(log1mexp(-2.0 * e0)) - math.log(n)  # log((e^eps0 - e^-eps0) / n)

        cached = self._weight("all-x0", log_ppq, log_rest) if k > 2 else None

        def weights(s):
            return cached.of(s) if k > 2 else np.where(s == n, 0.0, -np.inf)

        # Work with B = S - A ~ Bin(s, 1 - pi0) (small mean when eps0 is large), so that no quantity of
        # size s is subtracted from another: with x = e^-eps0 and D = 1 - x^2,
        #   forward  E[(A - t_s)_+]  = E[(u_s - B)_+],  u_s  = s - t_s  = x (n (e^-eps - 1) + s (1 - x)) / D,
        #   reverse  E[(t'_s - A)_+] = E[(B - u'_s)_+], u'_s = s - t'_s = x (n (e^eps - 1) + s (1 - x)) / D,
        # and u - E[B] = n x (e^-+eps - 1) / D exactly.
        x = math.exp(-e0)
        d_forward = n * x * math.expm1(-eps) / denominator
        d_reverse = n * x * math.expm1(eps) / denominator

        large_eps = eps > math.log(2.0)

        def u_forward(s):
            # n (e^-eps - 1) + s (1 - x): for eps > log 2 as (s - n) + n e^-eps - s x (exact integer part,
            # no difference of two numbers of size n when the sum is small, e.g. eps near a large eps0)
            inner = (
                ((s - n) + n * math.exp(-eps) - s * x)
                if large_eps
                else (n * math.expm1(-eps) + s * (1.0 - x))
            )
            return x * inner / denominator

        def forward(s, keep=None):
            u = u_forward(s)
            if keep is not None:  # log_excess_below sums these rows together (one width): all in every call
                keep = keep | summed_directly(u, s)
            return weights(s) + _masked(log_excess_below, keep, u, s, log_1mpi0, log_pi0, d_forward)

        def u_reverse(s):
            return x * (n * math.expm1(eps) + s * (1.0 - x)) / denominator

        def reverse(s, keep=None):
            return weights(s) + _masked(
                log_excess_above, keep, u_reverse(s), s, log_1mpi0, log_pi0, d_reverse
            )

        p = math.exp(log_ppq)
        mean, var = n * p, n * p * (1 - p)
        # terms vanish unless t_s < s (forward) or t'_s > 0 (reverse): s above these
        s_min_forward = n * math.expm1(-eps) / math.expm1(-e0)
        s_min_reverse = n * math.expm1(eps) / math.expm1(e0)
        total_forward, total_reverse = _x0_totals(
            d_forward, d_reverse, x * (1.0 - x) / denominator, log_pi0, log_1mpi0
        )
        return (
            _Member(
                forward,
                lambda s: weights(s) + log_excess_below_bound(u_forward(s), s, log_1mpi0, log_pi0),
                mean,
                var,
                s_min_forward,
                lambda v: v + eps + log_scale,
                total_forward,
            ),
            _Member(
                reverse,
                lambda s: weights(s) + log_excess_above_bound(u_reverse(s), s, log_1mpi0, log_pi0),
                mean,
                var,
                s_min_reverse,
                lambda v: v + log_scale,
                total_reverse,
            ),
        )

    def _members(self, eps: float) -> dict[str, _Member]:
        forward, reverse = self._members_all_x0(float(eps))
        members = {"all-x0 D||D'": forward, "all-x0 D'||D": reverse}
        if self.setting.k > 2:
            members["none"] = self._member_none(float(eps))
        return members

    def member_log_deltas(self, eps: float) -> dict[str, float]:
        """log delta of each family member at ``eps`` (the accountant returns their maximum)."""
        if eps >= self.setting.epsilon_local:
            return {name: -np.inf for name in FAMILY}
        members = self._members(eps)
        forward, reverse = self._value(members["all-x0 D||D'"]), self._value(members["all-x0 D'||D"])
        none = self._value(members["none"]) if "none" in members else -np.inf
        return {"none": none, "all-x0 D||D'": forward, "all-x0 D'||D": reverse}

    def log_delta_max(self, eps: float) -> float:
        """max(:meth:`member_log_deltas`), the same value to the last bit; members are evaluated in
        decreasing order of their closed-form bounds, and one whose bound (closed form, then the rows')
        is below the largest value found is skipped (its computed value is below that bound, so it
        cannot be the maximum)."""
        if eps >= self.setting.epsilon_local:
            return -np.inf
        members = self._members(eps)
        quick = {name: self._value_bound(member, rows=False) for name, member in members.items()}
        best = -np.inf
        for name in sorted(members, key=lambda key: -quick[key]):
            if quick[name] < best or (best > -np.inf and self._value_bound(members[name]) < best):
                continue
            best = max(best, self._value(members[name]))
        return best

