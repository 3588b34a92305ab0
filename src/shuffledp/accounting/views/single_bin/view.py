"""The paper's single-bin view as a view (issue 32): the law of the x0-bin count S of the shuffled k-RR
histogram for one dataset (``n_x0`` other users on x0), P under D(x0), Q under D(x1).

Outcomes: every count s in [0, n_users], in chunks, with log Q(s) = log P1(s) and the exact loss
L_s = log(P0(s) / P1(s)) of :class:`~shuffledp.accounting.views.single_bin.law.SingleBinLaw` (log P = log Q + L).
Nothing is left out (the whole support is enumerated; O(n^1.5) work, so the view refuses n_users above
:data:`MAX_USERS_SINGLE_BIN_STREAM`). Not symmetric: ADD is read as the swapped stream. Every loss lies in
[log kappa_2, eps0] (:meth:`loss_bounds`). :meth:`log_delta` is the law's own exact evaluation (forward and
reverse, the larger), an override held to the stream by tests/accounting/test_view_overrides.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View
from shuffledp.accounting.views.single_bin.law import SingleBinLaw

__all__ = ["SingleBinView", "MAX_USERS_SINGLE_BIN_STREAM"]

#: largest n_users whose whole support is enumerated
MAX_USERS_SINGLE_BIN_STREAM = 10**6
_CHUNK = 4096


class SingleBinView(View):
    """The x0-bin count of one dataset (module docstring); ``setting.n_x0`` is required."""

    name = "single-bin"

    def __init__(self, setting):
        super().__init__(setting)
        if setting.n_x0 is None:
            raise ValueError(
                "`n_x0` is required by the single-bin view and must be an integer in "
                f"[0, {setting.n_users - 1}]; got None."
            )
        if setting.n_users > MAX_USERS_SINGLE_BIN_STREAM:
            raise ValueError(
                f"`n_users` must be an integer in [1, {MAX_USERS_SINGLE_BIN_STREAM}] for the single-bin view's "
                f"outcomes; got {setting.n_users}."
            )
        self.law = SingleBinLaw(setting)

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        for start in range(0, self.setting.n_users + 1, _CHUNK):
            s = np.arange(start, min(self.setting.n_users + 1, start + _CHUNK))
            log_p1, loss, _ = self.law.evaluate(s)
            yield OutcomeChunk(log_p1 + loss, log_p1, loss)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        return LeftOut()

    def loss_bounds(self) -> tuple[float, float]:
        return (self.setting.epsilon_local, self.law.max_reverse_loss)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """The law's exact delta, the larger of forward (P0 vs P1) and reverse."""
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        return np.maximum(
            self.law.log_delta(eps, direction="forward"), self.law.log_delta(eps, direction="reverse")
        )
