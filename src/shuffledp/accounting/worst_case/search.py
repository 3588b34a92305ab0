"""The one interface of the searches over datasets: given a setting, and then one epsilon at a time, a
certified upper value of the worst case over datasets, the best dataset found with its lower value, and
whether the search closed.

A search is built once per setting (:class:`Search`: it keeps its laws and bounds across epsilons) and
answers :meth:`Search.result` with a :class:`SearchResult`. Which search runs for a setting is decided by
the table of regimes (:mod:`shuffledp.accounting.worst_case.regimes`), never by the accountant.
"""

from __future__ import annotations

import abc
import enum
import math
from dataclasses import dataclass
from typing import ClassVar

from shuffledp.accounting.params import ShuffleSetting

__all__ = ["Search", "SearchResult", "Status", "krr_numbers", "log_or_minus_inf"]


class Status(enum.Enum):
    """How a search stopped."""

    #: the search met its own stopping rule: the upper value is within its stated tolerance of the best
    #: dataset found (or it enumerated every dataset)
    CLOSED = "closed"
    #: the search stopped on a budget (nodes, work, evaluations): the upper value is the largest bound left
    #: open, still certified, and may be far from the best dataset found
    OPEN = "open"


@dataclass(frozen=True)
class SearchResult:
    """One search's answer at one epsilon.

    ``log_upper``: log of a certified upper bound on delta for every dataset and both directions (the
    search's own value; the regime table says what it is capped by). ``log_lower``: log of the exact delta
    of the best dataset found, a certified lower value on the worst case, before any rounding allowance
    (-inf where the search certifies none). ``dataset``: that dataset as counts (n_x0, ...; None where the
    search names none). ``status``: :class:`Status`."""

    log_upper: float
    log_lower: float
    dataset: tuple | None
    status: Status


class Search(abc.ABC):
    """A search over datasets for one setting (module docstring). Subclasses set ``name`` and implement
    :meth:`result`; whatever they keep across epsilons is their own (typed) state."""

    name: ClassVar[str]

    def __init__(self, setting: ShuffleSetting):
        self.setting = setting
        self.n_users, self.k, self.epsilon_local = krr_numbers(setting)

    @abc.abstractmethod
    def result(self, eps: float) -> SearchResult:
        """The search at one epsilon.

        Args:
            eps: the central epsilon (>= 0).

        Returns:
            The certified upper value, the best dataset found and its lower value, and the status.
        """


def log_or_minus_inf(value: float) -> float:
    """``math.log(value)``, or -inf for a value that is not positive.

    Args:
        value: a delta (a probability difference, >= 0).

    Returns:
        Its natural log, -inf at 0.
    """
    return math.log(value) if value > 0 else -math.inf


def krr_numbers(setting: ShuffleSetting) -> tuple[int, int, float]:
    """(n_users, k, epsilon_local) of a k-RR setting, typed.

    Args:
        setting: the shuffle setting.

    Returns:
        Its number of users, domain size and local epsilon.

    Raises:
        ValueError: for a randomizer without a domain size or a local epsilon (the searches are for k-RR).
    """
    if setting.k is None or setting.epsilon_local is None:
        raise ValueError(
            f"`setting` must be a k-RR setting (k and epsilon_local given) for a search over datasets; "
            f"got k={setting.k!r}, epsilon_local={setting.epsilon_local!r}."
        )
    return setting.n_users, setting.k, setting.epsilon_local
