"""The joint evaluation of many epsilons (per-row tables shared between them) against one at a time.

``weak-adversary`` evaluates >= 4 epsilons together with tables of M's and A's cumulative laws
(:meth:`shuffledp.accounting.views.weak.rows.RowSums.log_parts_many`) and one epsilon alone with incomplete
beta functions; both are the same certified sum. The joint value must agree with the single one to
1e-10 (each carries a certified remainder of at most 1e-11 of its sum); the tables themselves are checked against direct sums.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from shuffledp.accounting import get_accountant
from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.views.weak.rows import WeakRows
from shuffledp.accounting.views.weak.tables import lower_tables


@pytest.mark.parametrize(
    "n, k, eps0", [(20_000, 10, 1.0), (3_000, 3, 0.5), (50_000, 100, 2.0), (5_000, 4, 4.0)]
)
def test_joint_epsilons_equal_single_ones(n, k, eps0):
    single = get_accountant("weak-adversary", epsilon_local=eps0, n_users=n, k=k)
    reference = single.epsilon_for_delta(1e-6)
    epsilons = np.linspace(reference / 20, 3 * reference, 12)
    assert WeakRows(n_users=n, k=k, epsilon_local=eps0, K=8.0, logs=KrrParams.of(eps0, k)).tables_fit()
    joint = get_accountant("weak-adversary", epsilon_local=eps0, n_users=n, k=k).log_delta_for_epsilon(
        epsilons
    )
    alone = np.array([single.log_delta_for_epsilon([e])[0] for e in epsilons])
    assert np.all(np.isfinite(joint))
    assert np.max(np.abs(joint - alone)) <= 1e-10, np.max(np.abs(joint - alone))
    # both are sums plus certified remainders of at most 1e-11 of the sum (an epsilon whose remainder is
    # larger at the first window is redone alone with wider windows, warm-started: not bit-identical)
    assert np.all(joint >= alone - 2e-11)


def test_lower_tables_against_direct_sums():
    N, p = 1000, 0.3
    lo = np.array([250.0, 0.0, 280.0])
    width = np.array([60.0, 40.0, 10.0])
    log_anchor, P, F, H = lower_tables(np.full(3, float(N)), lo, width, math.log(p), math.log1p(-p))
    for r in range(3):
        m = lo[r] + np.arange(int(width[r]))
        scale = math.exp(log_anchor[r])
        assert np.allclose(P[r, : m.size] * scale, binom.pmf(m, N, p), rtol=1e-12, atol=0)
        assert np.allclose(F[r, : m.size] * scale, binom.cdf(m, N, p), rtol=1e-12, atol=0)
        x = np.arange(N + 1)
        direct = [np.sum(np.maximum(v - x, 0) * binom.pmf(x, N, p)) for v in m]
        assert np.allclose(H[r, : m.size] * scale, direct, rtol=1e-11, atol=0)
