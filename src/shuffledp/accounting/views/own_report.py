"""The differing user's own k-RR report: its delta bounds the shuffled output's for EVERY dataset.

The shuffled histogram is a post-processing of u's report together with the other users' reports, which
do not depend on u's value; so delta_shuffled(eps) <= delta_local(eps) = sum_y (P(y) - e^eps Q(y))_+ =
(p - e^eps q)_+ for k-RR (only y = x0 contributes when eps >= 0). No amplification is claimed.

The weak adversary's value is the smaller of its sum and this delta (both certified upper bounds for every
dataset); the validity tests hold the tight accountants to it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View

__all__ = ["OwnReportView"]


class OwnReportView(View):
    """The differing user's own k-RR report as a view: outcomes x0 (P = p, Q = q), x1 (q, p) and, for
    k >= 3, "any other value" ((k - 2) q on both sides, merged: equal loss 0). Nothing left out; symmetric.
    :meth:`log_delta` is the closed form (p - e^eps q)_+ (held to the stream by
    tests/accounting/test_view_overrides.py)."""

    name = "own-report"
    symmetric = True

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        krr = self.setting.krr
        log_p, log_q = [krr.log_p, krr.log_q], [krr.log_q, krr.log_p]
        if self.setting.required_k > 2:
            log_p.append(krr.log_rest)
            log_q.append(krr.log_rest)
        yield OutcomeChunk(np.array(log_p), np.array(log_q))

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        return LeftOut()

    def loss_bounds(self) -> tuple[float, float]:
        return (self.setting.epsilon_local, self.setting.epsilon_local)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: the closed form log (p - e^eps q)_+ = log p + log(1 - e^(eps - eps0)) (-inf from eps0 on;
        exact: nothing is left out, so ``upper`` and ``K`` change nothing).

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).
            K: unused (nothing is left out).
            upper: unused (upper and lower values agree).

        Returns:
            log delta at each epsilon (1-D).
        """
        gap = np.atleast_1d(np.asarray(epsilons, dtype=float)) - float(self.setting.epsilon_local)
        log_p = self.setting.krr.log_p
        with np.errstate(divide="ignore"):
            return np.where(gap < 0.0, log_p + log1mexp(np.minimum(gap, -1e-300)), -np.inf)
