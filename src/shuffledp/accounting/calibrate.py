"""Calibration: the largest local epsilon_0 that meets a target (epsilon, delta).

For given n, k (and n_x0 for dataset-dependent accountants) find the largest eps0 with
delta(epsilon; eps0) <= delta_target, by bisection on eps0. The bisection assumes delta is
non-decreasing in eps0 (less local noise never helps privacy; true for every accountant tested in
this package); the returned value is the lower end of the final bracket, so it always meets the
target (it errs towards privacy), and it is checked once more before being returned.

Shuffled k-RR with eps0 <= epsilon is (epsilon, 0)-DP (post-processing of eps0-LDP reports), so the
answer is never below the target epsilon: eps0 = epsilon meets every target even when a loose
accountant's bound says otherwise, and the search starts there.
"""

from __future__ import annotations

import math

from shuffledp._validation import check_probability, check_real
from shuffledp.accounting import get_accountant

__all__ = ["calibrate_epsilon_local"]

_SMALLEST = 1e-6  # smallest epsilon_0 tried


def _log_delta(accountant: str, epsilon_local: float, epsilon: float, parameters: dict) -> float:
    return float(get_accountant(accountant, epsilon_local=epsilon_local, **parameters).log_delta_for_epsilon(epsilon)[0])


def calibrate_epsilon_local(
    accountant: str,
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    n_x0: int | None = None,
    upper: float = 30.0,
    tolerance: float = 1e-6,
    **options,
) -> float:
    """Largest eps0 in (0, ``upper``] with delta(``epsilon``; eps0) <= ``delta`` for ``accountant``.

    ``options`` go to the accountant (e.g. ``direction="both"``). Raises ``ValueError`` when no
    eps0 >= 1e-6 meets the target, or when even ``upper`` meets it (then no largest value exists
    below ``upper``; raise ``upper``).
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_probability(delta, "delta", allow_zero=True)
    upper = check_real(upper, "upper", low=_SMALLEST, low_open=True)
    tolerance = check_real(tolerance, "tolerance", low=0.0, low_open=True)
    parameters = dict(n_users=n_users, k=k, **options)
    if n_x0 is not None:
        parameters["n_x0"] = n_x0
    log_target = math.log(delta) if delta > 0 else -math.inf

    def meets(epsilon_local: float) -> bool:
        return _log_delta(accountant, epsilon_local, epsilon, parameters) <= log_target

    if meets(upper):
        raise ValueError(
            f"every `epsilon_local` up to `upper` = {upper!r} meets (epsilon, delta) = ({epsilon!r}, {delta!r}) "
            f"for {accountant!r}; raise `upper` to search further."
        )
    if epsilon <= 0 and not meets(_SMALLEST):
        raise ValueError(
            f"no `epsilon_local` in [{_SMALLEST:g}, {upper!r}] meets (epsilon, delta) = ({epsilon!r}, {delta!r}) "
            f"for {accountant!r}; got delta > target even at epsilon_local = {_SMALLEST:g}."
        )
    # eps0 = epsilon is (epsilon, 0)-DP whatever the accountant says: never return less
    low = min(max(epsilon, _SMALLEST), upper)
    high = upper
    while high - low > tolerance * max(1.0, low):
        middle = 0.5 * (low + high)
        if meets(middle):
            low = middle
        else:
            high = middle
    return low
