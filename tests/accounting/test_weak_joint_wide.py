"""The weak adversary's deep-tail epsilons evaluated jointly at wider windows, and
``worst-case-upper``'s many-epsilon call through the same joint evaluation.

The joint evaluation (:meth:`shuffledp.accounting.views.weak.view.WeakView.log_deltas`) and one epsilon at a
time (the widening loop, incomplete-beta functions) are the same certified sum with different remainders
(each at most 1e-11 of the sum), so they agree to ~2e-11 in log delta; the tables behind the joint one are
checked against scipy's binomial laws at the widest windows :func:`tables_in_range` admits, and the range
check itself must refuse a window whose pmf spans more than e^600.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from shuffledp.accounting import get_accountant
from shuffledp.accounting.views.weak import rows as weak_rows
from shuffledp.accounting.views.weak.tables import lower_tables, tables_in_range

# n = 10^4, k = 10, eps0 = 2: with windows centred on the view's own law, eps 0.02 .. 0.36 met the 1e-11 target
# at K = 8, 0.38 .. 0.62 needed K ~ 8.5 .. 29 and the last ones more than the tables allow (alone, K > 30).
# With the windows centred on each epsilon's tilted law, the first joint batch (K = 8) meets
# the target for all of them.
SETTING = {"n_users": 10_000, "k": 10, "epsilon_local": 2.0}
EPSILONS = [0.02, 0.1, 0.3, 0.4, 0.46, 0.5, 0.56, 0.6, 0.62, 0.7]


def test_deep_tail_epsilons_jointly_equal_single_ones(monkeypatch):
    windows = []
    joint_rows = weak_rows.RowSums.log_parts_many

    def spy(self, epsilons, chernoff):
        windows.append((self.rows.K, len(epsilons)))
        return joint_rows(self, epsilons, chernoff)

    monkeypatch.setattr(weak_rows.RowSums, "log_parts_many", spy)
    joint = get_accountant("weak-adversary", **SETTING).log_delta_for_epsilon(EPSILONS)
    monkeypatch.undo()
    assert windows == [(8.0, len(EPSILONS))], windows  # one joint batch (was: K = 8, then K > 20, then alone)
    single = get_accountant("weak-adversary", **SETTING)
    alone = np.array([single.log_delta_for_epsilon([e])[0] for e in EPSILONS])
    assert np.all(np.isfinite(joint)) and np.all(joint < -1.0)
    assert np.max(np.abs(joint - alone)) <= 2.5e-11, np.max(np.abs(joint - alone))


def test_worst_case_upper_many_epsilons_is_the_weak_value():
    """k >= 4 above the own-value-hit views' n: worst-case-upper is weak-adversary's value, now jointly."""
    upper = get_accountant("worst-case-upper", **SETTING)
    values = upper.log_delta_for_epsilon(EPSILONS)
    assert np.array_equal(values, get_accountant("weak-adversary", **SETTING).log_delta_for_epsilon(EPSILONS))
    one_by_one = np.array([upper._value(upper.log_delta_parts(e)) for e in EPSILONS])
    assert np.max(np.abs(values - one_by_one)) <= 2.5e-11
    lower = get_accountant("worst-case-lower", **SETTING).log_delta_for_epsilon(EPSILONS)
    assert np.all(values >= lower)


@pytest.mark.parametrize("N, p, z", [(8_000, 0.55, 24.0), (2_000, 0.2, 22.0)])
def test_wide_tables_against_scipy(N, p, z):
    """Tables over windows of about +-z standard deviations (admitted by the range check) match scipy's
    pmf, cdf and the directly summed expected excess to 1e-10 relative, down in the far tail."""
    sd = math.sqrt(N * p * (1 - p))
    lo, hi = max(0.0, math.floor(N * p - z * sd)), min(float(N), math.ceil(N * p + z * sd))
    assert tables_in_range(np.array([float(N)]), np.array([lo]), np.array([hi]), math.log(p), math.log1p(-p))
    width = hi - lo + 1.0
    log_anchor, P, F, H = lower_tables(
        np.array([float(N)]), np.array([lo]), np.array([width]), math.log(p), math.log1p(-p)
    )
    m = lo + np.arange(int(width))
    log_pmf = binom.logpmf(m, N, p)
    assert np.allclose(np.log(P[0]) + log_anchor[0], log_pmf, rtol=0, atol=1e-10)
    assert np.allclose(np.log(F[0]) + log_anchor[0], binom.logcdf(m, N, p), rtol=0, atol=1e-10)
    x = np.arange(N + 1.0)
    probe = m[:: max(1, m.size // 40)]
    direct = [
        np.log(np.sum(np.maximum(v - x, 0.0) * np.exp(binom.logpmf(x, N, p) - log_anchor[0]))) for v in probe
    ]
    assert np.allclose(np.log(H[0][(probe - lo).astype(int)]), direct, rtol=0, atol=1e-10)


def test_range_check_refuses_what_would_overflow():
    """A window over the whole support of Bin(10^4, 0.3) spans e^-3567 .. 1: refused; +-5 sd: admitted."""
    N, p = 10_000.0, 0.3
    assert not tables_in_range(np.array([N]), np.array([0.0]), np.array([N]), math.log(p), math.log1p(-p))
    sd = math.sqrt(N * p * (1 - p))
    assert tables_in_range(
        np.array([N]), np.array([N * p - 5 * sd]), np.array([N * p + 5 * sd]), math.log(p), math.log1p(-p)
    )
