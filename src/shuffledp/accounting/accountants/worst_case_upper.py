"""``worst-case-upper``: a certified UPPER bound on the worst case over datasets.

A view plus metadata: the value is the search over datasets that the table of regimes
(:mod:`shuffledp.accounting.worst_case.regimes`) runs for the setting, behind the one search interface
(:class:`~shuffledp.accounting.worst_case.search.Search`), capped where the table says by the weak
adversary's value (:class:`~shuffledp.accounting.views.weak.view.WeakView`); where no search runs, or where the
weak adversary's Chernoff bound is below e^-700 or already meets the target, it is the weak adversary's
value. A maximum over datasets taken at each epsilon is not the profile of one pair; it composes through
the pair that dominates its certified profile (:mod:`shuffledp.accounting.views.derived.profile`,
docs/composing-a-profile.md), whose PLD is what :meth:`WorstCaseUpper.binned_views` returns. What the
papers say, what each search certifies and why the regimes end where they do: docs/decisions/worst-case.md.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.views.derived.profile import profile_view
from shuffledp.accounting.views.weak.view import WeakView
from shuffledp.accounting.worst_case.regimes import regime_for
from shuffledp.accounting.worst_case.search import Search

__all__ = ["WorstCaseUpper"]

#: below this log value the weak adversary's Chernoff bound is beyond the accuracy promise: no search runs
_LOG_BEYOND_PROMISE = -700.0


class WorstCaseUpper(BracketedMixin, Accountant):
    """Certified upper bound on the worst case over datasets: the search of the setting's regime (module doc)."""

    name = "worst-case-upper"
    label = "worst-case-upper"
    colour = "#EE3377"
    kind = BoundKind.UPPER
    composed_beside = "weak-adversary"  # its profile's pair is looser where no search runs (k >= 4, large n)
    scope = (
        "all neighbouring datasets (replace-one), both directions: the certified maximum over every dataset "
        "found by the search of the setting's regime (exact for k = 2 to n = 10^4 and k = 3 to n = 200; "
        "searched for k = 2 to n = 10^8, k = 3 to n = 10^4 where the laws are narrow, k = 4 to n = 50, "
        "k >= 5 to n = 32, each capped by weak-adversary's value); elsewhere weak-adversary's value"
    )
    reference = (
        "this package: exact histogram delta of explicit datasets and partial-knowledge views (post-processing) "
        "bounding blocks of datasets (docs/decisions/worst-case.md, docs/worst-case-k3.md, docs/worst-case-k4.md); "
        "Koskela, Heikkila, Honkela (2021) Def. 3 beyond"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._weak = WeakView(self.setting)
        self._regime = regime_for(self.setting)  # None: no search runs (this is weak-adversary's value)
        self._search: Search | None = None  # built at the first epsilon that needs it

    @property
    def searched(self) -> bool:
        """Whether a search over datasets runs for this setting (False: this accountant is ``weak-adversary``'s
        value at every epsilon, and its profile's pair is no tighter than the weak adversary's own PLD)."""
        return self._regime is not None

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:  # pragma: no cover - not used
        raise NotImplementedError

    def log_delta_parts(
        self, eps: float, log_target: float | None = None, start_K: float = 8.0
    ) -> tuple[float, float]:
        """(-inf, log certified upper value): the value is one certified number, no separate remainder."""
        self.last_K = start_K
        bound = self._weak.chernoff.log_delta(float(eps))
        regime = self._regime
        if regime is None or bound < _LOG_BEYOND_PROMISE or (log_target is not None and bound <= log_target):
            weak_parts = self._weak.log_delta_parts(eps, log_target, start_K)
            if regime is None:
                return weak_parts
            return -np.inf, float(np.logaddexp(*weak_parts))
        if self._search is None:
            self._search = regime.search(self.setting)
        value = self._search.result(float(eps)).log_upper
        if regime.capped_by_weak:
            value = min(value, self._weak_log(eps, start_K))
        return -np.inf, min(value, 0.0)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """Where no search runs (this accountant is ``weak-adversary``'s value there) all epsilons are
        evaluated together by the weak view (:meth:`~shuffledp.accounting.views.weak.view.WeakView.log_deltas`:
        tables shared between the epsilons, and the smaller of the sum and the differing user's own k-RR
        delta, both certified upper bounds, as ``weak-adversary`` reports); elsewhere one epsilon at a time."""
        if self._regime is not None:
            return super().log_delta_for_epsilon(epsilons)
        return self._weak.log_deltas(self._checked_epsilons(epsilons))

    def binned_views(self, *, interval: float, pessimistic: bool, K: float, log_masses: bool = False) -> list:
        """The pessimistic PLD of the pair dominating this accountant's certified profile (one symmetric pair:
        every value is a maximum over all datasets and both directions), from the profile on a grid of epsilons
        (:func:`~shuffledp.accounting.views.derived.profile.profile_view`). ``K`` and ``log_masses`` do not apply
        (no windows; the masses are not formed outcome by outcome).

        Args:
            interval: the PLD's loss grid width.
            pessimistic: must be True: the dominating pair is an upper bound, with no optimistic counterpart.
            K: unused (the summation windows of views with outcomes).
            log_masses: must be False (the composed tail is not certified from a profile).

        Returns:
            One :class:`~shuffledp.accounting.views.binned.BinnedView`.

        Raises:
            ValueError: ``pessimistic`` False or ``log_masses`` True.
        """
        if not pessimistic:
            raise ValueError(
                f"`pessimistic` must be True for {self.name!r} (the pair dominating a certified profile is an "
                f"upper bound only); got {pessimistic!r}."
            )
        if log_masses:
            raise ValueError(f"`log_masses` must be False for {self.name!r}; got {log_masses!r}.")
        return [profile_view(self, interval=interval)]

    def _weak_log(self, eps: float, start_K: float) -> float:
        """log of ``weak-adversary``'s certified value (its two parts added): the fallback each search is capped by."""
        return float(np.logaddexp(*self._weak.log_delta_parts(eps, None, start_K)))

    def _epsilon_hint(self, log_target: float) -> float | None:
        return self._weak.epsilon_hint(log_target)

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        return self._weak.epsilon_refine(log_target, eps, log_value)
