"""The certified tilted FFT: numerics.tilted_fft and the k = 2 keys that use it (worst_case.k2.tilted).

References, each able to fail: (i) the exact convolution of the same arrays, each output a ``math.fsum`` of
its products (error <= 2 u per output, relative), and numpy's direct convolution at the sizes of the
n = 10^8 keys (a sum of positive products: relative error <= length x u); the FFT's output must lie within
its stated bound of them; (ii) the exact delta of a pair sum by scipy's binomial pmfs convolved directly
(``_direct_delta`` of test_worst_case_upper.py, written again here), which a key's upper value must not be
below and its lower value not above; (iii) the direct path of the branch and bound itself.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from shuffledp.accounting.numerics.binomial import log_pmf
from shuffledp.accounting.numerics.tilted_fft import fft_error_bound, tilted_convolve
from shuffledp.accounting.worst_case.k2 import pair_sum as k2_pair_sum
from shuffledp.accounting.worst_case.k2 import tilted as k2_tilted
from shuffledp.accounting.worst_case.k2.pair_search import large_forward_delta
from shuffledp.accounting.worst_case.k2.pair_sum import PairSum

U = 2.0**-53


def _window(N, p, sds):
    mean, sd = N * p, math.sqrt(N * p * (1 - p))
    lo, hi = max(0, int(mean - sds * sd - 30)), min(N, int(mean + sds * sd + 30))
    return log_pmf(np.arange(lo, hi + 1, dtype=float), N, math.log(p), math.log1p(-p))


def _exact(x, y):
    """Each output a correctly rounded sum of its (rounded) products: relative error <= 2 u."""
    return np.array(
        [
            math.fsum(
                x[max(0, k - y.size + 1) : k + 1]
                * y[k - np.arange(max(0, k - y.size + 1), min(k, x.size - 1) + 1)]
            )
            for k in range(x.size + y.size - 1)
        ]
    )


def _cases():
    rng = np.random.default_rng(35)
    cases = []
    for i in range(24):
        N1, N2 = int(rng.integers(50, 4000)), int(rng.integers(10, 600))
        p1 = float(rng.uniform(0.05, 0.95))
        x, y = _window(N1, p1, 10.0), _window(N2, 0.5, 10.0)
        sd = math.sqrt(N1 * p1 * (1 - p1) + N2 / 4)
        theta = float(rng.choice([0.0, 1.0, 3.0, 6.0, -2.0])) / sd
        cases.append((f"binomials-{i}", x, y, theta))
    for i in range(8):  # rough positive arrays over many orders of magnitude
        x = rng.uniform(-60.0, 0.0, int(rng.integers(5, 700)))
        y = rng.uniform(-60.0, 0.0, int(rng.integers(5, 300)))
        cases.append((f"random-{i}", x, y, float(rng.uniform(-0.1, 0.1))))
    return cases


@pytest.mark.parametrize("name,log_x,log_y,theta", _cases(), ids=[c[0] for c in _cases()])
def test_tilted_fft_is_within_its_bound_of_the_exact_convolution(name, log_x, log_y, theta):
    log_z, log_error, relative = tilted_convolve(log_x, log_y, theta)
    exact = _exact(np.exp(log_x), np.exp(log_y))
    k = np.arange(exact.size)
    bound = np.exp(log_error - theta * k) + (relative + 4.0 * U) * exact
    error = np.abs(np.exp(log_z) - exact)
    assert np.all(error <= bound), (name, float(np.max(error / bound)))
    # the bound is a bound, not a blanket: near the tilted peak it is a small fraction of the entry
    assert float(np.min(np.exp(log_error - theta * k) / np.where(exact > 0, exact, np.inf))) < 1e-9


def test_tilted_fft_at_the_size_of_the_n_1e8_keys_against_direct_convolution():
    """The largest keys of the k = 2 search at n = 10^8 (eps0 = 0.5): ~55,000 x 8,000 products."""
    x, y = _window(50_000_000, 0.6225, 8.0), _window(1_170_000, 0.5, 8.0)
    sd = math.sqrt(50_000_000 * 0.6225 * 0.3775 + 1_170_000 / 4)
    for theta in (0.0, 3.0 / sd):
        log_z, log_error, relative = tilted_convolve(x, y, theta)
        tx, ty = x.max(), y.max()
        direct = np.convolve(np.exp(x - tx), np.exp(y - ty)) * math.exp(tx + ty)
        k = np.arange(direct.size)
        bound = np.exp(log_error - theta * k) + (relative + (y.size + 4) * 2.0 * U) * direct
        assert np.all(np.abs(np.exp(log_z) - direct) <= bound)


def test_error_bound_grows_with_the_norms_and_refuses_other_lengths():
    x = np.ones(100)
    assert fft_error_bound(2 * x, x, 256) == pytest.approx(2 * fft_error_bound(x, x, 256), rel=1e-12)
    assert fft_error_bound(x, x, 1024) > fft_error_bound(x, x, 256)
    with pytest.raises(ValueError, match="`size` must be a power of two; got 300"):
        fft_error_bound(x, x, 300)
    with pytest.raises(ValueError, match="`theta` must be finite"):
        tilted_convolve(np.zeros(3), np.zeros(3), math.inf)


# ---------------------------------------------------------------- keys of the k = 2 search through the FFT
def _logs(e0):
    log_den = float(np.logaddexp(e0, 0.0))
    return e0 - log_den, -log_den


def _log_ratio(e0, eps):
    p, q = math.exp(_logs(e0)[0]), math.exp(_logs(e0)[1])
    return math.log((math.exp(eps) * p - q) / (p - math.exp(eps) * q))


def _direct_delta(a, ell, c, e0, eps):
    """G with the blanket reports, from scipy's pmfs convolved directly (every term, both signs)."""
    p = math.exp(_logs(e0)[0])
    f = np.convolve(
        np.convolve(binom.pmf(np.arange(a + 1), a, p), binom.pmf(np.arange(ell + 1), ell, 1 - p)),
        binom.pmf(np.arange(c + 1), c, 0.5),
    )
    prev, cur = np.concatenate([[0.0], f]), np.concatenate([f, [0.0]])
    terms = (p - math.exp(eps) * (1 - p)) * prev - (math.exp(eps) * p - (1 - p)) * cur
    return float(terms[terms > 0].sum())


