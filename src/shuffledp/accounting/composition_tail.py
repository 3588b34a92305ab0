"""The rounds of a composition as log-space privacy-loss distributions for the Chernoff tail bound of
:mod:`shuffledp.accounting.numerics.composed_tail` (issue 22: composed delta certified to 1e-300).

Each distinct round's view is built once, pessimistic (losses rounded up), with windows of +-
:data:`K_TAIL` standard deviations (what they leave out, a certified bound ~e^-720, goes into the
infinity mass) and with its masses in log space (``BinnedView.logs``: no mass underflows), on the grid
:func:`tail_interval` (coarser than the PLD's: every loss is rounded up once more, which moves the
composed epsilon by at most T times that width, the safe way). Both directions are formed, with
subsampling, as :func:`shuffledp.accounting.composition._direction` forms them in linear space:
REMOVE (q P + (1 - q) Q, Q) with loss log(q e^L + 1 - q), ADD (Q, q P + (1 - q) Q) with its negative.

Only views whose binned masses are formed outcome by outcome (:data:`TAIL_ACCOUNTANTS`) are used this
way. A view may instead form its tail rounds itself from its own outcomes (a ``tail_rounds`` method on
the accountant's ``view``, available where its ``has_tail()`` says so): the weak adversary does
(:mod:`shuffledp.accounting.views.weak.tail`), because its run reduction forms masses as prefix-sum
differences (absolute error ~1e-16), which cannot certify a tail of 1e-300. Where its windows are too
large for that (n above ~10^4) it keeps the PLD's floor. (The strong adversary's tail is a valid upper
bound for it -- the weak adversary sees less, Koskela, Heikkila, Honkela 2021, Defs. 1 and 3 -- but can
be far above it: 4.8e-6 against 1.7e-66 for one round at n = 300, eps0 = 0.5, k = 2 (measured in
tests/accounting/test_composition.py), so it is not substituted.)
"""

from __future__ import annotations

import functools
import math
from collections import Counter

import numpy as np

from shuffledp.accounting import get_accountant
from shuffledp.accounting.numerics.composed_tail import TailRound
from shuffledp.accounting.views.binned import LogMasses

__all__ = ["TAIL_ACCOUNTANTS", "VIEW_TAIL_ACCOUNTANTS", "K_TAIL", "tail_interval", "tail_rounds", "tail_source"]

#: accountants whose binned masses are sums of per-outcome masses (module docstring)
TAIL_ACCOUNTANTS = ("strong-adversary", "feldman-numerical", "clones-krr")
#: windows of the views behind the tail bound: +- 38 sd, certified remainder ~e^-720 per tail
K_TAIL = 38.0
#: coarsest grid of the tail views (bins of the PLD's width when that is coarser)
TAIL_GRID = 1e-4


#: accountants whose view forms its own tail rounds from its outcomes (module docstring)
VIEW_TAIL_ACCOUNTANTS = ("weak-adversary",)


def _view(name: str, r):
    return get_accountant(name, epsilon_local=r.epsilon_local, n_users=r.per_round, k=r.k).view


def tail_source(name: str, rounds=None) -> str | None:
    """The accountant whose tail bound serves ``name`` (itself, for :data:`TAIL_ACCOUNTANTS`, and for
    :data:`VIEW_TAIL_ACCOUNTANTS` when the view of every round in ``rounds`` forms its tail), else None."""
    if name in TAIL_ACCOUNTANTS:
        return name
    if name in VIEW_TAIL_ACCOUNTANTS and rounds is not None and _views_have_tails(name, frozenset(rounds)):
        return name
    return None


@functools.lru_cache(maxsize=64)
def _views_have_tails(name: str, distinct_rounds: frozenset) -> bool:
    """Whether the view of every distinct round forms its own tail (asked once per composition)."""
    return all(_view(name, r).has_tail() for r in distinct_rounds)


def tail_interval(interval: float) -> float:
    """Grid width of the tail views: the PLD's ``interval`` or :data:`TAIL_GRID`, whichever is larger."""
    return max(float(interval), TAIL_GRID)


def _rounded_up(loss: np.ndarray, width: float) -> np.ndarray:
    return np.ceil(loss / width) * width


def _log_direction(logs: LogMasses, width: float, q: float, reverse: bool):
    """(losses, log masses, log infinity mass) of one direction of the (subsampled) pessimistic pair."""
    k = logs.index.astype(float)
    log_rate, log_1mq = math.log(q), (math.log1p(-q) if q < 1.0 else -math.inf)
    if not reverse:
        edge, sign = k * width, 1.0  # upper edge of every bin
        log_mass = np.logaddexp(log_rate + logs.log_p_mass, log_1mq + logs.log_q_mass)
        extra_loss, log_extra = (math.log1p(-q), log_1mq + logs.log_q_infinity) if q < 1.0 else (0.0, -math.inf)
        log_infinity = log_rate + logs.log_p_infinity
    else:
        edge, sign = (k - 1.0) * width, -1.0
        log_mass = logs.log_q_mass
        extra_loss, log_extra = (-math.log1p(-q), logs.log_q_infinity) if q < 1.0 else (0.0, -math.inf)
        log_infinity = logs.log_q_infinity if q == 1.0 else -math.inf
    loss = np.rint(sign * edge / width) * width if q == 1.0 else _rounded_up(sign * np.log1p(q * np.expm1(edge)), width)
    if log_extra > -math.inf:
        loss = np.append(loss, math.ceil(extra_loss / width) * width)
        log_mass = np.append(log_mass, log_extra)
    return loss, log_mass, float(np.logaddexp(log_infinity, logs.log_dropped))


def tail_rounds(name: str, rounds, interval: float) -> list[list[TailRound]]:
    """Per direction (REMOVE, ADD), the distinct rounds (objects with ``epsilon_local``, ``per_round``,
    ``k``, ``subsample``; repeats counted) as :class:`TailRound`, for the Chernoff bound."""
    if name not in TAIL_ACCOUNTANTS + VIEW_TAIL_ACCOUNTANTS:
        raise ValueError(f"`accountant` must be one of {', '.join(TAIL_ACCOUNTANTS + VIEW_TAIL_ACCOUNTANTS)} "
                         f"for the composed tail bound; got {name!r}.")
    width = tail_interval(interval)
    directions = [[], []]
    for r, count in Counter(rounds).items():
        if name in VIEW_TAIL_ACCOUNTANTS:  # the view forms its rounds from its own outcomes
            remove, add = _view(name, r).tail_rounds(r.subsample, width, count)
            directions[0].append(remove)
            directions[1].append(add)
            continue
        accountant = get_accountant(name, epsilon_local=r.epsilon_local, n_users=r.per_round, k=r.k)
        view = accountant.binned_views(interval=width, pessimistic=True, K=K_TAIL, log_masses=True)[0]
        remove = TailRound(*_log_direction(view.logs, width, r.subsample, False), count)
        same = view.symmetric and r.subsample == 1.0  # (Q, P) is (P, Q) relabelled: one PLD for both
        directions[0].append(remove)
        directions[1].append(remove if same else TailRound(*_log_direction(view.logs, width, r.subsample, True),
                                                           count))
    return directions
