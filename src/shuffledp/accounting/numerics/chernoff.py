"""Certified Chernoff (moment-generating-function) bounds on the weak adversary's delta.

With (A, C, M, R) ~ Mult(n; q, q, (k - 2) q, 1 - gamma) (the counts of the view, see
:mod:`shuffledp.accounting.accountants.weak_adversary`) the privacy-loss excess is

    n delta(eps) = E[X_+],   X = lambda A - c_S - nu M = alpha A - gamma' C - nu M,
    alpha = e^eps0 - e^eps,  gamma' = e^(eps + eps0) - 1,  nu = e^eps - 1,

(lambda a - c_s = (e^eps0 - 1)(1 + e^eps) a - (e^(eps + eps0) - 1)(a + c) expands to this). Since
x_+ <= e^(theta x - 1) / theta for every theta > 0 and 1{S <= l} <= e^(eta (l - S)),
1{S >= h} <= e^(eta (S - h)) for every eta >= 0, and the multinomial's MGF is a product,

    E[X_+ 1{S <= l}] <= exp(n log(1 - gamma + q e^(theta alpha - eta) + q e^(-theta gamma' - eta)
                                  + (k - 2) q e^(-theta nu)) + eta l - 1) / theta,

and the same with -eta -> +eta, eta l -> -eta h for the upper tail (eta = 0: the whole sum). Every
theta > 0, eta >= 0 gives a valid bound, so theta and eta are chosen on a grid (no optimiser has to
converge); the value is larger than the optimum by a polynomial factor at most (Chernoff). Used to
decide "delta <= target" without the exact sum, to return a certified value far below the accuracy
promise (e^-700), and to bound the mass of the totals S outside the summation window.

log(1 + x) is formed as log1p of x = q expm1(theta alpha) + q expm1(-theta gamma') + ... (no loss
near x = 0), and a rounding margin of n * 1e-15 * (sum of |terms|) is added, so floating point never
makes the returned bound smaller than the true Chernoff value.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.numerics.search import bisect, zoom_minimum
from shuffledp.accounting.params import KrrParams

__all__ = ["ChernoffBound", "log_low_range"]

_GRID = np.exp(np.linspace(math.log(1e-4), math.log(1e4), 65))
_FINE = np.exp(np.linspace(-math.log(1e4) / 32, math.log(1e4) / 32, 17))
#: ratio of neighbouring grid points, and the steps of one outward extension of the grid (a factor 1e8)
_GRID_STEP = float(_GRID[1] / _GRID[0])
_STEPS = np.arange(1.0, round(math.log(1e8) / math.log(_GRID_STEP)) + 1.0)
_MAX_EXTENSIONS = 30
#: below this log delta (the weak view's "beyond the promise", where the bound becomes the value) the optimum
#: over theta is refined (:meth:`ChernoffBound.log_delta`); above it the grid's value is kept as it was
_LOG_REFINE = -700.0
_ETA_GRID = np.concatenate([[0.0], np.exp(np.linspace(math.log(1e-5), math.log(50.0), 48))])


def _eighth_then_halfway(low: float, high: float) -> float:
    """The first step from 0 goes to high / 8 (delta falls steeply), later ones to the middle."""
    return 0.5 * (low + high) if low > 0 else high / 8.0


class ChernoffBound:
    """Chernoff bounds for one setting (n, k, eps0); see the module docstring."""

    def __init__(self, *, n_users: int, k: int, epsilon_local: float):
        self.n_users, self.k, self.epsilon_local = int(n_users), int(k), float(epsilon_local)
        krr = KrrParams.of(epsilon_local, k)
        self.log_q, self._log_1mgamma = krr.log_q, krr.log_1mgamma
        self.q = math.exp(self.log_q)

    def _coefficients(self, eps: float) -> tuple[float, float, float]:
        # e^eps0 - e^eps, no cancellation
        alpha = math.exp(self.epsilon_local) * -math.expm1(eps - self.epsilon_local)
        gamma = math.expm1(eps + self.epsilon_local)
        nu = math.expm1(eps)
        return alpha, gamma, nu

    def _log_mgf(self, theta, eta_lo, eta_hi, eps):
        """n log E_one[e^(theta x + eta_lo (-s) + eta_hi s)] per user (arrays broadcast), with margin."""
        alpha, gamma, nu = self._coefficients(eps)
        q, n_users = self.q, self.n_users
        shift = eta_hi - eta_lo  # exponent added to the two reports that count in S
        with np.errstate(over="ignore", invalid="ignore"):
            t1 = q * np.expm1(theta * alpha + shift)
            t2 = q * np.expm1(-theta * gamma + shift)
            t3 = (self.k - 2) * q * np.expm1(-theta * nu) if self.k > 2 else 0.0 * theta
            x = t1 + t2 + t3
            margin = n_users * 1e-15 * (np.abs(t1) + np.abs(t2) + np.abs(t3)) + 1e-12
            value = n_users * np.log1p(x) + margin
        return np.where(np.isfinite(value), value, np.inf)

    def _theta_scale(self, eps: float) -> float:
        alpha, gamma, nu = self._coefficients(eps)
        q, n_users = self.q, self.n_users
        var = n_users * (q * alpha * alpha + q * gamma * gamma + (self.k - 2) * q * nu * nu - nu * nu)
        var = max(var, 1e-300)
        return max(n_users * nu, math.sqrt(var)) / var

    def _best_theta(self, eps: float) -> float:
        """The grid's best theta. The grid (1e-4 .. 1e4 times a Gaussian-regime scale) is extended outward, a
        factor 1e8 at a time, while its best point is at an end: far in the tail the optimum lies far beyond
        it (at n = 10^8, k = 10^6, eps0 = 15 the optimum is ~10^7 times the scale, and the bound
        at the grid's end, log delta ~ -124,554, would rise with eps as the scale falls, where the optimum gives
        -2.4e7 .. -2.7e7). Every theta gives a valid bound, so the extension only lowers the value."""
        scale = self._theta_scale(eps)
        thetas = scale * _GRID
        values = self._log_mgf(thetas, 0.0, 0.0, eps) - np.log(thetas)
        for _ in range(_MAX_EXTENSIONS):
            i = int(np.argmin(values))
            if 0 < i < thetas.size - 1 or not np.isfinite(values[i]):
                break
            more = thetas[i] * _GRID_STEP ** (_STEPS if i > 0 else -_STEPS)  # outward from the end reached
            more_values = self._log_mgf(more, 0.0, 0.0, eps) - np.log(more)
            if not np.min(more_values) < values[i]:
                break
            thetas, values = (
                (np.concatenate([thetas, more]), np.concatenate([values, more_values]))
                if i > 0
                else (np.concatenate([more[::-1], thetas]), np.concatenate([more_values[::-1], values]))
            )
        best = thetas[int(np.argmin(values))]
        thetas = best * _FINE
        values = self._log_mgf(thetas, 0.0, 0.0, eps) - np.log(thetas)
        i = int(np.argmin(values))
        return float(thetas[i])

    def theta(self, eps: float) -> float:
        """The grid's best theta at ``eps`` (kept: the views ask for the same epsilons again); 0 at eps >= eps0."""
        if eps >= self.epsilon_local:
            return 0.0
        known = self.__dict__.setdefault("_thetas", {})
        if eps not in known:
            known[eps] = self._best_theta(eps)
        return known[eps]

    def tilt(self, eps: float) -> tuple[float, float, float, float]:
        """The laws of the view's counts under the exponential tilt e^(theta X) of the bound's theta:
        (log p, log(1 - p), log r, log(1 - r)) with S ~ Bin(n, p) and M | S ~ Bin(n - S, r) under that tilt
        (each user's four outcomes A, C, M, R weighted by q e^(theta alpha), q e^(-theta gamma'),
        (k - 2) q e^(-theta nu), 1 - gamma). The tilted law is where the summand E[X_+] puts its mass (the
        bound is tight up to a polynomial factor), so windows centred on it need no deep tails; it only
        places windows, nothing is certified by it. r = 0 (log r = -inf) for k = 2. Kept per epsilon."""
        known = self.__dict__.setdefault("_tilts", {})
        if eps not in known:
            known[eps] = self._tilt(eps)
        return known[eps]

    def _tilt(self, eps: float) -> tuple[float, float, float, float]:
        alpha, gamma, nu = self._coefficients(eps)
        theta = self.theta(eps)
        log_a, log_c = self.log_q + theta * alpha, self.log_q + theta * -gamma
        log_m = math.log(self.k - 2) + self.log_q - theta * nu if self.k > 2 else -math.inf
        log_r = self._log_1mgamma
        log_s = float(np.logaddexp(log_a, log_c))
        log_rest = float(np.logaddexp(log_m, log_r))
        log_total = float(np.logaddexp(log_s, log_rest))
        log_mr = log_m - log_rest if self.k > 2 else -math.inf
        return log_s - log_total, log_rest - log_total, log_mr, log_r - log_rest

    def log_delta(self, eps: float) -> float:
        """Certified upper bound on log delta(eps) (-inf for eps >= eps0, where delta = 0)."""
        if eps >= self.epsilon_local:
            return -np.inf
        theta = self.theta(eps)
        base = -1.0 - math.log(self.n_users)
        value = float(self._log_mgf(theta, 0.0, 0.0, eps)) - math.log(theta) + base
        if value < _LOG_REFINE:
            # beyond the accuracy promise this bound is returned as the weak adversary's value, so it must fall
            # with eps as delta does: the grid's minimum moves with eps by up to its resolution (a rise of 6e-5
            # at log delta -13,888: n = 10^15, k = 10, eps0 = 25), the optimum over theta does not (each theta's
            # bound falls with eps). So the optimum is refined on log theta between the fine grid's neighbours
            # (the bound is convex in theta, so unimodal in log theta): by zooming grids, one vectorised call
            # per round (60 scalar golden-section steps would cost ~10 % of Wang's grid)
            def at(log_theta):
                return self._log_mgf(np.exp(log_theta), 0.0, 0.0, eps) - log_theta

            spread = math.log(float(_FINE[1] / _FINE[0]))
            log_theta = math.log(theta)
            value = min(
                value, zoom_minimum(at, log_theta - spread, log_theta + spread, points=65, rounds=8) + base
            )
        return min(value, 0.0)

    def crossing(self, log_level: float, relative: float) -> float:
        """Smallest eps in [0, eps0] (to ``relative``, rounded up) where :meth:`log_delta` <= ``log_level``
        (bisection; the first step from 0 goes to eps0 / 8)."""
        if self.log_delta(0.0) <= log_level:
            return 0.0
        _, high = bisect(
            lambda eps: self.log_delta(eps) <= log_level,
            0.0,
            self.epsilon_local,
            wide=lambda low, high: high - low > relative * high,
            split=_eighth_then_halfway,
        )
        return high

    def log_tails(self, eps: float, lo: float, hi: float) -> tuple[float, float]:
        """Certified upper bounds on log (E[X_+ 1{S < lo}] / n) and log (E[X_+ 1{S > hi}] / n)."""
        if eps >= self.epsilon_local:
            return -np.inf, -np.inf
        theta = self.theta(eps)
        base = -math.log(theta) - 1.0 - math.log(self.n_users)
        out = []
        for side in (-1, +1):
            if (side < 0 and lo <= 0) or (side > 0 and hi >= self.n_users):
                out.append(-np.inf)
                continue
            etas = _ETA_GRID
            if side < 0:  # 1{S <= lo - 1} <= e^(eta (lo - 1 - S))
                values = self._log_mgf(theta, etas, 0.0, eps) + etas * (lo - 1.0)
            else:  # 1{S >= hi + 1} <= e^(eta (S - hi - 1))
                values = self._log_mgf(theta, 0.0, etas, eps) - etas * (hi + 1.0)
            out.append(min(float(np.min(values)) + base, 0.0))
        return out[0], out[1]

    def epsilon_hint(self, log_target: float) -> float:
        """Where the bound meets the target (to 1e-4, rounded up): a certified upper end for an epsilon
        search of any delta this bound dominates (0.0 when delta(0) is already certified below the
        target). The bound is non-increasing in epsilon (X falls pointwise as epsilon grows)."""
        return self.crossing(log_target, 1e-4)

    def epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        """The bound exceeds delta by a factor that varies slowly with epsilon: where the bound equals
        the target times that factor at ``eps`` (delta = e^log_value there), delta is close to the
        target (a guess for the search, not a certificate)."""
        if not np.isfinite(log_value):
            return None
        slack = self.log_delta(eps) - log_value
        return self.crossing(log_target + max(slack, 0.0), 1e-8)


