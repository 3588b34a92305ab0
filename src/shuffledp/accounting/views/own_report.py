"""The differing user's own k-RR report: its delta bounds the shuffled output's for EVERY dataset.

The shuffled histogram is a post-processing of u's report together with the other users' reports, which
do not depend on u's value; so delta_shuffled(eps) <= delta_local(eps) = sum_y (P(y) - e^eps Q(y))_+ =
(p - e^eps q)_+ for k-RR (only y = x0 contributes when eps >= 0). No amplification is claimed.

Used by the weak and strong adversary views above :data:`MAX_EPSILON_LOCAL_SUMMED`, where their sums were
measured to lose validity (docs/reproduction-notes.md, "Large eps0").
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View

__all__ = ["MAX_EPSILON_LOCAL_SUMMED", "OwnReportView", "log_delta"]

#: largest eps0 at which the weak and strong views are summed (above: below the exact k = 3 worst case from
#: eps0 = 15 on, by 1e-10 relative there, 4e-6 at 24 and O(1) from 36 for the weak view; 1.4e-9 at eps0 = 32,
#: n = 1e5 for the strong view)
MAX_EPSILON_LOCAL_SUMMED = 14.0


def log_delta(epsilons, setting: ShuffleSetting | None = None, *, epsilon_local: float | None = None,
              k: int | None = None) -> np.ndarray:
    """log (p - e^eps q)_+ = log p + log(1 - e^(eps - eps0)) at each epsilon (-inf from eps0 on). The
    setting's ``epsilon_local`` and ``k`` are read (the keywords ``epsilon_local``, ``k`` are still accepted)."""
    if setting is None:
        setting = ShuffleSetting(epsilon_local=epsilon_local, n_users=1, k=k)
    gap = np.asarray(epsilons, dtype=float) - float(setting.epsilon_local)
    log_p = setting.krr.log_p
    with np.errstate(divide="ignore"):
        return np.where(gap < 0.0, log_p + log1mexp(np.minimum(gap, -1e-300)), -np.inf)


class OwnReportView(View):
    """The differing user's own k-RR report as a view: outcomes x0 (P = p, Q = q), x1 (q, p) and, for
    k >= 3, "any other value" ((k - 2) q on both sides, merged: equal loss 0). Nothing left out; symmetric.
    :meth:`log_delta` is the closed form :func:`log_delta` (held to the stream by
    tests/accounting/test_view_overrides.py)."""

    name = "own-report"
    symmetric = True

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        krr = self.setting.krr
        log_p, log_q = [krr.log_p, krr.log_q], [krr.log_q, krr.log_p]
        if self.setting.k > 2:
            log_p.append(krr.log_rest)
            log_q.append(krr.log_rest)
        yield OutcomeChunk(np.array(log_p), np.array(log_q))

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        return LeftOut()

    def loss_bounds(self) -> tuple[float, float]:
        return (self.setting.epsilon_local, self.setting.epsilon_local)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """The closed form (p - e^eps q)_+ (exact: nothing is left out, so upper and lower agree)."""
        return log_delta(np.atleast_1d(np.asarray(epsilons, dtype=float)), self.setting)

