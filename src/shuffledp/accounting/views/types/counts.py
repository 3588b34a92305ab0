"""One user hidden among the counts of a multinomial: the pair every view over output types reduces to.

**The pair.** N = (N_1, ..., N_T) are the counts of T cells among n trials of a multinomial with cell
probabilities p_t, plus possibly one *uncounted* cell of probability p_rest = 1 - sum_t p_t (its count is
n - sum_t N_t). Two laws on N, for weights u_t, v_t >= 0 with sum_t p_t u_t = sum_t p_t v_t = 1:

    P(N) = Mult_n(N) (sum_t N_t u_t) / n,        Q(N) = Mult_n(N) (sum_t N_t v_t) / n.

Both the weak adversary's view over output types and the type counts of an explicit dataset have this form
(docs/weak-adversary-types.md). The privacy loss is log(sum N_t u_t / sum N_t v_t) and, with
c_t = u_t - e^eps v_t,

    delta(eps) = (1 / n) E_Mult[(sum_t N_t c_t)_+]      (the REMOVE direction; ADD exchanges u and v).

**Exact sum.** One counted cell i (the *inner* one) is summed in closed form: given the other counts
(the *outer* cells, s of them in all), N_i ~ Bin(n - s, p_i / (1 - sum_outer p)) and E[(tau + c_i N_i)_+]
is an expected excess of a binomial (:func:`~shuffledp.accounting.numerics.binomial.log_excess_above`,
:func:`~shuffledp.accounting.numerics.binomial.log_excess_below`: positive terms in log space, no
truncation). The outer counts run over a product of windows, each outer count's probability formed as a
product of conditional binomials in Loader's form (full relative precision at any n). So the work is the
product of the outer windows' widths: two outer cells (three counted cells) at n = 10^6 is ~10^7 cells per
epsilon; four counted cells are practical up to n ~ 10^4 (:data:`MAX_CELLS` refuses more, in one line).

**Certified remainder.** The windows are Bernstein windows of the *tilted* marginals: for theta > 0,
x_+ <= e^(theta x - 1) / theta gives for any set W of outer counts

    (1 / n) E[(S)_+ ; N_outer not in W] <= (M(theta)^n / (e theta n)) Pr~(N_outer not in W)
                                        <= (M(theta)^n / (e theta n)) sum_t Pr~(N_t not in W_t),

with M(theta) = p_rest + sum_t p_t e^(theta c_t) the moment generating function of one trial's term and
Pr~ the tilted multinomial (cell probabilities p_t e^(theta c_t) / M(theta)), whose marginals are
binomials with exact tails (:func:`~shuffledp.accounting.numerics.windows.log_outside`). theta minimises
the Chernoff bound M(theta)^n / (e theta n) on the whole delta, so the windows sit where the summand puts
its mass and K = 8 certifies deltas far in the tail. An upper bound adds the remainder; a lower bound
drops it. The window widens until the remainder is below 1e-11 of the sum (or K = 40).

**The stream.** :func:`stream` yields every count vector N in the (untilted) windows with its
(log P, log Q); the P-mass outside is at most max_t u_t Pr(N not in W) (since sum N_t u_t <= n max u), and
Pr(N not in W) <= sum_t Pr(N_t not in W_t) (exact binomial tails). It serves the generic derived
quantities (PLD, Renyi moments) at small n and the tests.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.binomial import (
    log_excess_above,
    log_excess_above_bound,
    log_excess_below,
    log_excess_below_bound,
    log_pmf,
)
from shuffledp.accounting.numerics.windows import bernstein_window, log_outside

__all__ = [
    "CountPair",
    "dominated",
    "grid_windows",
    "log_delta_grid",
    "tilted_windows",
    "MAX_CELLS",
    "LOG_NEGLIGIBLE",
    "MAX_WINDOW_K",
    "stream",
    "stream_left_out",
    "stream_windows",
]

#: the most outer count vectors one evaluation visits (beyond it a one-line refusal names n_users)
MAX_CELLS = 4 * 10**8
#: the certified remainder counts as negligible below this fraction of the sum (log)
LOG_NEGLIGIBLE = math.log(1e-11)
#: the widest window (e^(-800) outside each side)
MAX_WINDOW_K = 40.0
_START_K = 8.0
_CHUNK = 1 << 21  # outer count vectors per vectorised batch


def _log_sum_without(log_values: np.ndarray, log_extra: float, skip) -> float:
    """log(extra + sum of exp(log_values) over the indices not in ``skip``)."""
    keep = [v for t, v in enumerate(log_values) if t not in skip]
    return float(logsumexp(np.array([*keep, log_extra])))


def _count_vectors(n_trials: int, outer, windows, per_row: int = 1) -> Iterator[np.ndarray]:
    """The count vectors of the cells ``outer`` in the product of windows with sum <= n, in batches of at
    most :data:`_CHUNK` / ``per_row`` rows (one row per vector)."""
    if not outer:
        yield np.zeros((1, 0))
        return
    first_lo, first_hi = windows[0]
    rest = [np.arange(lo, hi + 1, dtype=float) for lo, hi in windows[1:]]
    tail = (
        np.array(list(itertools.product(*rest)), dtype=float).reshape(-1, len(rest))
        if rest
        else np.zeros((1, 0))
    )
    per = max(1, _CHUNK // max(1, tail.shape[0] * per_row))
    for start in range(first_lo, first_hi + 1, per):
        heads = np.arange(start, min(first_hi, start + per - 1) + 1, dtype=float)
        block = np.hstack([np.repeat(heads, tail.shape[0])[:, None], np.tile(tail, (heads.size, 1))])
        block = block[block.sum(axis=1) <= n_trials]
        if block.size:
            yield block


def _log_inner(tau, trials, ci: float, log_pi: float, log_1mpi: float, bound: bool) -> np.ndarray:
    """log E[(tau + ci M)_+], M ~ Bin(trials, pi): exact (positive terms), or with ``bound`` a cheap
    certified upper bound (:func:`~shuffledp.accounting.numerics.binomial.log_excess_above_bound`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if log_1mpi == -np.inf or ci == 0:  # M = trials (or M does not count): no sum
            return np.log(np.maximum(tau + ci * trials if log_1mpi == -np.inf else tau, 0.0))
        if ci > 0:
            above = log_excess_above_bound if bound else log_excess_above
            return math.log(ci) + above(-tau / ci, trials, log_pi, log_1mpi)
        below = log_excess_below_bound if bound else log_excess_below
        return math.log(-ci) + below(tau / -ci, trials, log_pi, log_1mpi)


@dataclass(frozen=True, eq=False)
class CountPair:
    """The pair (P, Q) of the module docstring.

    Attributes:
        n_trials: n, the number of trials (users), >= 1.
        log_p: shape (T,): log p_t of the counted cells.
        log_rest: log p_rest of the uncounted cell (-inf: none).
        log_u: shape (T,): log u_t (P's weights).
        log_v: shape (T,): log v_t (Q's weights).
    """

    n_trials: int
    log_p: np.ndarray
    log_rest: float
    log_u: np.ndarray
    log_v: np.ndarray

    def __post_init__(self):
        for name in ("log_p", "log_u", "log_v"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=float))
        if not (self.log_p.ndim == 1 and self.log_p.shape == self.log_u.shape == self.log_v.shape):
            raise ValueError(
                f"`log_p`, `log_u` and `log_v` must be 1-D of one shape; got {self.log_p.shape}, "
                f"{self.log_u.shape}, {self.log_v.shape}."
            )
        if not (isinstance(self.n_trials, int | np.integer) and self.n_trials >= 1):
            raise ValueError(f"`n_users` must be an integer >= 1; got {self.n_trials!r}.")
        # the pair is immutable: each epsilon's Chernoff minimisation is done once (:meth:`chernoff`)
        object.__setattr__(self, "_chernoff_at", {})

    @property
    def n_cells(self) -> int:
        """T, the number of counted cells."""
        return int(self.log_p.size)

    def exchanged(self) -> CountPair:
        """The ADD direction: u and v exchanged."""
        return CountPair(self.n_trials, self.log_p, self.log_rest, self.log_v, self.log_u)

    def is_symmetric(self) -> bool:
        """Whether exchanging u and v permutes the cells (then both directions have one delta)."""
        mine = sorted(zip(self.log_p.tolist(), self.log_u.tolist(), self.log_v.tolist(), strict=True))
        theirs = sorted(zip(self.log_p.tolist(), self.log_v.tolist(), self.log_u.tolist(), strict=True))
        return mine == theirs

    def coefficients(self, eps: float) -> np.ndarray:
        """c_t = u_t - e^eps v_t = u_t (1 - e^(eps + log v_t - log u_t)), one rounding per factor."""
        return np.exp(self.log_u) * -np.expm1(eps + self.log_v - self.log_u)

    def has_positive(self, eps: float) -> bool:
        """Whether some c_t > 0 (else delta = 0 at ``eps``)."""
        return bool((self.coefficients(eps) > 0).any())

    # ------------------------------------------------------------------ Chernoff bound and its tilt
    def _log_mgf(self, theta: float, c: np.ndarray) -> float:
        return float(logsumexp(np.append(self.log_p + theta * c, self.log_rest)))

    def chernoff(self, eps: float) -> tuple[float, float]:
        """(log of the Chernoff bound M(theta)^n / (e theta n) on delta, theta), theta minimising it.

        Args:
            eps: the epsilon, >= 0, with some c_t > 0.

        Returns:
            The log bound and its theta.
        """
        known = self._chernoff_at  # type: ignore[attr-defined]
        if eps not in known:  # one evaluation asks for it up to five times (the cap, the windows, each plan)
            known[eps] = _minimised_chernoff(self, eps)
        return known[eps]

    # ------------------------------------------------------------------ the exact sum
    def plan_windows(self, eps: float, K: float = _START_K) -> list[tuple[int, int]]:
        """The outer cells' windows the exact sum would visit at ``eps`` and window K (some c_t > 0)."""
        return self._plan(eps, K)[3]

    def _plan(self, eps: float, K: float):
        """(inner cell, outer cells, their windows (lo, hi), log remainder) at window K on the tilted law."""
        c = self.coefficients(eps)
        log_bound, theta = self.chernoff(eps)
        log_m = self._log_mgf(theta, c)
        tilted = self.log_p + theta * c - log_m
        tilted_rest = self.log_rest - log_m
        pt = np.exp(tilted)
        inner = int(np.argmax(pt * (1.0 - pt)))
        outer = [t for t in range(self.n_cells) if t != inner]
        windows, outside = [], []
        for t in outer:
            log_1m = _log_sum_without(tilted, tilted_rest, {t})
            lo, hi = bernstein_window(self.n_trials, float(tilted[t]), log_1m, K)
            windows.append((int(lo), int(hi)))
            outside.append(float(log_outside(lo, hi, self.n_trials, float(tilted[t]), log_1m)))
        log_left = log_bound + float(logsumexp(np.array(outside))) if outside else -np.inf
        return c, inner, outer, windows, min(log_left, log_bound)

    def cells(self, windows) -> int:
        """The number of outer count vectors in a product of windows."""
        return math.prod(hi - lo + 1 for lo, hi in windows)

    def _log_outer_pmf(self, counts: np.ndarray, outer) -> tuple[np.ndarray, np.ndarray, set[int]]:
        """(log Pr(counts of the cells ``outer``), trials left, the cells counted) by conditional binomials."""
        left = np.full(counts.shape[0], float(self.n_trials))
        log_pmf_total = np.zeros(counts.shape[0])
        used: set[int] = set()
        for j, t in enumerate(outer):
            log_remaining = _log_sum_without(self.log_p, self.log_rest, used)
            log_pi = float(self.log_p[t]) - log_remaining
            log_1mpi = _log_sum_without(self.log_p, self.log_rest, used | {t}) - log_remaining
            log_pmf_total += log_pmf(counts[:, j], left, log_pi, log_1mpi)
            left -= counts[:, j]
            used.add(t)
        return log_pmf_total, left, used

    def _conditional(self, t: int, used: set[int]) -> tuple[float, float]:
        """(log pi, log(1 - pi)) of cell t given the counts of the cells ``used``."""
        log_remaining = _log_sum_without(self.log_p, self.log_rest, used)
        return (
            float(self.log_p[t]) - log_remaining,
            _log_sum_without(self.log_p, self.log_rest, used | {t}) - log_remaining,
        )

    def _blocks(self, outer, windows):
        """(log Pr(outer counts), trials left, tau = sum_outer N_t c_t without c) over the product of windows in
        blocks (prefix rows x the last outer cell's window): the prefix cells' pmfs in Loader's form, the last
        cell's along its window by the pmf ratio from one anchor per row (one rounding per step)."""
        prefix_cells, last = outer[:-1], outer[-1]
        lo, hi = windows[-1]
        m = np.arange(lo, hi + 1, dtype=float)
        log_pi, log_1mpi = self._conditional(last, set(prefix_cells))
        for prefix in _count_vectors(self.n_trials, prefix_cells, windows[:-1], per_row=m.size):
            log_prefix, left, _ = self._log_outer_pmf(prefix, prefix_cells)
            anchor = log_pmf(np.full(left.shape, float(lo)), left, log_pi, log_1mpi)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.log(np.maximum(left[:, None] - m[None, :-1], 0.0)) - np.log(m[None, :-1] + 1.0)
                steps = np.cumsum(ratio + (log_pi - log_1mpi), axis=1)
            log_last = np.hstack([anchor[:, None], anchor[:, None] + steps])
            log_last[~np.isfinite(log_last)] = -np.inf
            yield prefix, m, log_prefix[:, None] + log_last, left[:, None] - m[None, :]

    def log_parts(self, eps: float, K: float) -> tuple[float, float]:
        """(log summed delta, log certified remainder) of the REMOVE direction at window K.

        Count vectors whose cheap certified bound is e^-60 below the largest seen are not summed; their
        bounds join the remainder.

        Args:
            eps: epsilon >= 0.
            K: the windows' half-width in standard deviations of the tilted marginals.

        Returns:
            The two logs (-inf, -inf when every c_t <= 0: delta = 0).

        Raises:
            ValueError: the windows hold more than :data:`MAX_CELLS` outer count vectors.
        """
        if not self.has_positive(eps):
            return -np.inf, -np.inf
        c, inner, outer, windows, log_left = self._plan(eps, K)
        if self.cells(windows) > MAX_CELLS:
            raise ValueError(
                f"`n_users` must be small enough for the type view's windows (at most {MAX_CELLS:.0e} count "
                f"vectors, here {self.cells(windows):.3g} over {len(outer)} outer types); got {self.n_trials}."
            )
        log_pi, log_1mpi = self._conditional(inner, set(outer))
        ci = float(c[inner])
        if not outer:  # one counted cell: its count is the only sum
            only = _log_inner(np.zeros(1), np.full(1, float(self.n_trials)), ci, log_pi, log_1mpi, False)
            return float(only[0]) - math.log(self.n_trials), log_left
        terms: list[float] = []
        skipped, best = [-np.inf], -np.inf
        for prefix, m, log_outer, left in self._blocks(outer, windows):
            tau = (prefix @ c[outer[:-1]])[:, None] + m[None, :] * c[outer[-1]]
            valid = (left >= 0) & (log_outer > -np.inf)
            if valid.all():  # the same values in the same (row-major) order, without three copies
                tau, left, log_outer = tau.reshape(-1), left.reshape(-1), log_outer.reshape(-1)
            else:
                tau, left, log_outer = tau[valid], left[valid], log_outer[valid]
            log_bound = log_outer + _log_inner(tau, left, ci, log_pi, log_1mpi, True)
            top = float(log_bound.max(initial=-np.inf))
            if top == -np.inf:  # every bound is 0: nothing to sum, and their log-sum is -inf
                skipped.append(-np.inf)  # kept, so that the remainder sums the same list
                continue
            best = max(best, top)
            keep = log_bound > best - 60.0
            skipped.append(float(logsumexp(log_bound[~keep])) if (~keep).any() else -np.inf)
            if keep.any():
                exact = _log_inner(tau[keep], left[keep], ci, log_pi, log_1mpi, False)
                terms.append(float(logsumexp(log_outer[keep] + exact)))
        log_n = math.log(self.n_trials)
        log_sum = float(logsumexp(np.array(terms))) - log_n if terms else -np.inf
        return log_sum, float(np.logaddexp(log_left, float(logsumexp(np.array(skipped))) - log_n))

    def log_delta_parts(self, eps: float, *, upper: bool = True) -> tuple[float, float]:
        """(log sum, log remainder), the window widened from K = 8 until the remainder is below 1e-11 of the
        sum, K = :data:`MAX_WINDOW_K`, or the wider window would exceed :data:`MAX_CELLS` (upper bounds: the
        remainder is certified at whatever K is reached), or at K = 8 (lower bounds: the remainder dropped)."""
        K = _START_K
        log_sum, log_left = self.log_parts(eps, K)
        while upper and log_left - log_sum > LOG_NEGLIGIBLE and K < MAX_WINDOW_K:
            reference = log_sum if log_sum > -np.inf else -700.0
            wider = min(
                MAX_WINDOW_K, max(K + 2.0, math.sqrt(K * K + 2.0 * (log_left - reference - LOG_NEGLIGIBLE)))
            )
            if self.cells(self.plan_windows(eps, wider)) > MAX_CELLS:
                break
            K = wider
            log_sum, log_left = self.log_parts(eps, K)
        return log_sum, log_left

    def log_local_delta(self, eps: float) -> float:
        """log of one trial's own delta sum_t p_t (u_t - e^eps v_t)_+ (the differing report alone)."""
        c = self.coefficients(eps)
        positive = c > 0
        if not positive.any():
            return -np.inf
        return float(logsumexp(self.log_p[positive] + np.log(c[positive])))


