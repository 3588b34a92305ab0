"""``weak-adversary``: Koskela et al.'s weak adversary for shuffled k-RR, an UPPER bound for all data.

Where its delta is computed: its view, :class:`~shuffledp.accounting.views.weak.view.WeakView` (the exact
certified delta, the binned privacy loss distribution, the composed tail and the certified epsilon search are
overrides on the view); this class states what the bound is and asks its view.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.views.weak.view import WeakView

__all__ = ["WeakAdversary"]


class WeakAdversary(Accountant):
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
    view_class = WeakView

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """The view's certified delta, many epsilons together (:meth:`WeakView.log_delta`)."""
        return self.view_log_delta(epsilons)

    def epsilon_for_delta(self, delta: float, *, tolerance: float = 1e-9) -> float:
        """The view's certified epsilon search (:meth:`WeakView.epsilon_for_delta`: Chernoff hints, widening
        windows, the upper end of the final bracket).

        Args:
            delta: the target delta in [0, 1].
            tolerance: relative width of the final bracket, > 0.

        Returns:
            an epsilon at which the reported delta meets ``delta``.

        Raises:
            ValueError: ``delta`` outside [0, 1] or ``tolerance`` not > 0.
        """
        return self.view().epsilon_for_delta(delta, tolerance=tolerance)
