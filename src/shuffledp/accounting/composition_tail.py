"""The rounds of a composition as log-space privacy-loss distributions for the Chernoff tail bound of
:mod:`shuffledp.accounting.numerics.composed_tail` (composed delta certified down to 1e-300).

The composed tail is a property of a view: an accountant whose view's stream certifies it
(:meth:`~shuffledp.accounting.accountants.base.Accountant.certifies_tail`: its view forms every outcome's
mass in log space) has its rounds formed by the view itself
(:meth:`~shuffledp.accounting.views.base.View.tail_rounds`, :mod:`shuffledp.accounting.views.derived.tail`):
each distinct round's view built once, pessimistic (losses rounded up), with windows of +- :data:`K_TAIL`
standard deviations (what they leave out, a certified bound ~e^-720, goes into the infinity mass), on the grid
:func:`tail_interval` (coarser than the PLD's: every loss is rounded up once more, which moves the composed
epsilon by at most T times that width, the safe way), both directions, with subsampling.

An accountant whose view's stream certifies a tail (``View.certifies_tail``, and ``View.has_tail()`` for its
setting) gives each round's tail from its view: the weak adversary's view forms its own
(:mod:`shuffledp.accounting.views.weak.tail`: its run-reduced PLD forms masses as prefix-sum differences,
absolute error ~1e-16, which cannot certify a tail of 1e-300), for windows up to a size (boxes of (s, d, m) at large n: n = 10^6 and beyond); where
even these are too many, and for accountants without such a view, the PLD's floor is kept. (The strong adversary's
tail is a valid upper bound for the weak one -- the weak adversary sees less, Koskela, Heikkila, Honkela
2021, Defs. 1 and 3 -- but can be far above it: 4.8e-6 against 1.7e-66 for one round at n = 300,
eps0 = 0.5, k = 2 (measured in tests/accounting/test_composition.py), so it is not substituted.)
"""

from __future__ import annotations

import functools
from collections import Counter

from shuffledp.accounting import accountant_class, check_randomizer, get_accountant
from shuffledp.accounting.randomizers import KRR

__all__ = [
    "K_TAIL",
    "TAIL_GRID",
    "tail_interval",
    "tail_rounds",
    "certifies_tail",
    "check_supported",
    "round_accountant",
]

#: windows of the views behind the tail bound: +- 38 sd, certified remainder ~e^-720 per tail
K_TAIL = 38.0
#: coarsest grid of the tail views (bins of the PLD's width when that is coarser)
TAIL_GRID = 1e-4


def check_supported(name: str, randomizer) -> None:
    """Refuse, in one line naming the accountant, the randomizer and what is supported, a randomizer that
    accountant ``name`` or its view does not support.

    Raises:
        ValueError: the refusal.
    """
    check_randomizer(accountant_class(name), randomizer)


def round_accountant(name: str, r, n_users: int | None = None):
    """Accountant ``name`` for one round ``r`` (an object with ``randomizer`` and ``per_round``): ``per_round``
    users (or ``n_users``) each applying the round's randomizer. A k-RR round is built from its loose parameters
    (epsilon_local, k), as the registry builds k-RR; another randomizer is passed as itself.

    Args:
        name: the registry name of the bound.
        r: the round (:class:`~shuffledp.accounting.composition.Round`).
        n_users: the users of the accountant (default: the round's ``per_round``).

    Returns:
        The accountant.

    Raises:
        ValueError: one line, when the accountant or its view does not support the round's randomizer.
    """
    check_supported(name, r.randomizer)
    n_users = r.per_round if n_users is None else n_users
    if isinstance(r.randomizer, KRR):
        return get_accountant(name, epsilon_local=r.epsilon_local, n_users=n_users, k=r.k)
    return get_accountant(name, randomizer=r.randomizer, n_users=n_users)


def certifies_tail(name: str, rounds=None) -> bool:
    """Whether accountant ``name``'s view certifies the composed tail (module docstring), for every distinct round
    of ``rounds`` when given (a view may certify it only up to a size: ``View.has_tail``)."""
    if not accountant_class(name).certifies_tail():
        return False
    return rounds is None or _views_have_tails(name, frozenset(rounds))


@functools.lru_cache(maxsize=64)
def _views_have_tails(name: str, distinct_rounds: frozenset) -> bool:
    """Whether the view of every distinct round forms its own tail (asked once per composition)."""
    return all(round_accountant(name, r).view().has_tail(subsample=r.subsample) for r in distinct_rounds)


def tail_interval(interval: float) -> float:
    """Grid width of the tail views: the PLD's ``interval`` or :data:`TAIL_GRID`, whichever is larger."""
    return max(float(interval), TAIL_GRID)


def tail_rounds(name: str, rounds, interval: float) -> list[list]:
    """Per direction (REMOVE, ADD), the distinct rounds (objects with ``randomizer``, ``epsilon_local``,
    ``per_round``, ``k``, ``subsample``; repeats counted) as :class:`~shuffledp.accounting.numerics.composed_tail.TailRound`."""
    if not certifies_tail(name):
        raise ValueError(
            f"`accountant` must be one whose view certifies the composed tail for the tail bound "
            f"(its masses formed outcome by outcome in log space); got {name!r}."
        )
    width = tail_interval(interval)
    directions: list[list] = [[], []]
    for r, count in Counter(rounds).items():
        view = round_accountant(name, r).view()
        remove, add = view.tail_rounds(interval=width, subsample=r.subsample, count=count, K=K_TAIL)
        directions[0].append(remove)
        directions[1].append(add)
    return directions