def _minimised_chernoff(pair: CountPair, eps: float) -> tuple[float, float]:
    """:meth:`CountPair.chernoff` computed: theta = e^x minimising n log M(theta) - 1 - x - log n over x in
    [log(700 / max c) - 60, log(700 / max c)] (bounded scalar minimisation to 1e-6 in x)."""
    c = pair.coefficients(eps)
    n = pair.n_trials
    high = math.log(700.0 / float(c.max()))
    low = high - 60.0

    def objective(x: float) -> float:
        theta = math.exp(x)
        return n * pair._log_mgf(theta, c) - 1.0 - x - math.log(n)

    # here, not at the top: every figure job imports this module (the plotting style reads the colour of
    # every accountant, the weak adversary's too), and only this bound needs scipy.optimize
    from scipy.optimize import minimize_scalar

    best = minimize_scalar(objective, bounds=(low, high), method="bounded", options={"xatol": 1e-6})
    x = float(best.x)
    return float(objective(x)), math.exp(x)


def _suffix_log_delta(grid: np.ndarray, d_bins: np.ndarray, q_bins: np.ndarray) -> np.ndarray:
    """log of sum_{b >= j} D_b + (e^(grid_b) - e^(grid_j)) Q_b at every j of the ascending ``grid``, by suffix
    sums of terms >= 0 only: e^(grid_b) - e^(grid_j) telescopes into the steps w_i = e^(grid_i)
    expm1(grid_(i+1) - grid_i), so the second sum is sum_{i >= j} w_i S_(i+1) with S the suffix sums of Q."""
    suffix_d = np.cumsum(d_bins[::-1])[::-1]
    suffix_q = np.cumsum(q_bins[::-1])[::-1]
    steps = np.exp(grid[:-1]) * np.expm1(np.diff(grid)) * suffix_q[1:]
    suffix_steps = np.append(np.cumsum(steps[::-1])[::-1], 0.0)
    with np.errstate(divide="ignore"):
        return np.log(suffix_d + suffix_steps)