KEYS = [
    (a, ell, c, e0, eps, tilt)
    for (a, ell, c, e0, eps) in [
        (3000, 2500, 900, 0.5, 0.02),
        (4000, 3000, 400, 1.0, 0.05),
        (2000, 6000, 1500, 0.5, 0.01),
        (5000, 1000, 800, 2.0, 0.1),
        (700, 900, 400, 1.0, 0.05),
        (6000, 6000, 3000, 0.5, 0.03),
        (2500, 4000, 2000, 4.0, 0.3),
        (8000, 500, 600, 1.0, 0.2),
    ]
    for tilt in (None, 0.5, 2.0)
]


@pytest.mark.parametrize("a,ell,c,e0,eps,tilt", KEYS)
def test_tilted_key_brackets_the_exact_delta(monkeypatch, a, ell, c, e0, eps, tilt):
    """A key whose window went through the tilted FFT (every size, here) keeps its upper value above the
    exact delta and its lower value below, and stays within 1e-6 of the key of the direct path; ``tilt``
    scales the likelihood-ratio tilt (None: the search's own choice, 1)."""
    monkeypatch.setattr(k2_tilted, "FFT_FROM", 0)
    log_p, log_q = _logs(e0)
    theta = _log_ratio(e0, eps) * (1.0 if tilt is None else tilt)
    fft = PairSum(a, ell, log_p, log_q, blanket=c, sds=10.0, key=True, tilt=theta)
    assert fft.tilted is not None
    direct = PairSum(a, ell, log_p, log_q, blanket=c, sds=10.0, key=True)
    truth = _direct_delta(a, ell, c, e0, eps)
    for pair in (fft, direct):
        for refined in (False, True):
            if refined:
                pair.refine()
            upper, lower = pair.log_bounds(eps)
            assert math.exp(lower) <= truth <= math.exp(upper), (lower, math.log(truth), upper)
    upper, lower = fft.log_bounds(eps)
    d_upper, d_lower = direct.log_bounds(eps)
    assert d_upper <= upper <= d_upper + 1e-6 and d_lower - 1e-6 <= lower <= d_lower, (
        upper,
        d_upper,
        lower,
        d_lower,
    )


