"""``weak-adversary``: Koskela et al.'s weak adversary for shuffled k-RR, an UPPER bound for all data.

The exact delta of its view and the view's binned privacy loss distribution (with the view's
derivation) are in :mod:`shuffledp.accounting.views.weak.view`; this class states what the bound is and
delegates to it.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.views.weak import pld as weak_pld
from shuffledp.accounting.views.weak import view as weak

__all__ = ["WeakAdversary"]


class WeakAdversary(BracketedMixin, Accountant):
    """Exact delta of Koskela et al.'s weak adversary (Def. 3, Thm 4) plus a certified remainder; see
    :mod:`shuffledp.accounting.views.weak.view`."""

    name = "weak-adversary"
    label = "upper bound, all datasets (weak adversary)"
    colour = "#AA4499"
    kind = BoundKind.UPPER
    scope = (
        "all neighbouring datasets (replace-one), both directions (the smaller of the view's sum and the "
        "differing user's own k-RR delta (p - e^eps q)_+, both valid for every dataset)"
    )
    reference = (
        "Koskela, Heikkila, Honkela (2021), Def. 3 and Thm 4 (weak adversary: knows the other users' data "
        "and blanket bits, not the differing user's); view reduced to (a, c, m) counts, evaluated exactly"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._view = weak.WeakView(self.setting)

    view_class = weak.WeakView

    def view(self) -> weak.WeakView:
        """The weak view of the setting (one per accountant: its rows are kept across epsilons)."""
        return self._view

    def binned_views(self, *, interval: float, pessimistic: bool, K: float, log_masses: bool = False) -> list:
        if log_masses:
            raise ValueError(
                f"`log_masses` must be False for accountant {self.name!r} (its masses are not "
                "formed per outcome); got True."
            )
        s = self.setting
        return [
            weak_pld.binned(
                epsilon_local=s.epsilon_local,
                n_users=s.n_users,
                k=s.k,
                interval=interval,
                pessimistic=pessimistic,
                K=K,
            )
        ]

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:
        return self._view.log_parts(eps, K)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """Many epsilons are evaluated together (:meth:`~shuffledp.accounting.views.weak.view.WeakView.log_deltas`)."""
        return self._view.log_deltas(self._checked_epsilons(epsilons))

    def log_delta_parts(
        self, eps: float, log_target: float | None = None, start_K: float = 8.0
    ) -> tuple[float, float]:
        """As in the mixin, with the view's Chernoff shortcuts and its cap by the strong adversary's delta."""
        parts = self._view.log_delta_parts(eps, log_target, start_K)
        self.last_K = self._view.last_K
        return parts

    def _epsilon_hint(self, log_target: float) -> float | None:
        return self._view.epsilon_hint(log_target)

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        return self._view.epsilon_refine(log_target, eps, log_value)