# ---------------------------------------------------------------------- many epsilons in one pass (a lower bound)
def tilted_windows(pair: CountPair, eps: float, K: float = _START_K) -> list[tuple[int, int]]:
    """Every counted cell's window at ``eps`` (``pair``'s direction, some c_t > 0): the Bernstein window of its
    tilted marginal, as :meth:`CountPair.plan_windows` gives the outer cells'."""
    c = pair.coefficients(eps)
    _, theta = pair.chernoff(eps)
    log_m = pair._log_mgf(theta, c)
    tilted = pair.log_p + theta * c - log_m
    tilted_rest = pair.log_rest - log_m
    windows = []
    for t in range(pair.n_cells):
        lo, hi = bernstein_window(
            pair.n_trials, float(tilted[t]), _log_sum_without(tilted, tilted_rest, {t}), K
        )
        windows.append((int(lo), int(hi)))
    return windows


def grid_windows(pair: CountPair, epsilons, K: float = _START_K) -> list[tuple[int, int]]:
    """The hull, cell by cell, of :func:`tilted_windows` at the smallest and largest of ``epsilons`` in both
    directions (where some c_t > 0): the windows one pass for all of them visits."""
    eps = np.asarray(epsilons, dtype=float)
    hull = [(pair.n_trials, 0)] * pair.n_cells
    for direction in (pair, pair.exchanged()):
        for e in (float(eps.min()), float(eps.max())):
            if direction.has_positive(e):
                windows = tilted_windows(direction, e, K)
                hull = [(min(a, lo), max(b, hi)) for (a, b), (lo, hi) in zip(hull, windows, strict=True)]
    return [(lo, hi) if lo <= hi else (0, -1) for lo, hi in hull]


