"""``worst-case-lower``: a LOWER bound on the worst case over datasets of the shuffled k-RR histogram's delta.

A view plus metadata. The histogram's delta for one pair of neighbouring datasets is at most the worst
case, and so is that of a marginal (post-processing), so the exact delta of explicit datasets is a lower
bound; this accountant returns the largest over the family "none" / "all on x0" / "all on x1" (both
directions; :class:`~shuffledp.accounting.worst_case.families.family.WorstFamilies`, whose binned PLDs
compose) and the members the table of :mod:`shuffledp.accounting.worst_case.families.widened` adds by
regime (single round only). What the papers say and why these datasets: docs/decisions/worst-case.md;
the members by n and their cost: docs/worst-case-k3.md, "The lower end's family by n".
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.chernoff import ChernoffBound
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.worst_case.families.family import FAMILY, WorstFamilies, binned
from shuffledp.accounting.worst_case.families.widened import WidenedMembers

__all__ = ["WorstCaseLower", "FAMILY"]


class WorstCaseLower(BracketedMixin, Accountant):
    """Largest exact delta over the family "none" / "all on x0" / "all on x1" (both directions), widened by
    regime (module doc)."""

    name = "worst-case-lower"
    label = "lower bound on the worst case over datasets"
    colour = "#225555"
    kind = BoundKind.LOWER
    scope = (
        "lower bound on the worst case over all neighbouring datasets: the largest exact histogram delta "
        "(both directions) of explicit datasets -- every other user on x0 (or x1), none on x0 or x1, and by "
        "regime more (k = 3 to n = 200: every dataset, the worst case itself; k >= 4 to n = 10^4: the rest "
        "on one value x2)"
    )
    reference = (
        "this package: exact marginals of the shuffled k-RR histogram for explicit datasets (data processing); "
        "cf. Koskela, Heikkila, Honkela (2021) Thm 4 for the weak adversary it brackets"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._families = WorstFamilies(self.setting)
        self.widened = WidenedMembers(self.setting)  # public: its "one value" view is inspected by tests
        self._lone = False
        self._asked = False

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """As every bracketed accountant's; a lone epsilon asked of a fresh accountant (one value, the first
        call: a calibration of eps0 asks each eps0's accountant for one) sums "one value" adaptively instead of
        building its tables shared across epsilons, which cost several single sums. Sweeps (several epsilons
        in a call, or later calls) and epsilon searches use the tables."""
        epsilons = self._checked_epsilons(epsilons)
        self._lone = epsilons.size == 1 and not self._asked
        self._asked = True
        try:
            return super().log_delta_for_epsilon(epsilons)
        finally:
            self._lone = False

    def member_log_deltas(self, eps: float) -> dict[str, float]:
        """log delta of each member at ``eps`` (the accountant returns their maximum).

        Args:
            eps: the central epsilon.

        Returns:
            member name -> log delta: the family's three (:data:`FAMILY`) and the widened members that cover
            this setting (:mod:`~shuffledp.accounting.worst_case.families.widened`).
        """
        members = self._families.sums.member_log_deltas(eps)
        members.update(self.widened.log_deltas(eps, lone=self._lone))
        return members

    def binned_views(self, *, interval: float, pessimistic: bool, K: float, log_masses: bool = False) -> list:
        if log_masses:
            raise ValueError(
                f"`log_masses` must be False for accountant {self.name!r} (its masses are not "
                "formed per outcome); got True."
            )
        s = self.setting
        return binned(
            epsilon_local=s.epsilon_local,
            n_users=s.n_users,
            k=s.k,
            interval=interval,
            pessimistic=pessimistic,
            K=K,
        )

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:
        # a lower bound: what the windows leave out is simply dropped (the true value is only larger)
        # the family's maximum without evaluating members that cannot be it (the same value to the bit)
        best = self._families.sums.log_delta_max(eps)
        widened = self.widened.log_deltas(eps, above=best, lone=self._lone)
        return max([best, *widened.values()]), -np.inf

    def _chernoff(self) -> ChernoffBound:
        if getattr(self, "_chernoff_bound", None) is None:
            s = self.setting
            self._chernoff_bound = ChernoffBound(
                n_users=s.n_users, k=s.required_k, epsilon_local=s.epsilon_local
            )
        return self._chernoff_bound

    def _epsilon_hint(self, log_target: float) -> float | None:
        """The weak adversary's Chernoff bound bounds every dataset's delta, these included: where it
        meets the target so does this lower bound (a certified upper end for the search)."""
        return self._chernoff().epsilon_hint(log_target)

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        return self._chernoff().epsilon_refine(log_target, eps, log_value)
