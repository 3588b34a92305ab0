"""Bracket the worst-case privacy of shuffled k-RR between a valid upper bound and a lower bound.

``bracket(epsilon_local=..., n_users=..., k=..., deltas=[...])`` gives, for each target delta, the
epsilon of the tightest valid upper bound we have (``worst-case-upper``: valid for every pair of
neighbouring datasets; certified over every dataset in the ranges its scope lists, ``weak-adversary``'s
value beyond)
and of the lower bound on the worst case (``worst-case-lower``: attained by
explicit datasets), with their ratio. ``epsilons=[...]`` does the same for delta at each epsilon. The
true worst-case value lies inside the bracket; a ratio near 1 means the guarantee is tight.

Rounding: the upper epsilon errs upwards (it always meets the target), the lower one downwards.

Order: at each delta the lower end is searched first. Its epsilon is an evaluated point where the lower
bound's delta exceeds the target, so the upper bound's does too (upper >= true worst case >= lower): the upper
end's search starts from it as a certified lower end and first tries the point just within its tolerance
above it, which alone closes the search where the guarantee is tight (most of the default grid;
docs/decisions/worst-case.md, "The bracket's cost").
"""

from __future__ import annotations

import math
from typing import cast

from shuffledp.accounting import get_accountant
from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.remainder import BracketedMixin

__all__ = ["bracket", "UPPER", "LOWER"]

UPPER = "worst-case-upper"
LOWER = "worst-case-lower"


def bracket(
    *,
    epsilon_local: float,
    n_users: int,
    k: int,
    deltas=None,
    epsilons=None,
    upper: str = UPPER,
    lower: str = LOWER,
) -> list[dict]:
    """Bracket the worst case over datasets: the lower and the upper end side by side, with their ratio.

    Args:
        epsilon_local: k-RR's local epsilon_0, in (0, inf).
        n_users: number of users n, an integer >= 1.
        k: domain size, an integer >= 2.
        deltas: target deltas; for each, the epsilon of both ends (give exactly one of ``deltas`` and
            ``epsilons``).
        epsilons: epsilons; for each, the delta of both ends.
        upper: registry name of the upper end (a valid upper bound for every dataset).
        lower: registry name of the lower end.

    Returns:
        One dict per target. With ``deltas``: ``delta``, ``eps_lower``, ``eps_upper``, ``ratio``
        (``eps_upper / eps_lower``), ``lower``, ``upper`` (the accountants' names). With ``epsilons``:
        ``eps``, ``delta_lower``, ``delta_upper``, ``log_delta_lower``, ``log_delta_upper``, ``ratio``
        (``delta_upper / delta_lower``), ``lower``, ``upper``.

    Raises:
        ValueError: both or neither of ``deltas`` and ``epsilons`` are given, or an accountant refuses the
            parameters (one line naming the parameter, its range and the value).
    """
    if (deltas is None) == (epsilons is None):
        raise ValueError(
            "exactly one of `deltas` and `epsilons` must be given; got "
            f"deltas={deltas!r}, epsilons={epsilons!r}."
        )
    hi = get_accountant(upper, epsilon_local=epsilon_local, n_users=n_users, k=k)
    lo = get_accountant(lower, epsilon_local=epsilon_local, n_users=n_users, k=k)
    rows = []
    if deltas is not None:
        for delta in deltas:
            e_lo = lo.epsilon_for_delta(delta)
            e_hi = _upper_epsilon(hi, lo, delta, e_lo)
            ratio = e_hi / e_lo if e_lo > 0 else (1.0 if e_hi == 0 else math.inf)
            rows.append(
                {
                    "delta": float(delta),
                    "eps_lower": e_lo,
                    "eps_upper": e_hi,
                    "ratio": ratio,
                    "lower": lo.name,
                    "upper": hi.name,
                }
            )
    else:
        log_hi = hi.log_delta_for_epsilon(epsilons)
        log_lo = lo.log_delta_for_epsilon(epsilons)
        for eps, a, b in zip(epsilons, log_lo, log_hi):
            ratio = math.exp(b - a) if a > -math.inf else (1.0 if b == -math.inf else math.inf)
            rows.append(
                {
                    "eps": float(eps),
                    "delta_lower": math.exp(a),
                    "delta_upper": math.exp(b),
                    "log_delta_lower": float(a),
                    "log_delta_upper": float(b),
                    "ratio": ratio,
                    "lower": lo.name,
                    "upper": hi.name,
                }
            )
    return rows


def _upper_epsilon(hi: Accountant, lo: Accountant, delta: float, eps_lower: float) -> float:
    """The upper end's epsilon at ``delta``, its search started from the lower end's ``eps_lower`` where that is
    certified below the answer: a positive epsilon of a bracketed LOWER bound (the end of its final bracket
    answered "above the target") for a bracketed UPPER bound; else the upper end's own search."""
    certified = (
        isinstance(lo, BracketedMixin)
        and lo.kind is BoundKind.LOWER
        and isinstance(hi, BracketedMixin)
        and hi.kind is BoundKind.UPPER
        and eps_lower > 0.0
    )
    if not certified:
        return hi.epsilon_for_delta(delta)
    return cast(BracketedMixin, hi).epsilon_for_delta(delta, above=eps_lower)