def log_delta_grid(pair: CountPair, epsilons, K: float = _START_K) -> np.ndarray:
    """A lower bound on delta at every one of ``epsilons``, both directions (the larger), in one pass.

    Only for a pair without an uncounted cell (every count vector is then its outer counts, the inner
    count being what is left). The count vectors in :func:`grid_windows` are visited once; each one's
    privacy loss L = log(sum N_t u_t / sum N_t v_t) and masses P, Q are binned by the largest epsilon
    below L (REMOVE) or below -L (ADD), each bin keeping D_b = sum P (1 - e^(eps_b - L)) and sum Q. At
    eps_j, delta = sum_{b >= j} D_b + (e^(eps_b) - e^(eps_j)) Q_b: exactly the sum of (P - e^eps_j Q)_+
    over the visited count vectors, formed from suffix sums of terms >= 0 (no cancellation), the mass outside
    the windows dropped -- a lower bound, as :meth:`CountPair.log_delta_parts` with ``upper=False`` (which visits
    windows planned for one epsilon).

    Args:
        epsilons: epsilon values >= 0 (any order).
        K: the windows' half-width (tilted standard deviations).

    Returns:
        log delta at each epsilon, in the order given (-inf: no count vector has a larger loss).

    Raises:
        ValueError: the pair has an uncounted cell, or its windows hold more than :data:`MAX_CELLS`
            count vectors.
    """
    if pair.log_rest != -np.inf:
        raise ValueError(
            f"`pair` must have no uncounted cell for the one-pass sum (log p_rest = -inf); got {pair.log_rest!r}."
        )
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float)).ravel()
    order = np.argsort(eps, kind="stable")
    grid = eps[order]
    windows = grid_windows(pair, grid, K)
    inner = int(np.argmax([hi - lo for lo, hi in windows]))
    outer = [t for t in range(pair.n_cells) if t != inner]
    if pair.cells([windows[t] for t in outer]) > MAX_CELLS:
        raise ValueError(
            f"`n_users` must be small enough for the one-pass windows (at most {MAX_CELLS:.0e} count "
            f"vectors, here {pair.cells([windows[t] for t in outer]):.3g}); got {pair.n_trials}."
        )
    u, v = np.exp(pair.log_u), np.exp(pair.log_v)
    bins = [np.zeros(grid.size + 1) for _ in range(4)]  # D and Q of REMOVE, then of ADD
    log_n = math.log(pair.n_trials)
    for prefix, m, log_outer, left in _grid_blocks(pair, outer, [windows[t] for t in outer]):
        valid = (left >= 0) & (log_outer > -np.inf)
        sum_u = (prefix @ u[outer[:-1]])[:, None] + m[None, :] * u[outer[-1]] + left * u[inner]
        sum_v = (prefix @ v[outer[:-1]])[:, None] + m[None, :] * v[outer[-1]] + left * v[inner]
        log_outer, log_sum_u, log_sum_v = log_outer[valid], np.log(sum_u[valid]), np.log(sum_v[valid])
        loss = log_sum_u - log_sum_v
        masses = (np.exp(log_outer + log_sum_u - log_n), np.exp(log_outer + log_sum_v - log_n))
        for direction, (signed, (p, q)) in enumerate(((loss, masses), (-loss, masses[::-1]))):
            b = np.searchsorted(grid, signed, side="left")  # 1 + the largest edge below the loss
            edge = grid[np.maximum(b - 1, 0)]
            bins[2 * direction] += np.bincount(b, p * -np.expm1(edge - signed), minlength=grid.size + 1)
            bins[2 * direction + 1] += np.bincount(b, q, minlength=grid.size + 1)
    out = np.full(grid.size, -np.inf)
    for d_bins, q_bins in ((bins[0][1:], bins[1][1:]), (bins[2][1:], bins[3][1:])):
        out = np.maximum(out, _suffix_log_delta(grid, d_bins, q_bins))
    result = np.empty_like(out)
    result[order] = out
    return result


