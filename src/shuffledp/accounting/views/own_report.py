"""The differing user's own k-RR report: its delta bounds the shuffled output's for EVERY dataset.

The shuffled histogram is a post-processing of u's report together with the other users' reports, which
do not depend on u's value; so delta_shuffled(eps) <= delta_local(eps) = sum_y (P(y) - e^eps Q(y))_+ =
(p - e^eps q)_+ for k-RR (only y = x0 contributes when eps >= 0). No amplification is claimed.

The weak adversary's value is the smaller of its sum and this delta (both certified upper bounds for every
dataset); the validity tests hold the tight accountants to it. (It once replaced the weak and strong sums
above eps0 = 14, where they were measured below the truth; the cause, cancellations in the k-RR parameters'
complements and in the weak rows' thresholds, was found and fixed: docs/reproduction-notes.md, issue 34.)
"""

from __future__ import annotations

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.params import KrrParams

__all__ = ["log_delta"]



def log_delta(epsilons, *, epsilon_local: float, k: int) -> np.ndarray:
    """log (p - e^eps q)_+ = log p + log(1 - e^(eps - eps0)) at each epsilon (-inf from eps0 on)."""
    gap = np.asarray(epsilons, dtype=float) - float(epsilon_local)
    log_p = KrrParams.of(epsilon_local, k).log_p
    with np.errstate(divide="ignore"):
        return np.where(gap < 0.0, log_p + log1mexp(np.minimum(gap, -1e-300)), -np.inf)