def test_uncertified_boundary_falls_back_to_the_direct_window(monkeypatch):
    """With no step allowed the boundary cannot be certified: the pair sum is convolved directly again,
    and then gives the direct key's values bit for bit."""
    monkeypatch.setattr(k2_tilted, "FFT_FROM", 0)
    monkeypatch.setattr(k2_tilted, "_STEPS", 0)
    log_p, log_q = _logs(1.0)
    fft = PairSum(4000, 3000, log_p, log_q, blanket=400, sds=10.0, key=True, tilt=_log_ratio(1.0, 0.05))
    direct = PairSum(4000, 3000, log_p, log_q, blanket=400, sds=10.0, key=True)
    assert fft.log_bounds(0.05) == direct.log_bounds(0.05) and fft.tilted is None


@pytest.mark.parametrize("n,e0,eps", [(60_000, 0.5, 0.004), (200_000, 1.0, 0.004), (100_000, 2.0, 0.01)])
def test_search_with_tilted_keys_is_above_the_direct_searchs_lower_end(monkeypatch, n, e0, eps):
    """The branch and bound with every key through the FFT returns a certified top above the direct
    search's best single dataset (its lower end), within the stopping rule of the direct top."""
    top, best, _ = large_forward_delta(eps, n_users=n, epsilon_local=e0)
    monkeypatch.setattr(k2_tilted, "FFT_FROM", 0)
    fft_top, fft_best, _ = large_forward_delta(eps, n_users=n, epsilon_local=e0)
    assert fft_top >= best and fft_top >= fft_best
    assert abs(fft_top - top) <= 2e-3, (fft_top, top)


@pytest.mark.parametrize(
    "a,ell,c,e0,shift",
    [(3000, 2500, 900, 0.5, 2.0), (4000, 3000, 400, 1.0, 1.0), (2000, 6000, 1500, 0.5, 3.0)],
)
def test_boundary_term_at_zero_is_paid_for_and_still_brackets(monkeypatch, a, ell, c, e0, shift):
    """An epsilon whose likelihood-ratio threshold is the computed gap at one h: the term there is ~0, its
    sign cannot be certified, and its |term| + error is added (``boundary_margin`` finite); the key still
    brackets the exact delta."""
    monkeypatch.setattr(k2_tilted, "FFT_FROM", 0)
    log_p, log_q = _logs(e0)
    p, q = math.exp(log_p), math.exp(log_q)
    probe = PairSum(a, ell, log_p, log_q, blanket=c, sds=10.0, key=True)
    h = int(round(probe.mean + shift * math.sqrt(probe.var)))
    lf = probe.log_f(np.array([h - 1, h]))
    ratio = math.exp(lf[0] - lf[1])
    eps = math.log((ratio * p + q) / (p + ratio * q))
    pair = PairSum(a, ell, log_p, log_q, blanket=c, sds=10.0, key=True, tilt=math.log(ratio))
    margins = []
    monkeypatch.setattr(
        k2_pair_sum,
        "boundary_margin",
        lambda *args: margins.append(k2_tilted.boundary_margin(*args)) or margins[-1],
    )
    upper, lower = pair.log_bounds(eps)
    assert pair.tilted is not None and margins and math.isfinite(margins[0]), margins
    truth = _direct_delta(a, ell, c, e0, eps)
    assert math.exp(lower) <= truth <= math.exp(upper), (lower, math.log(truth), upper)
