"""The differing user's own k-RR report: its delta bounds the shuffled output's for EVERY dataset.

The shuffled histogram is a post-processing of u's report together with the other users' reports, which
do not depend on u's value; so delta_shuffled(eps) <= delta_local(eps) = sum_y (P(y) - e^eps Q(y))_+ =
(p - e^eps q)_+ for k-RR (only y = x0 contributes when eps >= 0). No amplification is claimed.

Used by the weak and strong adversary views above :data:`MAX_EPSILON_LOCAL_SUMMED`, where their sums were
measured to lose validity (docs/reproduction-notes.md, "Large eps0").
"""

from __future__ import annotations

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.params import KrrParams

__all__ = ["MAX_EPSILON_LOCAL_SUMMED", "log_delta"]

#: largest eps0 at which the weak and strong views are summed (above: below the exact k = 3 worst case from
#: eps0 = 15 on, by 1e-10 relative there, 4e-6 at 24 and O(1) from 36 for the weak view; 1.4e-9 at eps0 = 32,
#: n = 1e5 for the strong view)
MAX_EPSILON_LOCAL_SUMMED = 14.0


def log_delta(epsilons, *, epsilon_local: float, k: int) -> np.ndarray:
    """log (p - e^eps q)_+ = log p + log(1 - e^(eps - eps0)) at each epsilon (-inf from eps0 on)."""
    gap = np.asarray(epsilons, dtype=float) - float(epsilon_local)
    log_p = KrrParams.of(epsilon_local, k).log_p
    with np.errstate(divide="ignore"):
        return np.where(gap < 0.0, log_p + log1mexp(np.minimum(gap, -1e-300)), -np.inf)
