"""The x0-bin law over runs of counts by the pmf recurrence (numerics.convolution).

References: mpmath sums of the convolution straight from its definition (50 digits), and the
window sums of CountLaw.evaluate (the path used for
scattered s and below n = 10^7).
"""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.numerics.convolution import log_pmf_run
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.views.single_bin import blocks as single_bin_blocks
from shuffledp.accounting.views.single_bin.view import SingleBinView


@functools.cache
def _mpmath_binomial_pmfs(size: int, prob: float, dps: int) -> tuple:
    """Bin(size, prob)(x) for x = 0..size at ``dps`` digits, each formed once (the same mpf values as one at a
    time: the references below ask for each many times, once per count t and per anchor call)."""
    with mpmath.workdps(dps):
        prob = mpmath.mpf(prob)
        return tuple(mpmath.binomial(size, x) * prob**x * (1 - prob) ** (size - x) for x in range(size + 1))


def _mpmath_log_pmf(a, m, p, q, counts):
    def binom(size, x, prob):
        return _mpmath_binomial_pmfs(size, prob, mpmath.mp.dps)[x] if 0 <= x <= size else 0

    return [
        float(mpmath.log(mpmath.fsum(binom(a, r, p) * binom(m, t - r, q) for r in range(t + 1))))
        for t in counts
    ]


def _logs(eps0, k):
    krr = KrrParams.of(eps0, k)
    return dict(log_p=krr.log_p, log_1mp=krr.log_1mp, log_q=krr.log_q, log_1mq=krr.log_1mq)


@pytest.mark.parametrize(
    "eps0, k, a, m, first, last",
    [
        (1.0, 10, 160, 38, 1, 120),  # through the bulk into the upper tail (B_t > 0 up to 131)
        (0.5, 2, 70, 50, 3, 64),  # k = 2: B_t > 0 up to 64
        (2.0, 5, 300, 120, 40, 160),
    ],
)
def test_run_matches_mpmath(eps0, k, a, m, first, last):
    logs = _logs(eps0, k)
    p, q = math.exp(logs["log_p"]), math.exp(logs["log_q"])
    with mpmath.workdps(50):
        reference = np.array(_mpmath_log_pmf(a, m, p, q, range(first, last + 2)))
        anchor_calls = []

        def anchor(t):
            anchor_calls.append(len(t))
            return np.array(_mpmath_log_pmf(a, m, p, q, t))

        values, ratios = log_pmf_run(first, last, a=a, m=m, **logs, anchor=anchor, spacing=16)
    assert np.max(np.abs(values - reference[:-1])) < 1e-12
    assert np.max(np.abs(ratios - np.diff(reference))) < 1e-13
    assert sum(anchor_calls) == 2 * math.ceil((last - first + 1) / 16)  # two exact values per stretch


def test_run_refuses_what_it_cannot_certify():
    logs = _logs(1.0, 10)
    exact = lambda t: np.zeros(len(t))
    assert log_pmf_run(0, 10, a=50, m=20, **logs, anchor=exact) is None  # needs c_{first - 1}
    assert log_pmf_run(5, 70, a=50, m=20, **logs, anchor=exact) is None  # beyond a + m - 1
    # eps0 = 8: B_t < 0 from t ~ 50 on (a p (1 - q) + m q (1 - p) over (1 - p) q + p (1 - q))
    logs = _logs(8.0, 10)
    assert log_pmf_run(10, 60, a=50, m=19, **logs, anchor=exact) is None


@pytest.mark.parametrize("n", [10**7, 10**9])
@pytest.mark.parametrize("z", [0.0, 6.0, 30.0])
def test_blocks_by_recurrence_match_window_sums(n, z):
    view = SingleBinView(ShuffleSetting(epsilon_local=1.0, n_users=n, k=10, n_x0=round(0.8 * n)))
    law = view.law
    p, q = math.exp(law.log_p), math.exp(law.log_q)
    sd = math.sqrt(law.n_x0 * p * (1 - p) + law.n_off * q * (1 - q))
    first = int(law.mean1 + z * sd) // 64
    view.blocks.ensure(range(first, first + 300))  # 19,200 counts: long stretches between anchors
    blocks = [view.blocks.block(i) for i in range(first, first + 300)]
    s, log_p1, loss, printed = (np.concatenate(parts) for parts in zip(*blocks))
    picks = np.array([0, 1, 2, 8191, 8192, 8193, 12345, s.size - 1])
    direct = law.evaluate(s[picks])
    assert np.max(np.abs(log_p1[picks] - direct[0])) < 1e-10
    assert np.max(np.abs(loss[picks] - direct[1])) < 1e-13
    assert np.max(np.abs(printed[picks] - direct[2])) < 1e-13


