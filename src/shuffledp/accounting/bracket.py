"""Bracket the worst-case privacy of shuffled k-RR between a valid upper bound and a lower bound.

``bracket(epsilon_local=..., n_users=..., k=..., deltas=[...])`` gives, for each target delta, the
epsilon of the tightest valid upper bound we have (``worst-case-upper``: valid for every pair of
neighbouring datasets; the certified maximum over datasets for k = 2 and for k = 3 up to n = 200 (above, within 1% of
it where the laws are narrow, issue 34), the
own-value-hit views for k >= 4 up to n = 32, ``weak-adversary``'s value beyond; its scope says which)
and of the lower bound on the worst case (``worst-case-lower``: attained by
explicit datasets), with their ratio. ``epsilons=[...]`` does the same for delta at each epsilon. The
true worst-case value lies inside the bracket; a ratio near 1 means the guarantee is tight.

Rounding: the upper epsilon errs upwards (it always meets the target), the lower one downwards.
"""

from __future__ import annotations

import math

from shuffledp.accounting import get_accountant

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
    """Rows of {target, lower, upper, ratio} (see the module docstring); exactly one of deltas/epsilons."""
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
            e_hi, e_lo = hi.epsilon_for_delta(delta), lo.epsilon_for_delta(delta)
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
