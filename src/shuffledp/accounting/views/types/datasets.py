"""Explicit datasets seen through their type counts: a LOWER bound on the worst case for every randomizer
with finitely many outputs.

Fix a dataset: the n - 1 other users all hold one value x_o (x_0 itself, or a third value x_2), the
differing user holds x_0 or x_1. The adversary sees the counts of the output types of all n reports (a
function of the shuffled reports: post-processing). A user on x has type law P(t | x) = r_x(t) omega(t), so
the count vector N has

    P(N) = Mult_n(N; pi_o) sum_t N_t (pi_0(t) / pi_o(t)) / n,    pi_j(t) = r_j(t) omega(t),

(the differing user's report is one of the n, each equally likely to be it): the pair of
:mod:`shuffledp.accounting.views.types.counts` with cells pi_o(t), no uncounted cell, and weights
u_t = pi_0(t) / pi_o(t), v_t = pi_1(t) / pi_o(t). Its exact delta is at most that of the shuffled reports
of the dataset pair, hence at most the worst case. The types are merged on the rows (0, 1, o) (exact); when
more than three cells are left and the exact sum would visit more than
:data:`~shuffledp.accounting.views.types.view.EXACT_CELLS` count vectors at an epsilon, they are coarsened
there to three, by the sign of log(u_t / v_t) (favouring x_0, favouring x_1, neither): the counts of the coarse cells are a further post-processing, with the same form of
pair (cell laws summed over each group), so the bound stays a lower bound -- and the outer windows stay two
wide at any n. The sum drops what its windows leave out (it errs low).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from shuffledp._numerics import logsumexp
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.randomizers import Randomizer
from shuffledp.accounting.randomizers.types import OutputTypes
from shuffledp.accounting.views.base import DEFAULT_K, FamilyView, LeftOut, OutcomeChunk, View
from shuffledp.accounting.views.types.counts import (
    CountPair,
    grid_windows,
    log_delta_grid,
    stream,
    stream_left_out,
)
from shuffledp.accounting.views.types.view import EXACT_CELLS, required_types

__all__ = ["dataset_pair", "DatasetTypesView", "DatasetTypesFamily", "MAX_EXACT_CELLS"]

#: at most this many cells are kept exact; more are coarsened to three (module docstring)
MAX_EXACT_CELLS = 3


def _groups(log_u: np.ndarray, log_v: np.ndarray) -> list[np.ndarray]:
    """The cells grouped by the sign of log(u / v): favouring x_0, favouring x_1, neither (non-empty ones)."""
    d = log_u - log_v
    return [g for g in (np.flatnonzero(d > 0), np.flatnonzero(d < 0), np.flatnonzero(d == 0)) if g.size]


def dataset_pair(
    types: OutputTypes, other_row: int, n_users: int, *, coarse: bool | None = None
) -> CountPair:
    """The type-count pair of the dataset "every other user on x_other_row" (module docstring).

    Args:
        types: the randomizer's output types with the row ``other_row``.
        other_row: the others' input (0 for x_0, 2 for x_2, ...).
        n_users: n.
        coarse: coarsen to three cells; None: only when more than :data:`MAX_EXACT_CELLS` are left.

    Returns:
        The :class:`CountPair` (cells pi_o(t), weights pi_0 / pi_o and pi_1 / pi_o).
    """
    rows = (0, 1) if other_row in (0, 1) else (0, 1, other_row)
    merged = types.merged(rows)
    o = rows.index(other_row)
    log_pi = merged.log_ratios + merged.log_blanket_mass  # (rows, T): log P(type | input)
    log_u, log_v = log_pi[0] - log_pi[o], log_pi[1] - log_pi[o]
    if coarse or (coarse is None and merged.n_types > MAX_EXACT_CELLS):
        groups = _groups(log_u, log_v)
        coarse_pi = np.array([[float(logsumexp(row[g])) for g in groups] for row in log_pi])
        log_pi = coarse_pi
        log_u, log_v = log_pi[0] - log_pi[o], log_pi[1] - log_pi[o]
    return CountPair(int(n_users), log_pi[o], -np.inf, log_u, log_v)


class DatasetTypesView(View):
    """One explicit dataset's type counts as a view (module docstring); both directions are read."""

    name = "dataset-types"
    randomizers = (Randomizer,)

    def __init__(self, setting: ShuffleSetting, other_row: int = 0, *, coarse: bool | None = None):
        super().__init__(setting)
        inputs = max(2, other_row + 1)
        self.types = required_types(f"view {self.name!r}", setting.randomizer, inputs)
        self.pair = dataset_pair(self.types, other_row, setting.n_users, coarse=coarse)
        # with ``coarse=None`` the exact cells are summed wherever their windows are small enough
        self.exact = (
            dataset_pair(self.types, other_row, setting.n_users, coarse=False) if coarse is None else None
        )

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        """The REMOVE direction's count vectors in the windows."""
        for log_p, log_q in stream(self.pair, K):
            yield OutcomeChunk(log_p, log_q)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        """Certified bounds on the P- and Q-mass outside the windows."""
        return LeftOut(*stream_left_out(self.pair, K))

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: the exact sum over the tilted windows, the larger direction; ``upper`` adds the certified
        remainder (the pair's delta from above, the views' contract), otherwise it is dropped (a lower bound:
        ``types-lower`` asks for that explicitly).

        Args:
            epsilons: epsilon values in [0, inf].
            K: unused (the sum picks its windows).
            upper: add the remainder (True) or drop it (False).

        Returns:
            1-D log delta, one per epsilon.
        """
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float)).ravel()
        out = np.full(eps.shape, -np.inf)
        for i, e in enumerate(eps):
            if e >= self.setting.epsilon_local:  # eps0-LDP reports: their shuffle is eps0-DP, delta = 0
                continue
            for pair in self._pairs(float(e)):
                log_sum, log_left = pair.log_delta_parts(float(e), upper=upper)
                value = float(np.logaddexp(log_sum, log_left)) if upper else log_sum
                out[i] = max(out[i], min(value, 0.0))
        return out

    def log_delta_grid(self, epsilons, *, K: float = 8.0) -> np.ndarray:
        """The lower bound at many epsilons in one pass (:func:`~shuffledp.accounting.views.types.counts.log_delta_grid`): the exact cells
        when their windows over the whole grid hold at most :data:`EXACT_CELLS` count vectors, else the coarse
        ones; both directions. Equal to :meth:`log_delta` with ``upper=False`` wherever the two pick the same
        cells, but for the windows (here the hull over the grid's ends, so at least as wide) and rounding.

        Args:
            epsilons: epsilon values in [0, inf].
            K: the windows' half-width in tilted standard deviations.

        Returns:
            1-D log delta, one per epsilon (-inf from eps0 on: eps0-LDP reports).
        """
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float)).ravel()
        out = np.full(eps.shape, -np.inf)
        below = eps < self.setting.epsilon_local
        if not below.any():
            return out
        pair = self.pair
        exact = self.exact
        if exact is not None:
            windows = grid_windows(exact, eps[below], K)
            widest = int(np.argmax([hi - lo for lo, hi in windows]))
            if exact.cells([w for t, w in enumerate(windows) if t != widest]) <= EXACT_CELLS:
                pair = exact
        out[below] = np.minimum(log_delta_grid(pair, eps[below], K), 0.0)
        return out

    def _pairs(self, eps: float) -> list[CountPair]:
        """The directions to sum at ``eps``: of the exact cells when small enough there, else of the coarse."""
        pair = self.pair
        exact = self.exact
        if exact is not None and exact.has_positive(eps):
            pair = exact if exact.cells(exact.plan_windows(eps)) <= EXACT_CELLS else pair
        return [pair] if pair.is_symmetric() else [pair, pair.exchanged()]


class DatasetTypesFamily(FamilyView):
    """The family of explicit datasets: every other user on x_0, and (domain of 3 or more) on x_2; the
    largest member's delta is a lower bound on the worst case."""

    name = "dataset-types-family"
    randomizers = (Randomizer,)

    def members(self) -> Iterator[View]:
        """ "others on x_0" and, where the randomizer has a third input, "others on x_2"."""
        yield DatasetTypesView(self.setting, 0)
        k = self.setting.k
        if k is None or k >= 3:
            yield DatasetTypesView(self.setting, 2)

    def log_delta_grid(self, epsilons, *, K: float = 8.0) -> np.ndarray:
        """The largest member's :meth:`DatasetTypesView.log_delta_grid` at each epsilon (one pass per member).

        Args:
            epsilons: epsilon values in [0, inf].
            K: the windows' half-width in tilted standard deviations.

        Returns:
            1-D log delta, one per epsilon (a lower bound on the worst case).
        """
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float)).ravel()
        out = np.full(eps.shape, -np.inf)
        for member in self.members():
            assert isinstance(member, DatasetTypesView), "every member is a dataset's type counts"
            out = np.maximum(out, member.log_delta_grid(eps, K=K))
        return out
