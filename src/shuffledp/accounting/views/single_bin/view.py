"""The paper's single-bin view: the law of the x0-bin count S of the shuffled k-RR histogram for one dataset
(``n_x0`` other users on x0), P under D(x0), Q under D(x1) (Biswas, Jung, Palamidessi, Theorem IV.1; the
derivation, the erratum and the numerics are in :mod:`shuffledp.accounting.accountants.biswas`'s docstring).

Outcomes: every count s in [0, n_users], in chunks, with log Q(s) = log P1(s) and the exact loss
L_s = log(P0(s) / P1(s)) of :class:`~shuffledp.accounting.views.single_bin.counts.CountLaw` (log P = log Q + L).
Nothing is left out (the whole support is enumerated: O(n^1.5) work, so the stream refuses n_users above
:data:`MAX_OUTCOME_USERS`). Not symmetric: ADD is read as the swapped stream. Every loss lies in
[log kappa_2, eps0] (:meth:`SingleBinView.loss_bounds`).

Its delta is an override: the tail sums of :class:`~shuffledp.accounting.views.single_bin.tails.TailSums`
over the cached blocks of :class:`~shuffledp.accounting.views.single_bin.blocks.CountBlocks`, O(sqrt n)
counts per epsilon, up to n = :data:`MAX_USERS_SINGLE_BIN` = 10^9 (``biswas-printed``, ``biswas-exact`` and, at k = 2,
``histogram-exact``); held to the stream by tests/accounting/test_view_overrides.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View
from shuffledp.accounting.views.single_bin.blocks import CountBlocks, FirstBulks
from shuffledp.accounting.views.single_bin.counts import CountLaw
from shuffledp.accounting.views.single_bin.tails import TailSums

__all__ = ["SingleBinView", "DIRECTIONS", "MAX_USERS_SINGLE_BIN", "MAX_OUTCOME_USERS", "check_size"]

#: directions of the hockey-stick divergence: "forward" = H(P0 || P1) (the paper's: D(x0) vs D(x1)),
#: "reverse" = H(P1 || P0), "both" = the larger of the two
DIRECTIONS = ("forward", "reverse", "both")
#: largest n accepted by the delta: the work grows as n p q (O(sqrt n) values of s, each an O(sqrt n) window)
MAX_USERS_SINGLE_BIN = 10**9
#: largest n_users whose whole support the stream enumerates
MAX_OUTCOME_USERS = 10**6
_CHUNK = 4096


def check_size(name: str, n_users: int) -> None:
    """Refuse n above :data:`MAX_USERS_SINGLE_BIN` before any allocation.

    Args:
        name: the accountant's name (for the message).
        n_users: the number of users.

    Raises:
        ValueError: ``n_users`` above :data:`MAX_USERS_SINGLE_BIN`.
    """
    if n_users > MAX_USERS_SINGLE_BIN:
        raise ValueError(
            f"`n_users` must be an integer in [1, {MAX_USERS_SINGLE_BIN}] for accountant {name!r} (its work grows as "
            f"n p q: windows of O(sqrt n) counts for O(sqrt n) outputs); got {n_users}."
        )


class SingleBinView(View):
    """The x0-bin count of one dataset (module docstring); ``setting.n_x0`` is required. Its count law, cached
    blocks and tail sums are built with it and kept (every later epsilon reuses the blocks)."""

    name = "single-bin"

    def __init__(self, setting, first_bulks: FirstBulks | None = None):
        """The view of ``setting``.

        Args:
            setting: the setting (``n_x0`` given).
            first_bulks: shared by new views of one setting, each computing the delta as a new view does
                (:data:`~shuffledp.accounting.views.single_bin.blocks.FirstBulks`), or None.

        Raises:
            ValueError: ``setting.n_x0`` is None.
        """
        super().__init__(setting)
        if setting.n_x0 is None:
            raise ValueError(
                "`n_x0` is required by the single-bin view and must be an integer in "
                f"[0, {setting.n_users - 1}]; got None."
            )
        self.law = CountLaw(setting)
        self.blocks = CountBlocks(self.law, first_bulks)
        self.tails = TailSums(self.blocks)

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        if self.setting.n_users > MAX_OUTCOME_USERS:
            raise ValueError(
                f"`n_users` must be an integer in [1, {MAX_OUTCOME_USERS}] for the single-bin view's "
                f"outcomes; got {self.setting.n_users}."
            )
        for start in range(0, self.setting.n_users + 1, _CHUNK):
            s = np.arange(start, min(self.setting.n_users + 1, start + _CHUNK))
            log_p1, loss, _ = self.law.evaluate(s)
            yield OutcomeChunk(log_p1 + loss, log_p1, loss)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        return LeftOut()

    def loss_bounds(self) -> tuple[float, float]:
        return (self.setting.epsilon_local, self.law.max_reverse_loss)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: the exact delta, the larger of forward (P0 vs P1) and reverse, by the tail sums.

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).
            K: unused (the tail sums certify their own ends).
            upper: unused (nothing is left out: upper and lower agree).

        Returns:
            log delta at each epsilon (1-D).
        """
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        return np.maximum(
            self.log_delta_one_direction(eps, "forward"), self.log_delta_one_direction(eps, "reverse")
        )

    def log_delta_one_direction(self, epsilons, direction: str, *, printed: bool = False) -> np.ndarray:
        """log H_{e^eps}(P0 || P1) ("forward", the paper's) or H(P1 || P0) ("reverse") at each epsilon.

        Args:
            epsilons: a 1-D array of epsilons in [0, inf].
            direction: "forward" or "reverse".
            printed: forward with Theorem IV.1's printed v_s (``biswas-printed``) instead of the exact loss.

        Returns:
            log delta at each epsilon.
        """
        return self.tails.log_delta_one_direction(epsilons, direction, printed=printed)

    def log_delta_bound(self, eps: float) -> float:
        """Certified upper bound on the forward log delta at ``eps`` from the cached blocks (0 if none helps;
        :meth:`TailSums.log_delta_bound <shuffledp.accounting.views.single_bin.tails.TailSums.log_delta_bound>`).

        Args:
            eps: an epsilon >= 0.

        Returns:
            the bound (a log).
        """
        return self.tails.log_delta_bound(eps)