def _grid_blocks(pair: CountPair, outer, windows):
    """:meth:`CountPair._blocks`, with one outer cell (its window as the prefix-free block) handled too."""
    if len(outer) >= 2:
        yield from pair._blocks(outer, windows)
        return
    lo, hi = windows[0]
    m = np.arange(lo, hi + 1, dtype=float)
    log_pi, log_1mpi = pair._conditional(outer[0], set())
    log_m = log_pmf(m, np.full(m.shape, float(pair.n_trials)), log_pi, log_1mpi)
    yield np.zeros((1, 0)), m, log_m[None, :], float(pair.n_trials) - m[None, :]


# ---------------------------------------------------------------------- grouping (an upper bound)
def dominated(pair: CountPair, eps: float, groups: int = 3) -> CountPair:
    """A pair of at most ``groups`` cells whose delta at ``eps`` (this direction) is >= ``pair``'s.

    The cells are split, in the order of their coefficients c_t, into consecutive groups; each group is
    one cell of probability sum p_t whose coefficient is the group's largest c_t (its u and v are that
    cell's). Since N_t >= 0, sum_t N_t c_t <= sum_G N_G max_{t in G} c_t pointwise, so the grouped delta
    (1/n) E[(sum_G N_G c'_G)_+] bounds ``pair``'s from above (valid at this eps only). Of the splits,
    the one that adds the least mean, sum_t p_t (c'_G(t) - c_t), is taken.

    Args:
        pair: the pair.
        eps: the epsilon the bound is for.
        groups: the most cells kept, >= 1.

    Returns:
        ``pair`` when it has at most ``groups`` cells; else the grouped pair.
    """
    if pair.n_cells <= groups:
        return pair
    c = pair.coefficients(eps)
    order = np.argsort(c, kind="stable")
    p = np.exp(pair.log_p[order])
    best: tuple[float, list] | None = None
    for cuts in itertools.combinations(range(1, pair.n_cells), groups - 1):
        parts = np.split(np.arange(pair.n_cells), list(cuts))
        added = sum(float(np.sum(p[g] * (c[order][g].max() - c[order][g]))) for g in parts)
        if best is None or added < best[0]:
            best = (added, parts)
    assert best is not None, "at least one split exists (n_cells > groups >= 1)"
    cells = [order[g] for g in best[1]]
    tops = [int(g[np.argmax(c[g])]) for g in cells]
    return CountPair(
        pair.n_trials,
        np.array([float(logsumexp(pair.log_p[g])) for g in cells]),
        pair.log_rest,
        pair.log_u[tops],
        pair.log_v[tops],
    )


