"""The rows of the family's members: for each explicit dataset, the log terms of its delta as a sum over s
(:class:`RowSum`), with certified bounds on the same terms and on the whole sum; summed by
:class:`~shuffledp.accounting.worst_case.families.sums.FamilySums`.

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

"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import (
    LogPmfRange,
    log_excess_above,
    log_excess_above_bound,
    log_excess_below,
    log_excess_below_bound,
    summed_directly,
)
from shuffledp.accounting.params import KrrParams, ShuffleSetting

__all__ = ["RowSum", "all_x0_rows", "masked", "none_rows", "x0_totals"]


class RowSum:
    """One family member at one epsilon: ``rows(s, keep=None)`` (log terms of the sum over s; with a mask
    ``keep`` only those rows are evaluated, the others are -inf), ``bound(s)`` (certified upper bounds
    on the same terms, elementary operations only), the window's mean, variance and smallest s, and
    ``finish`` (the constant added to the log sum); ``total`` (phi -> (pre, log g), optional) gives a
    certified bound on the whole sum over s (the family sums' moment bound). ``rising`` (optional), for a
    member whose terms are w(s) g(s) with w the binomial weights and g non-decreasing in s: ``rising(s)`` is
    log g(s) alone (the family sums' coarse sum at huge windows), with ``weight`` the law of w."""

    __slots__ = ("bound", "finish", "mean", "rising", "rows", "s_min", "total", "var", "weight")

    def __init__(self, rows, bound, mean, var, s_min, finish, total=None, rising=None, weight=None):
        self.rows, self.bound, self.mean, self.var, self.s_min, self.finish = (
            rows,
            bound,
            mean,
            var,
            s_min,
            finish,
        )
        self.total = total
        self.rising, self.weight = rising, weight


def masked(function, keep, t, n_trials, *args):
    """``function(t, n_trials, *args)`` (a binomial excess, elementwise) on the rows ``keep`` only; -inf elsewhere
    (array arguments are taken at the same rows, scalars as they are)."""
    if keep is None:
        return function(t, n_trials, *args)
    out = np.full(t.shape, -np.inf)
    if keep.any():
        out[keep] = function(t[keep], n_trials[keep], *(a[keep] if np.ndim(a) else a for a in args))
    return out


def x0_totals(d_forward, d_reverse, gamma, log_pi0, log_1mpi0):
    """The moment generating functions of "all on x0" for the family sums' moment bound: u_s = d + gamma s and
    B | S ~ Bin(S, 1 - pi0); Y = u_S - B (forward), B - u'_S (reverse)."""

    def total_forward(phi):
        return phi * d_forward, phi * gamma + np.logaddexp(log_pi0, log_1mpi0 - phi)

    def total_reverse(phi):
        return -phi * d_reverse, -phi * gamma + np.logaddexp(log_pi0, log_1mpi0 + phi)

    return total_forward, total_reverse


def none_rows(setting: ShuffleSetting, krr: KrrParams, weight: LogPmfRange, eps: float) -> RowSum:
    """The rows of "none" at ``eps`` (module docstring); ``weight``: the law of S ~ Bin(n, 2q), kept by the caller."""
    s_set, logs = setting, krr
    n = s_set.n_users
    log_lam = logs.log_beta + float(np.logaddexp(0.0, eps))
    rho = math.exp(logs.log_rho)
    half = math.log(0.5)
    c_per_s, extra = math.expm1(eps + s_set.epsilon_local), math.expm1(eps) * rho
    # t_s - s / 2 = nu (s ((e^eps0 + 1) / 2 - rho) + rho n) / lambda, without cancellation
    slope = 0.5 * (math.exp(s_set.epsilon_local) + 1.0) - rho

    # s - t_s = (s (lambda - c) - extra (n - s)) / lambda with lambda - c = e^eps0 - e^eps, without the
    # difference of t_s and s (near eps0 they agree to ~e^-eps digits, and t_s alone has lost them)
    gap = math.exp(eps) * math.expm1(s_set.epsilon_local - eps)

    def rows(s, keep=None):
        t = (s * c_per_s + extra * (n - s)) / math.exp(log_lam)
        d = math.expm1(eps) * (s * slope + rho * n) / math.exp(log_lam)
        log_weight = weight.of(s)
        u = (s * gap - extra * (n - s)) / math.exp(log_lam)
        # t_s > s - 1: only A = s exceeds it, E[(A - t_s)_+] = (s - t_s) 2^-s; taken where s - t_s from t_s
        # would carry a relative error above 100 ulp (s - t_s < s / 100), elsewhere the sum below is as exact.
        # Those rows are not summed there: t and d carry their own roundings, and where s - t_s is a few ulp
        # of s (eps0 = 17, n = 2, k = 3, eps = eps0 - 1.1e-8, s = 2: s - t_s = 9.1e-16) the gap the excess
        # forms from d, s / 2 - d, came out -1.3e-15, whose log is NaN (a row replaced here all the same)
        near = (u < np.minimum(1.0, 0.01 * s)) & (u > 0.0)
        if not np.any(near):
            return log_weight + masked(log_excess_above, keep, t, s, half, half, d)
        summed = ~near if keep is None else keep & ~near
        out = log_weight + masked(log_excess_above, summed, t, s, half, half, d)
        return np.where(near, log_weight + np.log(np.where(near, u, 1.0)) + s * half, out)

    def bound(s):
        t = (s * c_per_s + extra * (n - s)) / math.exp(log_lam)
        return weight.of(s) + log_excess_above_bound(t, s, half, half)

    p = math.exp(logs.log_2q)
    # E[(A - t_s)_+] > 0 needs t_s < s, i.e. s > extra n / (lambda - c + extra)
    s_min = extra * n / (math.exp(log_lam) - c_per_s + extra) if extra > 0 else 0.0

    # t_s = extra n / lambda + s (c - extra) / lambda, A | S ~ Bin(S, 1/2)
    def total(phi):
        lam = math.exp(log_lam)
        return -phi * extra * n / lam, -phi * (c_per_s - extra) / lam + np.logaddexp(0.0, phi) - math.log(2.0)

    return RowSum(rows, bound, n * p, n * p * (1 - p), s_min, lambda v: v + log_lam - math.log(n), total)


def all_x0_rows(
    setting: ShuffleSetting, krr: KrrParams, weight: LogPmfRange | None, eps: float
) -> tuple[RowSum, RowSum]:
    """The rows of "all on x0" at ``eps``, D || D' and D' || D (module docstring); ``weight``: the law of
    S ~ Bin(n, p + q) (None for k = 2, where S = n), kept by the caller."""
    s_set = setting
    n, e0, k = s_set.n_users, s_set.epsilon_local, s_set.k
    # p + q, from the smaller of each pair (KrrParams): as a difference of logs of size eps0, p + q carried an
    # absolute error ~1e-16 eps0 that the n users' binomial weights multiply by n (2e-9 at n = 1e6, eps0 = 11)
    log_ppq = krr.log_ppq
    # pi0 = e^eps0 / (e^eps0 + 1) and its complement, both without a difference of large logs
    log_pi0, log_1mpi0 = krr.log_alpha, krr.log_1malpha
    denominator = -math.expm1(-2.0 * e0)  # 1 - e^(-2 eps0)
    log_scale = e0 + float(log1mexp(-2.0 * e0)) - math.log(n)  # log((e^eps0 - e^-eps0) / n)

    cached = weight

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
            ((s - n) + n * math.exp(-eps) - s * x) if large_eps else (n * math.expm1(-eps) + s * (1.0 - x))
        )
        return x * inner / denominator

    def forward(s, keep=None):
        u = u_forward(s)
        if keep is not None:  # log_excess_below sums these rows together (one width): all in every call
            keep = keep | summed_directly(u, s)
        return weights(s) + masked(log_excess_below, keep, u, s, log_1mpi0, log_pi0, d_forward)

    def u_reverse(s):
        return x * (n * math.expm1(eps) + s * (1.0 - x)) / denominator

    def reverse(s, keep=None):
        return weights(s) + masked(log_excess_above, keep, u_reverse(s), s, log_1mpi0, log_pi0, d_reverse)

    # g(s) = E[(u_s - B_s)_+] and E[(B_s - u'_s)_+] are non-decreasing in s: u_s and u'_s rise by exactly
    # 1 - pi0 per row, as E[B_s] does, so one more row adds to B_s - u_s an independent step of mean 0, and the
    # expected positive part of a convex function of it can only grow (Jensen)
    def forward_excess(s):
        return log_excess_below(u_forward(s), s, log_1mpi0, log_pi0, d_forward)

    def reverse_excess(s):
        return log_excess_above(u_reverse(s), s, log_1mpi0, log_pi0, d_reverse)

    p = math.exp(log_ppq)
    mean, var = n * p, n * p * (1 - p)
    # terms vanish unless t_s < s (forward) or t'_s > 0 (reverse): s above these
    s_min_forward = n * math.expm1(-eps) / math.expm1(-e0)
    s_min_reverse = n * math.expm1(eps) / math.expm1(e0)
    total_forward, total_reverse = x0_totals(
        d_forward, d_reverse, x * (1.0 - x) / denominator, log_pi0, log_1mpi0
    )
    return (
        RowSum(
            forward,
            lambda s: weights(s) + log_excess_below_bound(u_forward(s), s, log_1mpi0, log_pi0),
            mean,
            var,
            s_min_forward,
            lambda v: v + eps + log_scale,
            total_forward,
            forward_excess if s_set.required_k > 2 else None,
            weight,
        ),
        RowSum(
            reverse,
            lambda s: weights(s) + log_excess_above_bound(u_reverse(s), s, log_1mpi0, log_pi0),
            mean,
            var,
            s_min_reverse,
            lambda v: v + log_scale,
            total_reverse,
            reverse_excess if s_set.required_k > 2 else None,
            weight,
        ),
    )