def log_low_range(s, b, n_users, theta, lam, c_per_s, nu, log_rho, log_1mrho):
    """Certified bound on log E[X_+ 1{A <= b} | S = s] per row (X = lambda A - c_s - nu M, c_s = c_per_s s;
    the low range of the weak view's rows, :mod:`shuffledp.accounting.views.weak.rows`), +inf where it does not
    apply: with x_+ <= e^(theta x - 1) / theta and 1{A <= b} <= e^(eta (b - A)), A | s ~ Bin(s, 1/2) and
    M | s ~ Bin(n - s, rho) independent (n = ``n_users``),

        E[...] <= exp(s log((1 + e^(theta lambda - eta)) / 2) + eta b - theta c_per_s s
                      + (n - s) log(1 - rho + rho e^(-theta nu)) - 1) / theta

    for every eta >= 0; eta = max(0, theta lambda - log(b / (s - b))) (the minimiser over eta, in closed form;
    any value is valid, so its rounding does not matter). It follows A's law into its tail, where windows
    centred on a tilted law put the rows' low ranges. A rounding margin of 1e-13 of the summed
    magnitudes (and 1e-12) is added.

    Args:
        s: the rows' totals S = A + C (array).
        b: the largest A of each row's low range (array, broadcast with ``s``).
        n_users: the number of users n (M | s ~ Bin(n - s, rho)).
        theta: the tilt (> 0; otherwise every bound is +inf).
        lam: lambda, the weight of A.
        c_per_s: c_s / s.
        nu: the weight of M.
        log_rho: log rho.
        log_1mrho: log(1 - rho).

    Returns:
        The bound on the log of each row's low-range excess (+inf where it does not apply).
    """
    out = np.full(np.shape(s), np.inf)
    if not theta > 0.0:
        return out
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        logit = np.log(b) - np.log(s - b)  # b / s = e^(theta lambda - eta) / (1 + e^(theta lambda - eta))
        eta = np.where(b > 0, np.maximum(theta * lam - logit, 0.0), theta * lam + 50.0)
        log_m = float(np.logaddexp(log_1mrho, log_rho - theta * nu)) if log_rho > -np.inf else 0.0
        t_a = s * (np.logaddexp(0.0, theta * lam - eta) - math.log(2.0))
        t_b = eta * b
        t_c = theta * c_per_s * s
        t_m = (n_users - s) * log_m
        value = t_a + t_b - t_c + t_m - 1.0 - math.log(theta)
        value += 1e-13 * (np.abs(t_a) + np.abs(t_b) + np.abs(t_c) + np.abs(t_m)) + 1e-12
    return np.where(np.isfinite(value), value, out)
