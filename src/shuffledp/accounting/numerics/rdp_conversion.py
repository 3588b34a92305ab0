"""From Renyi DP to (epsilon, delta): the conversion every RDP accountant shares.

Given RDP values eps(lambda) at a set of orders lambda > 1 (already composed: T rounds add, T eps(lambda)),
the improved conversion of Canonne, Kamath, Steinke (2020, Prop. 12; also Asoodeh et al. 2021), the one
used by dp_accounting's RDP accountant and by Koskela et al.'s code, is

    delta(eps) = min_lambda exp((lambda - 1)(eps(lambda) - eps)) / lambda * (1 - 1/lambda)^(lambda - 1),
    eps(delta) = min_lambda eps(lambda) + (log(1/delta) + (lambda - 1) log(1 - 1/lambda) - log lambda) / (lambda - 1).

Each order gives a valid bound, so the minimum over any subset of orders is still an upper bound (it errs
upwards). Everything is in log space.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["rdp_to_log_delta", "rdp_to_epsilon"]


def rdp_to_log_delta(orders, rdp, epsilons) -> np.ndarray:
    """log delta(eps) at each of ``epsilons`` from the RDP values ``rdp`` at ``orders`` (module docstring);
    at most 0 (delta <= 1)."""
    orders = np.asarray(orders, dtype=float)[:, None]
    rdp = np.asarray(rdp, dtype=float)[:, None]
    eps = np.asarray(epsilons, dtype=float)[None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        log_delta = (orders - 1.0) * (rdp - eps) - np.log(orders) + (orders - 1.0) * np.log1p(-1.0 / orders)
    log_delta = np.where(np.isnan(log_delta), np.inf, log_delta)
    return np.minimum(0.0, np.min(log_delta, axis=0))


def rdp_to_epsilon(orders, rdp, delta: float) -> float:
    """Smallest eps over the orders for a target ``delta`` in (0, 1] (module docstring); >= 0."""
    orders = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    eps = rdp + (-math.log(delta) + (orders - 1.0) * np.log1p(-1.0 / orders) - np.log(orders)) / (
        orders - 1.0
    )
    return float(max(0.0, np.min(eps)))