# ---------------------------------------------------------------------- the stream
def stream_windows(pair: CountPair, K: float) -> tuple[list[tuple[int, int]], float]:
    """(untilted Bernstein windows of every counted cell, log Pr(N outside their product) bound)."""
    windows, outside = [], []
    for t in range(pair.n_cells):
        log_1m = _log_sum_without(pair.log_p, pair.log_rest, {t})
        lo, hi = bernstein_window(pair.n_trials, float(pair.log_p[t]), log_1m, K)
        windows.append((int(lo), int(hi)))
        outside.append(float(log_outside(lo, hi, pair.n_trials, float(pair.log_p[t]), log_1m)))
    return windows, float(logsumexp(np.array(outside)))


def stream(pair: CountPair, K: float) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(log P, log Q) of every count vector in the untilted windows (module docstring, "The stream")."""
    windows, _ = stream_windows(pair, K)
    if pair.cells(windows) > MAX_CELLS:
        raise ValueError(
            f"`n_users` must be small enough for the type view's stream (its PLD and composed tail enumerate "
            f"every count vector: at most {MAX_CELLS:.0e}, here {pair.cells(windows):.3g}); got {pair.n_trials}."
        )
    cells = list(range(pair.n_cells))
    n = pair.n_trials
    for counts in _count_vectors(pair.n_trials, cells, windows):
        log_mult, left, _ = pair._log_outer_pmf(counts, cells)
        if pair.log_rest == -np.inf:
            keep = left == 0
            counts, log_mult = counts[keep], log_mult[keep]
        with np.errstate(divide="ignore"):
            log_u_sum = logsumexp(np.log(counts) + pair.log_u, axis=1)
            log_v_sum = logsumexp(np.log(counts) + pair.log_v, axis=1)
        yield log_mult + log_u_sum - math.log(n), log_mult + log_v_sum - math.log(n)


def stream_left_out(pair: CountPair, K: float) -> tuple[float, float]:
    """Certified bounds (log) on the P- and Q-mass outside the stream's windows."""
    _, log_out = stream_windows(pair, K)
    return log_out + float(pair.log_u.max()), log_out + float(pair.log_v.max())


def log1m_of(log_gamma: float) -> float:
    """log(1 - gamma) from log gamma (the weak view's uncounted cell)."""
    return float(log1mexp(log_gamma)) if log_gamma < 0 else -np.inf
