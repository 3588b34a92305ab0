"""``weak-adversary``: Koskela et al.'s weak adversary, an UPPER bound for all data, for every randomizer
with finitely many outputs.

Where its delta is computed: its view. For k-RR (and binary RR) that is
:class:`~shuffledp.accounting.views.weak.view.WeakView` (the exact certified delta, the binned privacy loss
distribution, the composed tail and the certified epsilon search are overrides on the view), unchanged;
for every other randomizer with output types it is the same adversary over the type counts,
:class:`~shuffledp.accounting.views.types.view.TypesView` (docs/weak-adversary-types.md; the two agree on
k-RR to ~1e-12 in delta, tests/accounting/test_types_view.py). A randomizer without output types is refused
in one line. Why one name: docs/decisions/weak-adversary.md. This class states what the bound is and asks
its view.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.randomizers import KRR, Randomizer
from shuffledp.accounting.views.types.view import TypesView, required_types
from shuffledp.accounting.views.weak.view import WeakView

__all__ = ["WeakAdversary"]


class WeakAdversary(Accountant):
    """Exact delta of Koskela et al.'s weak adversary (Def. 3, Thm 4) plus a certified remainder; see
    :mod:`shuffledp.accounting.views.weak.view` (k-RR) and :mod:`shuffledp.accounting.views.types.view`
    (every other randomizer with output types)."""

    name = "weak-adversary"
    label = "upper bound, all datasets (weak adversary)"
    colour = "#AA4499"
    kind = BoundKind.UPPER
    scope = (
        "all neighbouring datasets (replace-one), both directions, any randomizer with finitely many outputs "
        "(the smaller of the view's sum and the differing user's own delta -- (p - e^eps q)_+ for k-RR --, "
        "both valid for every dataset)"
    )
    reference = (
        "Koskela, Heikkila, Honkela (2021), Def. 3 and Thm 4 (weak adversary: knows the other users' data "
        "and blanket bits, not the differing user's); view reduced to (a, c, m) counts for k-RR, to the "
        "output type counts for any randomizer with finitely many outputs, evaluated exactly"
    )
    randomizers = (Randomizer,)  # every randomizer with output types (others are refused in __init__)
    #: the view of a randomizer that is not k-RR; k-RR's is :class:`WeakView` (:meth:`view`)
    view_class = TypesView

    def __init__(
        self,
        *,
        epsilon_local: float | None = None,
        n_users: int,
        k: int | None = None,
        n_x0: int | None = None,
        randomizer: Randomizer | None = None,
    ):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0, randomizer=randomizer)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)

    @classmethod
    def check_randomizer_instance(cls, randomizer: Randomizer) -> None:
        """Refuse, in one line, a randomizer without output types (k-RR always passes).

        Args:
            randomizer: the randomizer instance.

        Raises:
            ValueError: it has no output types.
        """
        if not isinstance(randomizer, KRR):
            required_types(f"accountant {cls.name!r}", randomizer)

    def view(self):
        """k-RR's :class:`WeakView` (its values bit for bit), or the :class:`TypesView` of any other
        randomizer with output types; built once.

        Returns:
            the view.
        """
        if self._own_view is None:
            is_krr = isinstance(self.setting.randomizer, KRR)
            self._own_view = WeakView(self.setting) if is_krr else TypesView(self.setting)
        return self._own_view

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
        view = self.view()
        if isinstance(view, WeakView):
            return view.epsilon_for_delta(delta, tolerance=tolerance)
        return super().epsilon_for_delta(delta, tolerance=tolerance)