def test_accountants_by_recurrence_match_window_sums(monkeypatch):
    eps = np.array([0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.2])
    setting = dict(epsilon_local=1.0, n_users=10**5, k=10, n_x0=80_000)

    def results():
        exact = get_accountant("biswas-exact", **setting)
        return (
            exact.log_delta_for_epsilon(eps),
            exact.epsilon_for_delta(1e-6),
            get_accountant("biswas-printed", **setting).log_delta_for_epsilon(eps),
        )

    windows = results()
    monkeypatch.setattr(single_bin_blocks, "RUN_USERS", 10**4)  # force the recurrence at this n
    runs = results()
    # relative agreement of delta; the largest eps has delta ~ e^-2000, where (1 - e^(eps - L)) is
    # ill-conditioned (a 1e-15 change of L moves delta by more), hence the absolute term
    assert np.allclose(runs[0], windows[0], rtol=1e-11, atol=1e-9)
    assert math.isclose(runs[1], windows[1], rel_tol=1e-9)
    assert np.allclose(runs[2], windows[2], rtol=1e-11, atol=1e-9)


def test_run_continued_from_an_earlier_run_end():
    """A run started from an earlier run's last values (``lead``) matches mpmath, calls no anchor for
    its first stretch, and carries the earlier run's error bound on."""
    eps0, k, a, m = 1.0, 10, 160, 38
    logs = _logs(eps0, k)
    p, q = math.exp(logs["log_p"]), math.exp(logs["log_q"])
    with mpmath.workdps(50):
        reference = np.array(_mpmath_log_pmf(a, m, p, q, range(1, 122)))
        exact = lambda t: np.array(_mpmath_log_pmf(a, m, p, q, t))
        first = log_pmf_run(1, 60, a=a, m=m, **logs, anchor=exact, spacing=64, with_errors=True)
        values, ratios, log_error, ratio_error = first
        lead = (values[-1] + ratios[-1], ratios[-1], log_error + ratio_error, ratio_error)
        calls = []

        def counted(t):
            calls.append(len(t))
            return exact(t)

        second = log_pmf_run(
            61, 120, a=a, m=m, **logs, anchor=counted, spacing=64, lead=lead, with_errors=True
        )
    assert calls == []
    assert np.max(np.abs(second[0] - reference[60:120])) < 1e-12
    assert np.max(np.abs(second[1] - np.diff(reference[60:]))) < 1e-13
    assert second[2] >= log_error  # the bound carries the lead's error on
    # an error already beyond the tolerance is refused (the caller then anchors afresh)
    assert (
        log_pmf_run(61, 120, a=a, m=m, **logs, anchor=exact, spacing=64, lead=(lead[0], lead[1], 1e-9, 0.0))
        is None
    )


@pytest.mark.parametrize("n", [10**7, 10**8])
def test_certified_bound_lies_above_log_delta(n):
    """biswas-exact's shortcut in epsilon_for_delta: the Chernoff bound from the cached blocks is at
    least the exact log delta, wherever it is evaluated, and the search returns the same epsilon as
    without it."""
    setting = dict(epsilon_local=1.0, n_users=n, k=10, n_x0=round(0.8 * n))
    accountant = get_accountant("biswas-exact", **setting)
    found = accountant.epsilon_for_delta(1e-6)
    law = accountant.view()
    decisive = 0
    for eps in np.geomspace(1e-6, 0.9, 25):
        exact = float(accountant.log_delta_for_epsilon(float(eps))[0])
        bound = law.log_delta_bound(float(eps))
        assert bound >= exact
        decisive += bound < math.log(1e-6)
    assert decisive > 0

    plain = get_accountant("biswas-exact", **setting)
    plain._certainly_below = lambda epsilon, log_target: False
    assert plain.epsilon_for_delta(1e-6) == found
