"""The self-convolution of our dense PMFs against dp_accounting's own ``common.self_convolve``, bit for bit.

``dense_pld._self_convolve`` does dp_accounting 0.6.0's steps with a lean copy of scipy's logsumexp for the
truncation bounds (``shuffledp._numerics.mgf_logsumexp``); these tests compare the log-MGF values, the bounds
and the convolved arrays with dp_accounting's and scipy's on random mass arrays and on the accountants' real
rounds, and plant errors to show the comparisons catch them.
"""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.pld import common as dp_common
from scipy import special

from shuffledp._numerics import MgfMasses, mgf_logsumexp
from shuffledp.accounting.composition import Round, round_pld
from shuffledp.accounting.numerics import dense_pld
from shuffledp.accounting.numerics.dense_pld import DensePmf

ORDERS_PER_SIZE = np.concatenate((np.arange(-20, 0), np.arange(1, 21)))


def _random_masses(seed: int) -> np.ndarray:
    """A mass array of random length with steep and flat parts, runs of zeros, sometimes all zero and
    sometimes one tiny negative mass (an FFT's rounding), as the bounds see them."""
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 1000))
    masses = rng.random(size) ** int(rng.integers(1, 30))
    masses[rng.random(size) < rng.random()] = 0.0
    if seed % 7 == 0:
        masses[:] = 0.0
    if seed % 11 == 0:
        masses[int(rng.integers(0, size))] = -1e-17
    return masses / max(masses.sum(), 1.0)


def _real_masses() -> list[np.ndarray]:
    """The mass arrays of the accountants' rounds (both directions where asymmetric)."""
    arrays = []
    for name in ("weak-adversary", "strong-adversary", "worst-case-lower", "clones-krr"):
        for pld in round_pld(name, Round(2.0, 200, 4, 1.0), interval=1e-4):
            arrays.extend(pmf.probs for pmf in pld.pmfs())
    return arrays


def _same_bits(ours, theirs) -> bool:
    return np.asarray(ours, dtype=float).tobytes() == np.asarray(theirs, dtype=float).tobytes()


def _cases():
    return [_random_masses(seed) for seed in range(60)] + _real_masses()


def test_mgf_logsumexp_is_scipys_bit_for_bit():
    checked = 0
    for masses in _cases():
        prepared = MgfMasses.of(masses)
        for order in ORDERS_PER_SIZE / len(masses):
            theirs = special.logsumexp(np.arange(len(masses)) * order, b=masses)
            assert _same_bits(mgf_logsumexp(prepared, order), theirs), (len(masses), order)
            checked += 1
    assert checked > 2500


@pytest.mark.parametrize(("times", "truncation"), [(2, 1e-15), (7, 0.0), (100, 1e-8)])
def test_self_convolve_is_dp_accountings_bit_for_bit(times, truncation):
    for masses in _cases()[::6]:
        bounds = dp_common.compute_self_convolve_bounds(masses, times, truncation)
        assert dense_pld._self_convolve_bounds(masses, times, truncation) == bounds
        lower, convolved = dense_pld._self_convolve(masses, times, truncation)
        their_lower, theirs = dp_common.self_convolve(masses, times, truncation)
        assert lower == their_lower
        assert _same_bits(convolved, theirs)


def test_self_compose_keeps_dp_accountings_arrays():
    """A round's PMF self-composed here and by dp_accounting's ``DensePLDPmf.self_compose``."""
    from dp_accounting.pld import pld_pmf

    pmf = round_pld("weak-adversary", Round(2.0, 200, 4, 1.0), interval=1e-4)[0].remove
    ours = pmf.self_compose(10)
    theirs = pld_pmf.DensePLDPmf(
        pmf.discretization, pmf.lower_loss, pmf.probs.copy(), pmf.infinity_mass, pmf.pessimistic
    ).self_compose(10)
    assert isinstance(ours, DensePmf)
    assert ours.lower_loss == theirs._lower_loss
    assert _same_bits(ours.probs, theirs._probs)
    assert ours.infinity_mass == theirs._infinity_mass


def test_probe_one_ulp_in_the_log_mgf_is_caught():
    masses = _real_masses()[0]
    order = ORDERS_PER_SIZE[25] / len(masses)
    value = mgf_logsumexp(MgfMasses.of(masses), order)
    assert not _same_bits(np.nextafter(value, np.inf), value)


def test_probe_a_planted_error_in_the_log_mgf_moves_the_bounds(monkeypatch):
    masses = _real_masses()[0]
    monkeypatch.setattr(
        dense_pld, "mgf_logsumexp", lambda prepared, order: mgf_logsumexp(prepared, order) + 0.05
    )
    assert dense_pld._self_convolve_bounds(masses, 50, 1e-15) != dp_common.compute_self_convolve_bounds(
        masses, 50, 1e-15
    )
