"""``types-lower``: a LOWER bound on the worst case over datasets for every randomizer with finitely many
outputs, from explicit datasets seen through their output type counts.

A view plus metadata: :class:`~shuffledp.accounting.views.types.datasets.DatasetTypesFamily` (every other user
on x_0, or on a third value x_2; the adversary sees the type counts of all n reports; both directions). Each
member's exact delta is that of a post-processing of one dataset pair's shuffled reports, so it is at most
the true worst case; the sums drop what their windows leave out (errs low). Proof and choices:
docs/weak-adversary-types.md.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.safe_side import widen
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.randomizers import Randomizer
from shuffledp.accounting.views.types.datasets import DatasetTypesFamily
from shuffledp.accounting.views.types.view import required_types

__all__ = ["TypesLower"]


class TypesLower(Accountant):
    """Largest exact delta of the type counts of the datasets "others on x_0" / "others on x_2" (module doc)."""

    name = "types-lower"
    label = "lower bound, explicit datasets (type counts)"
    colour = "#66AA77"
    kind = BoundKind.LOWER
    scope = (
        "lower bound on the worst case over all neighbouring datasets, any randomizer with finitely many "
        "outputs: the exact delta (both directions) of the output type counts of the datasets where every "
        "other user holds x0, or a third value x2"
    )
    reference = (
        "this package: exact laws of a post-processing (type counts) of explicit datasets; "
        "docs/weak-adversary-types.md"
    )
    randomizers = (Randomizer,)  # every randomizer with output types (others are refused in __init__)

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
        self._family = DatasetTypesFamily(self.setting)

    @classmethod
    def check_randomizer_instance(cls, randomizer: Randomizer) -> None:
        """Refuse, in one line, a randomizer without output types.

        Args:
            randomizer: the randomizer instance.

        Raises:
            ValueError: it has no output types.
        """
        required_types(f"accountant {cls.name!r}", randomizer)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """The family's largest exact delta (lower bound) at each epsilon."""
        return self._family.log_delta(self._checked_epsilons(epsilons), upper=False)

    def log_delta_grid(self, epsilons) -> np.ndarray:
        """The same lower bound at many epsilons in one pass over each dataset's count vectors
        (:meth:`~shuffledp.accounting.views.types.datasets.DatasetTypesFamily.log_delta_grid`): the windows are
        the hull over the grid, each count vector's loss is binned by the grid, and the value at each grid
        point is the exact sum of its positive parts (a lower bound, widened down as every value here). A
        search over a fine grid costs about one evaluation of :meth:`log_delta_for_epsilon` instead of one
        per step; the two agree to rounding where they pick the same cells
        (tests/accounting/test_types_lower_grid.py).

        Args:
            epsilons: epsilon values in [0, inf].

        Returns:
            1-D log delta, one per epsilon.

        Raises:
            ValueError: an epsilon below 0 or not a number.
        """
        values = self._family.log_delta_grid(self._checked_epsilons(epsilons))
        return widen(self.kind, values, self.relative_rounding)

    def epsilon_for_delta(self, delta: float, *, tolerance: float = 1e-10) -> float:
        """An epsilon at which this lower bound's delta is still above ``delta`` (so the true worst case's
        epsilon for ``delta`` is at least it): the base search's upper end, stepped down by ``tolerance``
        (doubling the step) until the delta there exceeds the target; 0 when delta(0) <= ``delta``.

        Args:
            delta: the target delta in [0, 1].
            tolerance: relative width of the search's final bracket, > 0.

        Returns:
            the lower end, an epsilon >= 0.

        Raises:
            ValueError: ``delta`` outside [0, 1] or below the accountant's floor (as the base search).
        """
        high = super().epsilon_for_delta(delta, tolerance=tolerance)
        step = tolerance
        while high > 0.0 and step < 1.0:
            low = high * (1.0 - step)
            if self.delta_for_epsilon(low)[0] > delta:
                return low
            step *= 2.0
        return 0.0
