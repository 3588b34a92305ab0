"""The explicit datasets ``worst-case-lower`` adds to the family, each where its regime covers the setting.

Every member is the exact delta (a certified lower value) of explicit datasets, so the accountant's value,
the maximum over the family and these, stays a lower bound on the worst case. The table
(:data:`WIDENED`):

=========================  =====  ==============================================================
member                     k      n
=========================  =====  ==============================================================
"one value"                >= 4   201 .. 10^4: every other user on x2, its whole histogram
"best (n_x0, n_x1) found"  3      201 .. 10^4 where the k = 3 windowed search runs: its best dataset
"every (n_x0, n_x1)"       3      1 .. 200: the exact worst case (the search of ``worst-case-upper``)
"third value"              >= 4   1 .. 200: "n_x0 on x0, n_x1 on x1, the rest on x2" (pairs below)
=========================  =====  ==============================================================

"third value" takes every (n_x0, n_x1) for n <= :data:`MAX_USERS_ALL_PAIRS`, else the small ones of
:data:`THIRD_VALUE_DATASETS` (the first three above n = :data:`MAX_USERS_EXACT`), plus "all on x0 but j
on x2" (j <= :data:`HEAVY_MOVED`) up to n = :data:`MAX_USERS_HEAVY`. Why these ranges: the member table
and its cost in docs/worst-case-k3.md, "The lower end's family by n", and docs/decisions/worst-case.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.worst_case.exact.enumeration import third_value_delta, third_value_outputs
from shuffledp.accounting.worst_case.families.third_value import OneValueView
from shuffledp.accounting.worst_case.k3.blocks import MAX_USERS_K3_BLOCKS, K3ExactSearch
from shuffledp.accounting.worst_case.k3.large import (
    MAX_USERS_K3_LARGE,
    MIN_USERS_K3_LARGE,
    K3WindowedSearch,
    searched,
)
from shuffledp.accounting.worst_case.search import krr_numbers

__all__ = [
    "HEAVY_MOVED",
    "MAX_USERS_ALL_PAIRS",
    "MAX_USERS_EXACT",
    "MAX_USERS_HEAVY",
    "MAX_USERS_ONE_VALUE",
    "MAX_USERS_THIRD",
    "THIRD_VALUE_DATASETS",
    "WIDENED",
    "Widened",
    "WidenedMembers",
]

#: above this n "third value" takes only the first ``_LARGE_THIRD`` datasets (an epsilon search ~3 s at n = 200)
MAX_USERS_EXACT = 64
#: largest n of "third value" (each dataset a windowed three-count law)
MAX_USERS_THIRD = 200
#: (n_x0, n_x1) of the "third value" datasets above MAX_USERS_ALL_PAIRS (forward direction; (b, a) is the
#: reverse direction of (a, b)); at or below it every (a, b)
THIRD_VALUE_DATASETS = ((0, 0), (1, 0), (0, 1), (2, 0), (0, 2), (1, 1))
MAX_USERS_ALL_PAIRS = 16
#: "every other user on x0 but j of them on x2" (its reverse is "all on x1 but j on x2"), j = 1 .. HEAVY_MOVED,
#: above MAX_USERS_ALL_PAIRS up to MAX_USERS_HEAVY (enumerated maximisers at k = 4, n = 20 and 24 are of this
#: shape). Their law is built user by user over an n x n x n grid (~0.16 s per dataset at n = 64)
HEAVY_MOVED = 3
MAX_USERS_HEAVY = 64
#: largest n of "one value" (~0.3 s per epsilon at n = 10^4, k = 10)
MAX_USERS_ONE_VALUE = 10_000
_LARGE_THIRD = 3
_LOG_BEYOND_PROMISE = -700.0
_LOG_ROUNDING = 1e-13  # the certified lower values lose this in log: exp(log(x)) stays below x
#: "one value" is a sum of closed-form expected excesses whose error is not bounded term by term; it loses
#: this in log, the agreement its tests check (brute force, an independent summation: within 1e-9 in log)
_LOG_ONE_VALUE_ACCURACY = 1e-9


@dataclass(frozen=True)
class Widened:
    """One row of :data:`WIDENED`: the member ``name`` for k in [k_min, k_max] (None: no end), n in
    [n_min, n_max] and ``condition(n_users, epsilon_local)`` where given."""

    name: str
    k_min: int
    k_max: int | None
    n_min: int
    n_max: int
    condition: Callable[[int, float], bool] | None = None

    def covers(self, setting: ShuffleSetting) -> bool:
        """Whether this member is evaluated for ``setting``.

        Args:
            setting: the shuffle setting.

        Returns:
            True when k and n are in range and the condition (if any) holds.
        """
        if setting.k is None or setting.epsilon_local is None:  # not k-RR: no search
            return False
        n, k, e0 = krr_numbers(setting)
        in_k = self.k_min <= k and (self.k_max is None or k <= self.k_max)
        in_n = self.n_min <= n <= self.n_max
        return in_k and in_n and (self.condition is None or self.condition(n, e0))


#: the members beyond the family, in the order they are evaluated (module docstring)
WIDENED: tuple[Widened, ...] = (
    Widened("one value", 4, None, MAX_USERS_THIRD + 1, MAX_USERS_ONE_VALUE),
    Widened("best (n_x0, n_x1) found", 3, 3, MIN_USERS_K3_LARGE, MAX_USERS_K3_LARGE, searched),
    Widened("every (n_x0, n_x1)", 3, 3, 1, MAX_USERS_K3_BLOCKS),
    Widened("third value", 4, None, 1, MAX_USERS_THIRD),
)


def _log_lower(value: float) -> float:
    """log of a certified lower value, less the rounding allowance (-inf at 0)."""
    return float(np.log(value)) - _LOG_ROUNDING if value > 0 else -np.inf


class WidenedMembers:
    """The rows of :data:`WIDENED` that cover one setting, evaluated at one epsilon at a time; what does not
    depend on epsilon (the "one value" tables, the "third value" laws) is kept across epsilons."""

    def __init__(self, setting: ShuffleSetting):
        self.setting = setting
        self.rows = [row for row in WIDENED if row.covers(setting)]
        self.n_users, self.k, self.epsilon_local = krr_numbers(setting)
        self.one_value: OneValueView | None = None
        self._third: dict[tuple[int, int], tuple] | None = None
        self._evaluate: dict[str, Callable[[float, float | None, bool], float | None]] = {
            "one value": self._one_value_member,
            "best (n_x0, n_x1) found": self._best_found,
            "every (n_x0, n_x1)": self._every_pair,
            "third value": self._third_value,
        }

    def log_deltas(self, eps: float, above: float | None = None, lone: bool = False) -> dict[str, float]:
        """log delta (certified lower values) of each member at ``eps``.

        Args:
            eps: the central epsilon.
            above: the family's maximum, or None; "one value" is skipped where its certified Chernoff bound
                lies below it (its value cannot be the maximum) or below e^-700.
            lone: True for one epsilon asked of a fresh accountant: "one value" is summed adaptively
                instead of building its tables.

        Returns:
            member name -> log delta, for the members evaluated ({} for k = 2 or eps >= eps0).
        """
        members: dict[str, float] = {}
        if self.k < 3 or eps >= self.epsilon_local:
            return members
        for row in self.rows:
            value = self._evaluate[row.name](float(eps), above, lone)
            if value is not None:
                members[row.name] = value
        return members

    def _one_value_member(self, eps: float, above: float | None, lone: bool) -> float | None:
        if self.one_value is None:
            self.one_value = OneValueView(n_users=self.n_users, k=self.k, epsilon_local=self.epsilon_local)
        if above is not None and self.one_value.tables.log_bound(eps) < max(above, _LOG_BEYOND_PROMISE):
            return None
        value = self.one_value.log_delta(eps, tables=not lone)
        return value - _LOG_ONE_VALUE_ACCURACY if np.isfinite(value) else -np.inf

    def _best_found(self, eps: float, above: float | None, lone: bool) -> float:
        # the best dataset the k = 3 windowed search found (its exact delta, a certified lower value)
        return K3WindowedSearch(self.setting).result(eps).log_lower - _LOG_ROUNDING

    def _every_pair(self, eps: float, above: float | None, lone: bool) -> float:
        # the exact k = 3 worst case (enumeration, or blocks above MAX_USERS_EXACT)
        return K3ExactSearch(self.setting).result(eps).log_lower - _LOG_ROUNDING

    def _third_value(self, eps: float, above: float | None, lone: bool) -> float:
        n, k, e0 = self.n_users, self.k, self.epsilon_local
        if self._third is None:  # the laws and (P, Q) do not depend on eps: built once
            self._third = {
                (a, b): third_value_outputs(n_users=n, k=k, epsilon_local=e0, a=a, b=b)
                for a, b in third_value_pairs(n)
            }
        value = max(
            third_value_delta(eps, n_users=n, k=k, epsilon_local=e0, a=a, b=b, outputs=outputs)
            for (a, b), outputs in self._third.items()
        )
        return _log_lower(value)


def third_value_pairs(n_users: int) -> list[tuple[int, int]]:
    """The (n_x0, n_x1) of the "third value" datasets at ``n_users`` (module docstring).

    Args:
        n_users: the number of users n.

    Returns:
        The forward-direction pairs, in evaluation order.
    """
    n = n_users
    pairs = (
        [(a, b) for a in range(n) for b in range(n - a)]
        if n <= MAX_USERS_ALL_PAIRS
        else [(a, b) for a, b in THIRD_VALUE_DATASETS if a + b <= n - 1]
    )
    if n > MAX_USERS_EXACT:
        pairs = pairs[:_LARGE_THIRD]
    if MAX_USERS_ALL_PAIRS < n <= MAX_USERS_HEAVY:  # below: among every (a, b)
        pairs += [(n - 1 - j, 0) for j in range(1, HEAVY_MOVED + 1) if (n - 1 - j, 0) not in pairs]
    return pairs
