"""The exact law of a dataset pair's full histogram (or any finite post-processing of the shuffled
reports) as two laws on the same finite cells: the view of ``histogram-exact`` and its relatives
(:mod:`shuffledp.accounting.accountants.histogram` builds the cells; this module holds the view).

The cells are sorted by privacy loss once; the delta of each direction at many epsilons is then a
log-space sum over the cells beyond each epsilon (every term positive).
"""

from __future__ import annotations

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp

__all__ = ["CellLaw"]


class CellLaw:
    """Two discrete laws on the same finite cells, sorted by privacy loss, with tail deltas."""

    def __init__(
        self, log_p0: np.ndarray, log_p1: np.ndarray, epsilon_local: float, loss: np.ndarray | None = None
    ):
        """``loss`` (log P0 / P1 per cell), if given, replaces log_p0 - log_p1: a caller that can form the ratio
        from O(1) quantities gives it, because the difference of two log-probabilities of size |log P| carries
        ~|log P| ulp of absolute error, and a cell whose loss is within x of eps carries that error divided by x
        into its term P0 (1 - e^(eps - loss)) (issue 34, finding 7)."""
        keep = np.isfinite(log_p0) & np.isfinite(log_p1)
        with np.errstate(invalid="ignore"):  # -inf - -inf in the cells dropped here
            loss = log_p0 - log_p1 if loss is None else np.asarray(loss, dtype=float)
        log_p0, log_p1, loss = log_p0[keep], log_p1[keep], loss[keep]
        # k-RR is eps0-LDP, so every post-processing has |loss| <= eps0: clip the rounding noise
        loss = np.clip(loss, -epsilon_local, epsilon_local)
        order = np.argsort(-loss, kind="stable")
        self.loss = loss[order]
        self.log_p0 = log_p0[order]
        self.log_p1 = log_p1[order]

    def log_delta(self, epsilons: np.ndarray, direction: str) -> np.ndarray:
        out = np.full(epsilons.shape, -np.inf)
        descending = -self.loss  # ascending array for searchsorted
        for index, eps in enumerate(epsilons):
            if direction == "forward":
                count = int(np.searchsorted(descending, -eps, side="left"))  # cells with loss > eps
                if count:
                    out[index] = logsumexp(self.log_p0[:count] + log1mexp(eps - self.loss[:count]))
            else:
                start = int(np.searchsorted(descending, eps, side="right"))  # cells with loss < -eps
                if start < self.loss.size:
                    out[index] = logsumexp(self.log_p1[start:] + log1mexp(eps + self.loss[start:]))
        return np.minimum(out, 0.0)  # delta <= 1; the cells' probabilities may sum to 1 + 1e-15
