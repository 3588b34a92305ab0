"""The one-value member's sum at many epsilons from tables built once per (n, k, eps0).

The member is "every other user on one third value x2" (:mod:`shuffledp.accounting.worst_case.families.third_value`,
whose module doc derives the sum); with E = e^eps0, kappa = (e^eps - 1) / E,

    delta(eps) = ((E - 1) kappa / n) sum_{s, h0} Bin(n, 2q)(s) Bin(s, 1/2)(h0) E[(h2 - theta)_+],
    theta = E n / (E - 1) + E h1 + E (h1 - h0) / (e^eps - 1),   h1 = s - h0,   h2 | s ~ Bin(n - s, pi2).

Nothing in the tables depends on epsilon: per row s of a window of s, the pmf of h0 | s and of h2 | s
over windows of +-(12 sd + 40) around their means, and their tail sums T(j) = P(X >= j) and
R(j) = sum_{i > j} T(i) = E[(X - j)_+] (sums of positive terms, each row scaled by its largest pmf).

**Any integer J gives a lower value.** sum_{j >= J} (j - theta) pmf(j) = R(J) + (J - theta) T(J) is at
most E[(h2 - theta)_+] for every integer J (the terms with j < theta it keeps are negative, those it drops
are positive), and equals it for J = floor(theta) + 1 (up to the window). So per epsilon:

* cells with theta <= L (the h2 window's lowest count), i.e. h0 >= a(s): J = L, and theta is linear in h0
  (slope -g, g = E (e^eps + 1) / (e^eps - 1)), so their sum over h0 is closed form in the tail sums of
  h0 | s: [R2(L) + (L - theta(a)) T2(L)] T0(a) + g T2(L) R0(a), all terms positive;
* cells with L < theta < U + 1 (a band of about (U - L) / g values of h0 per row): one table look-up each;
* cells with theta >= U + 1: 0 (dropped; their total is bounded below).

theta is formed as three terms with relative errors of a few ulp (h1 - h0 is an exact integer: no
difference of large numbers) and raised by a bound on its rounding (E[(h2 - theta)_+] falls in theta),
g is lowered by 8 ulp: every row is a lower value of its exact sum. Every value left out (outside the
windows of s, h0 and h2) is positive, so the result is a LOWER bound on the member's delta.

**When it is used.** :meth:`OneValueTables.log_delta` returns None (the caller then uses the adaptive sum
of :mod:`~shuffledp.accounting.worst_case.families.third_value`) unless the windows provably hold all but e^-40 of
the sum: the first and last rows of s each below e^-40 of it, and the h2 mass above U (a certified bound,
:func:`~shuffledp.accounting.numerics.binomial.log_excess_above_bound` at U per row) below e^-40 of it.
The windows of h0 | s and of h2 below L drop less than e^-70 of each row's value (12 standard deviations).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from shuffledp._numerics import logsumexp
from shuffledp.accounting.numerics.binomial import LogPmfRange, log_excess_above_bound, log_pmf, log_sf_bound
from shuffledp.accounting.params import KrrParams

__all__ = ["OneValueTables"]

_LOG_EDGE = 40.0
#: half-widths of the windows in standard deviations (plus 40): of s, of h0 | s and h2 | s below the mean, and
#: of h0 | s and h2 | s above it (the deep tails of delta, eps near eps0, tilt both upwards: n = 10^4, k = 10)
_SDS, _SDS_LOW, _SDS_HIGH = 20.0, 14.0, 40.0
_U = 2.0**-53
_LOG_HALF = math.log(0.5)
#: the exponents tried by :meth:`OneValueTables.log_bound` (any phi > 0 is valid; the grid only makes it tight)
_PHIS = np.exp(np.linspace(-14.0, 4.0, 181))


def _log_pmf_rows(
    trials: np.ndarray,
    low: np.ndarray,
    top: np.ndarray,
    width: int,
    log_pi: float,
    log_1mpi: float,
    log_int: np.ndarray,
) -> np.ndarray:
    """log Bin(trials, pi)(low + j), j < width, per row (-inf above ``top``).

    One value per row from :func:`~shuffledp.accounting.numerics.binomial.log_pmf` at the mode (moved into
    the window), the others by the ratio recurrence log pmf(x + 1) - log pmf(x) = log(N - x) - log(x + 1) +
    log(pi / (1 - pi)) summed outwards from it (``log_int``: log of the integers, one table). The pmf is
    log-concave, so along the path from the mode the partial sums and steps grow in size: the rounding
    at column c is at most 2 u (|c - a| + 1)(|log ratio to the mode| + 4 max |step|), ~1e-13 near the
    mode and below 5e-10 wherever a term is within e^-1000 of the mode (width <= 2400): inside the 1e-9
    that ``worst-case-lower`` takes off this member's value."""
    cols = np.arange(width)[None, :]
    lo, ti = low.astype(np.int64), trials.astype(np.int64)
    # log(x + 1) and log(max(N - x, 1)) at x = low + j: each row a contiguous window of one padded table of
    # log_int (row copies instead of one gather per cell; the same numbers). Columns above ``top``
    # hold finite values that only the columns above ``top`` read (set to -inf at the end).
    up = sliding_window_view(np.concatenate([log_int, np.zeros(width + 1)]), width)[lo + 1]
    down = sliding_window_view(np.concatenate([log_int[::-1], np.zeros(width)]), width)[
        log_int.size - 1 - (ti - lo)
    ]
    step = down - up + (log_pi - log_1mpi)
    anchor = np.clip(np.floor((trials + 1.0) * math.exp(log_pi)), low, top)
    a_col = (anchor - low).astype(np.int64)[:, None]
    a_min, a_max = int(a_col.min()), int(a_col.max())
    # sum_{a <= j < c} step_j right of the anchor, - sum_{c <= j < a} step_j left of it; each cumulative sum
    # runs only over the columns where some row has terms (the zeros it skips add exactly nothing)
    out = np.zeros(step.shape)
    out[:, a_min + 1 :] = np.cumsum(
        np.where(cols[:, a_min : width - 1] >= a_col, step[:, a_min : width - 1], 0.0), axis=1
    )
    if a_max > 0:
        left = np.cumsum(np.where(cols[:, :a_max] >= a_col, 0.0, step[:, :a_max])[:, ::-1], axis=1)[:, ::-1]
        np.subtract(out[:, :a_max], left, out=out[:, :a_max], where=cols[:, :a_max] < a_col)
    out += log_pmf(anchor, trials, log_pi, log_1mpi)[:, None]
    out[cols > (top - low)[:, None]] = -np.inf
    return out


