"""A view on finitely many cells: two laws (P0 under D(x0), P1 under D(x1)) on the same cells, every one
enumerated (nothing left out), sorted by privacy loss once; the delta of each direction at many epsilons is
then a log-space sum over the cells beyond each epsilon (every term positive). The subclasses
(:mod:`shuffledp.accounting.views.histogram.view`) build the cells of the full histogram and of the pair of
counts; the joint law of two counts they both need is here (:func:`joint_two_counts`).
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View

__all__ = ["CellView", "SortedCells", "joint_two_counts", "shifted"]


@dataclass(frozen=True)
class SortedCells:
    """The cells with positive mass on both sides, by decreasing privacy loss: ``loss`` (log P0 / P1, clipped to
    [-eps0, eps0]), ``log_p0``, ``log_p1``."""

    loss: np.ndarray
    log_p0: np.ndarray
    log_p1: np.ndarray

    @classmethod
    def of(cls, log_p0: np.ndarray, log_p1: np.ndarray, epsilon_local: float, loss: np.ndarray | None = None):
        """Sort the cells. ``loss`` (log P0 / P1 per cell), if given, replaces log_p0 - log_p1: a view that can
        form the ratio from O(1) quantities gives it, because the difference of two log-probabilities of size
        |log P| carries ~|log P| ulp of absolute error, and a cell whose loss is within x of eps carries that
        error divided by x into its term P0 (1 - e^(eps - loss)).

        Args:
            log_p0: log P0 of every cell.
            log_p1: log P1 of every cell (same shape).
            epsilon_local: eps0 (k-RR is eps0-LDP: every loss is clipped to [-eps0, eps0]).
            loss: the cells' privacy losses, or None (log_p0 - log_p1).

        Returns:
            the sorted cells.
        """
        keep = np.isfinite(log_p0) & np.isfinite(log_p1)
        with np.errstate(invalid="ignore"):  # -inf - -inf in the cells dropped here
            loss = log_p0 - log_p1 if loss is None else np.asarray(loss, dtype=float)
        log_p0, log_p1, loss = log_p0[keep], log_p1[keep], loss[keep]
        # k-RR is eps0-LDP, so every post-processing has |loss| <= eps0: clip the rounding noise
        loss = np.clip(loss, -epsilon_local, epsilon_local)
        order = np.argsort(-loss, kind="stable")
        return cls(loss[order], log_p0[order], log_p1[order])


class CellView(View):
    """Two laws on the same finite cells (module docstring). Subclasses implement :meth:`cells`; the view sorts
    them once. Not symmetric (ADD is the swapped stream); nothing is left out; every loss is in [-eps0, eps0].
    :meth:`log_delta` (and :meth:`log_delta_one_direction`) is the sorted tail sum, an override held to the
    stream by tests/accounting/test_view_overrides.py."""

    def __init__(self, setting):
        super().__init__(setting)
        self._sorted: SortedCells | None = None

    @abc.abstractmethod
    def cells(self) -> SortedCells:
        """The view's cells, sorted (:meth:`SortedCells.of`)."""

    def sorted_cells(self) -> SortedCells:
        """The cells, built on first use (log-probabilities below -1.8e308, at eps0 ~ 1e308, are -inf)."""
        if self._sorted is None:
            with np.errstate(over="ignore"):
                self._sorted = self.cells()
        return self._sorted

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        cells = self.sorted_cells()
        yield OutcomeChunk(cells.log_p0, cells.log_p1, cells.loss)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        return LeftOut()

    def loss_bounds(self) -> tuple[float, float]:
        return (self.setting.epsilon_local, self.setting.epsilon_local)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: the larger of the two directions' tail sums (exact: nothing is left out).

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).
            K: unused (every cell is enumerated).
            upper: unused (upper and lower values agree).

        Returns:
            log delta at each epsilon (1-D).
        """
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        return np.maximum(
            self.log_delta_one_direction(eps, "forward"), self.log_delta_one_direction(eps, "reverse")
        )

    def log_delta_one_direction(self, epsilons: np.ndarray, direction: str) -> np.ndarray:
        """log H_{e^eps}(P0 || P1) ("forward") or H(P1 || P0) ("reverse") at each epsilon.

        Args:
            epsilons: a 1-D array of epsilons in [0, inf].
            direction: "forward" or "reverse".

        Returns:
            log delta at each epsilon.
        """
        cells = self.sorted_cells()
        out = np.full(epsilons.shape, -np.inf)
        descending = -cells.loss  # ascending array for searchsorted
        for index, eps in enumerate(epsilons):
            if direction == "forward":
                count = int(np.searchsorted(descending, -eps, side="left"))  # cells with loss > eps
                if count:
                    out[index] = logsumexp(cells.log_p0[:count] + log1mexp(eps - cells.loss[:count]))
            else:
                start = int(np.searchsorted(descending, eps, side="right"))  # cells with loss < -eps
                if start < cells.loss.size:
                    out[index] = logsumexp(cells.log_p1[start:] + log1mexp(eps + cells.loss[start:]))
        return np.minimum(out, 0.0)  # delta <= 1; the cells' probabilities may sum to 1 + 1e-15


def joint_two_counts(groups) -> np.ndarray:
    """Log joint law of the counts (A, B) of reports in two bins, users added one at a time.

    Args:
        groups: a list of (number of users, log P(report in A), log P(report in B), log P(other)).

    Returns:
        an array F with F[a, b] = log P(A = a, B = b) over 0 <= a, b <= total users.
    """
    size = sum(count for count, *_ in groups)
    law = np.full((size + 1, size + 1), -np.inf)
    law[0, 0] = 0.0
    seen = 0
    with np.errstate(over="ignore"):  # sums of logs below -1.8e308 (eps0 ~ 1e308) are log 0 = -inf
        for count, log_a, log_b, log_other in groups:
            for _ in range(count):
                old = law[: seen + 1, : seen + 1].copy()
                new = np.full((seen + 2, seen + 2), -np.inf)
                new[: seen + 1, : seen + 1] = old + log_other
                new[1:, : seen + 1] = np.logaddexp(new[1:, : seen + 1], old + log_a)
                new[: seen + 1, 1:] = np.logaddexp(new[: seen + 1, 1:], old + log_b)
                seen += 1
                law[: seen + 1, : seen + 1] = new
    return law


def shifted(law: np.ndarray, axis: int) -> np.ndarray:
    """``law`` evaluated at index - 1 along ``axis`` (-inf at index 0), same shape.

    Args:
        law: a 2-D array of log-probabilities.
        axis: 0 or 1.

    Returns:
        the shifted array.
    """
    out = np.full_like(law, -np.inf)
    if axis == 0:
        out[1:] = law[:-1]
    else:
        out[:, 1:] = law[:, :-1]
    return out