def _tails(log_pmf_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(pmf, T, R, log scale) per row of a table of log pmf values (-inf outside the support): T[j] = sum over
    columns >= j, R[j] = sum of T over columns > j, both divided by e^scale (the row's largest pmf). T and R
    have one more column (0 there), so that column index width means "above the window"."""
    scale = np.max(log_pmf_rows, axis=1)
    scale = np.where(np.isfinite(scale), scale, 0.0)
    pmf = np.exp(log_pmf_rows - scale[:, None])
    rows, width = pmf.shape
    tail = np.zeros((rows, width + 1))
    tail[:, :width] = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
    excess = np.zeros((rows, width + 1))
    excess[:, :width] = np.cumsum(tail[:, :0:-1], axis=1)[:, ::-1]  # R[j] = sum_{i > j} T[i]
    return pmf, tail, excess, scale


class OneValueTables:
    """Tables of "every other user on x2" for one (n, k >= 4, eps0) and its log delta at any epsilon
    (module doc); the tables are built on first use."""

    def __init__(self, *, n_users: int, k: int, epsilon_local: float):
        self.n_users, self.k, self.epsilon_local = int(n_users), int(k), float(epsilon_local)
        self._built = False

    def _build(self) -> None:
        n, e0 = self.n_users, self.epsilon_local
        krr = KrrParams.of(e0, self.k)
        q2 = math.exp(krr.log_2q)
        sd = math.sqrt(n * q2 * (1.0 - q2))
        lo, hi = max(0, int(n * q2 - _SDS * sd - 40.0)), min(n, int(math.ceil(n * q2 + _SDS * sd + 40.0)))
        s = np.arange(lo, hi + 1, dtype=float)
        self.s = s
        self.log_w = LogPmfRange(n, krr.log_2q, krr.log_1m2q).of(s)  # Bin(n, 2q)(s)
        # h0 | s ~ Bin(s, 1/2): columns c0(s) + j
        sd0 = np.sqrt(0.25 * s)
        self.c0 = np.maximum(np.floor(0.5 * s - _SDS_LOW * sd0 - 40.0), 0.0)
        top0 = np.minimum(s, np.ceil(0.5 * s + _SDS_HIGH * sd0 + 40.0))
        width0 = int(np.max(top0 - self.c0)) + 1
        log_int = np.log(np.maximum(np.arange(n + 2, dtype=float), 1.0))
        log_b = _log_pmf_rows(s, self.c0, top0, width0, _LOG_HALF, _LOG_HALF, log_int)
        self.b0, self.t0, self.r0, self.scale0 = _tails(log_b)
        # h2 | s ~ Bin(n - s, pi2): columns L(s) + j
        self.log_pi2, self.log_1mpi2 = krr.third_value_logs
        pi2 = math.exp(self.log_pi2)
        m = n - s
        sd2 = np.sqrt(m * pi2 * (1.0 - pi2))
        self.low2 = np.maximum(np.floor(m * pi2 - _SDS_LOW * sd2 - 40.0), 0.0)
        top2 = np.minimum(np.ceil(m * pi2 + _SDS_HIGH * sd2 + 40.0), m)
        width2 = int(np.max(top2 - self.low2)) + 1
        log_h2 = _log_pmf_rows(m, self.low2, top2, width2, self.log_pi2, self.log_1mpi2, log_int)
        _, self.t2, self.r2, self.scale2 = _tails(log_h2)
        self.width2 = width2
        self.top2 = top2
        # what the h2 window drops above U in a row, certified: sum_{j > U} (j - theta) pmf(j) <=
        # E[(h2 - U)_+] + (U - theta)_+ P(h2 > U), and the cells kept have theta >= L - (their value) ... the
        # second term is counted as width2 P(h2 > U) for the band (theta >= L) and relative to the value for
        # the cells below L (at most P(h2 > U) / P(h2 >= L) of it)
        self.log_above = self.log_w + np.logaddexp(
            log_excess_above_bound(top2, m, self.log_pi2, self.log_1mpi2),
            math.log(width2 + 1.0) + log_sf_bound(top2 + 1.0, m, self.log_pi2, self.log_1mpi2),
        )
        self._built = True

    def _theta_up(self, h0: np.ndarray, s: np.ndarray, eps: float) -> np.ndarray:
        """theta at (s, h0), raised by a bound on its rounding (a lower value of the excess follows)."""
        E, em1 = math.exp(self.epsilon_local), math.expm1(eps)
        first = E * self.n_users / math.expm1(self.epsilon_local)
        h1 = s - h0
        second, third = E * h1, E * (h1 - h0) / em1
        theta = (first + second) + third
        return theta + 8.0 * _U * (abs(first) + np.abs(second) + np.abs(third)) + 4.0 * _U * np.abs(theta)

    def _band(self, eps: float, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """Per row, sum over h0 in [start, stop) (column indices) of B(h0) [R2(J) + (J - theta) T2(J)]_+."""
        rows = self.s.size
        count = np.maximum(stop - start, 0)
        width = int(np.max(count)) if rows else 0
        if width == 0:
            return np.zeros(rows)
        j = start[:, None] + np.arange(width)[None, :]
        keep = j < stop[:, None]
        r_idx, _ = np.nonzero(keep)
        col = j[keep]
        h0 = self.c0[r_idx] + col
        theta = self._theta_up(h0, self.s[r_idx], eps)
        J = np.clip(np.floor(theta) + 1.0, self.low2[r_idx], self.top2[r_idx] + 1.0)
        J_col = (J - self.low2[r_idx]).astype(np.int64)
        value = self.r2[r_idx, J_col] + (J - theta) * self.t2[r_idx, J_col]
        return np.bincount(r_idx, weights=self.b0[r_idx, col] * np.maximum(value, 0.0), minlength=rows)

    def log_delta(self, eps: float) -> float | None:
        """log delta (D || D') at ``eps`` in (0, eps0), or None when the windows do not certify e^-40 (module doc)."""
        if not self._built:
            self._build()
        E, em1 = math.exp(self.epsilon_local), math.expm1(eps)
        g = E * (math.exp(eps) + 1.0) / em1 * (1.0 - 8.0 * _U)
        s, low2 = self.s, self.low2
        # theta(h0) = c(s) - g h0: theta <= L from h0 >= a(s); theta < U + 1 from h0 > b(s)
        with np.errstate(over="ignore"):  # an overflow to inf is refused just below (not served here)
            c = E * self.n_users / math.expm1(self.epsilon_local) + E * s + E * s / em1
        if not (
            math.isfinite(g) and np.isfinite(c).all()
        ):  # e^eps - 1 underflows (eps ~ 1e-308): not served here
            return None
        width0 = self.t0.shape[1] - 1
        a_col = np.clip(np.ceil((c - low2) / g) + 1.0 - self.c0, 0, width0).astype(
            np.int64
        )  # +1: rounding margin
        b_col = np.clip(np.floor((c - self.top2 - 1.0) / g) - 1.0 - self.c0, 0, width0).astype(np.int64)
        b_col = np.minimum(b_col, a_col)
        rows = np.arange(s.size)
        theta_a = self._theta_up(self.c0 + a_col, s, eps)
        t2_low, r2_low = self.t2[:, 0], self.r2[:, 0]
        region_a = (r2_low + (low2 - theta_a) * t2_low) * self.t0[rows, a_col] + g * t2_low * self.r0[
            rows, a_col
        ]
        row_sum = np.maximum(region_a, 0.0) + self._band(eps, b_col, a_col)
        with np.errstate(divide="ignore"):
            log_rows = np.log(row_sum) + self.scale0 + self.scale2 + self.log_w
        total = float(logsumexp(log_rows))
        if not np.isfinite(total):
            return None
        dropped = max(float(log_rows[0]), float(log_rows[-1]), float(logsumexp(self.log_above)))
        if dropped > total - _LOG_EDGE:
            return None
        return (
            total
            + math.log(math.expm1(self.epsilon_local))
            + math.log(em1)
            - self.epsilon_local
            - math.log(self.n_users)
        )

    def log_bound(self, eps: float) -> float:
        """Certified upper bound on the member's log delta at ``eps`` (a Chernoff bound: the accountant skips
        the member where this is below another member's value). With Y the bracket of
        delta = ((E - 1) / n) E_M[(Y)_+], Y = h0 - e^eps h1 + (e^eps - 1) h2 / E - (e^eps - 1) n / (E - 1) linear
        in the multinomial counts (cells q, q, p, (k - 3) q), x_+ <= e^(phi x - 1) / phi gives for every
        phi > 0: log delta <= log((E - 1) / n) - 1 - log phi - phi (e^eps - 1) n / (E - 1)
        + n log(q e^phi + q e^(-phi e^eps) + p e^(phi (e^eps - 1) / E) + (k - 3) q); minimum over a grid of
        phi, raised by 1e-9 relative (the rounding of n log(...), ~n 1e-16, is far below it)."""
        if eps >= self.epsilon_local or eps <= 0.0:
            return -np.inf
        krr = KrrParams.of(self.epsilon_local, self.k)
        E, em1 = math.exp(self.epsilon_local), math.expm1(eps)
        phi = _PHIS
        cells = np.stack(
            [
                krr.log_q + phi,
                krr.log_q - phi * math.exp(eps),
                krr.log_p + phi * em1 / E,
                np.full(phi.shape, math.log(self.k - 3.0) + krr.log_q if self.k > 3 else -np.inf),
            ]
        )
        with np.errstate(over="ignore", invalid="ignore"):
            value = (
                -1.0
                - np.log(phi)
                - phi * em1 * self.n_users / math.expm1(self.epsilon_local)
                + self.n_users * logsumexp(cells, axis=0)
            )
        value = value[np.isfinite(value)]
        if not value.size:
            return np.inf
        best = float(np.min(value)) + math.log(math.expm1(self.epsilon_local)) - math.log(self.n_users)
        return best + 1e-9 * (1.0 + abs(best))
