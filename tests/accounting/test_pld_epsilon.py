"""shuffledp.accounting.numerics.pld_epsilon and numerics.dense_pld: dp_accounting's epsilon(delta), delta(epsilon)
and composition, bit for bit, on our own dense PLDs (no private attribute read anywhere).

Each case is one of our :class:`~shuffledp.accounting.numerics.dense_pld.Pld` and the same PLD built in
dp_accounting through its public constructors (``DensePLDPmf``, ``PrivacyLossDistribution``); composing
both (ours: the same public numerical functions; theirs: their own code) and reading both must agree to
the last bit.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

from shuffledp.accounting.composition import Round, round_pld
from shuffledp.accounting.numerics import pld_epsilon
from shuffledp.accounting.numerics.dense_pld import DensePmf, Pld
from shuffledp.accounting.numerics.pld_epsilon import epsilon_for_delta

DELTAS = [0.9, 0.3, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-10, 1e-13, 1e-16, 1e-30]


def _theirs_pmf(pmf: DensePmf):
    return pld_pmf.DensePLDPmf(
        pmf.discretization, pmf.lower_loss, pmf.probs.copy(), pmf.infinity_mass, pmf.pessimistic
    )


def _theirs(pld: Pld) -> PrivacyLossDistribution:
    """The same PLD in dp_accounting, dense, through its public constructors."""
    return PrivacyLossDistribution(_theirs_pmf(pld.remove), None if pld.add is None else _theirs_pmf(pld.add))


def _random_pld(seed: int, size: int, interval: float, symmetric: bool, infinity: float = 0.0) -> Pld:
    rng = np.random.default_rng(seed)

    def pmf():
        probs = rng.exponential(size=size) * np.exp(-np.linspace(0, 20, size))
        probs *= (1.0 - infinity) / probs.sum()
        return DensePmf(interval, int(rng.integers(-size, 0)), probs, infinity, True)

    return Pld(pmf()) if symmetric else Pld(pmf(), pmf())


def _plds():
    """(ours, theirs): random PMFs, the views' rounds, and their compositions made on each side."""
    cases = [
        _random_pld(1, 300, 1e-2, True),
        _random_pld(2, 20_000, 1e-4, False, 1e-9),
        _random_pld(3, 5000, 1e-4, True, 1e-12),
    ]
    for name in ("weak-adversary", "strong-adversary", "worst-case-lower", "clones-krr"):
        cases.extend(round_pld(name, Round(2.0, 200, 4, 1.0), interval=1e-4))
    for ours in cases:
        theirs = _theirs(ours)
        yield ours, theirs
        yield ours.self_compose(3), theirs.self_compose(3)
    a, b = cases[1], cases[2]
    yield a.compose(b, 1e-15), _theirs(a).compose(_theirs(b), 1e-15)  # symmetric with not symmetric


def _same(a, b) -> bool:
    return (a == b and type(a) is type(b)) or (math.isinf(a) and math.isinf(b))


def test_equal_to_dp_accounting_bit_for_bit():
    count = 0
    for pld, reference in _plds():
        for delta in DELTAS:
            theirs, ours = reference.get_epsilon_for_delta(delta), epsilon_for_delta(pld, delta)
            assert _same(theirs, ours), (delta, theirs, ours)
            count += 1
    assert count > 100


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_chunk_boundaries_do_not_matter(monkeypatch, chunk):
    """Chunks of 1..64 losses (the carry between chunks) give dp_accounting's value too."""
    monkeypatch.setattr(pld_epsilon, "_FIRST_CHUNK", chunk)
    monkeypatch.setattr(pld_epsilon, "_LARGEST_CHUNK", 2 * chunk)
    pld = _random_pld(4, 40, 1e-2, True).self_compose(4)
    reference = _theirs(pld)
    for delta in DELTAS:
        assert _same(reference.get_epsilon_for_delta(delta), epsilon_for_delta(pld, delta))


def test_zero_lower_mass_and_infinity_mass_branches():
    """Loss so large that e^-l is 0 (their `return max(0, loss)`), and infinity mass above delta (inf)."""
    probs = np.array([0.25, 0.25, 0.5])
    pmf = DensePmf(1.0, 798, probs, 1e-3, True)
    for delta in (1e-4, 0.1, 0.3, 0.6):
        theirs = _theirs_pmf(pmf).get_epsilon_for_delta(delta)
        assert _same(theirs, pld_epsilon._pmf_epsilon(pmf, delta)), delta


def test_delta_for_epsilon_equal_to_dp_accounting_bit_for_bit():
    """Ascending epsilons below, inside and above the losses, repeated ones; both directions."""
    epsilons = np.sort(np.concatenate([[-1.0, 0.0, 0.0, 1e-9], np.linspace(0.0, 3.0, 57), [5.0, 50.0]]))
    count = 0
    for pld, reference in _plds():
        theirs = np.asarray(reference.get_delta_for_epsilon(epsilons), dtype=float)
        ours = np.asarray(pld_epsilon.delta_for_epsilon(pld, epsilons), dtype=float)
        assert np.array_equal(theirs, ours, equal_nan=True)
        # the assumption the module doc states: np.exp on the array is their per-loss np.exp
        pmf = pld.remove
        losses = (np.arange(pmf.size) + pmf.lower_loss) * pmf.discretization
        sample = losses[:: max(1, losses.size // 2000)]
        assert np.array_equal(np.exp(-sample), np.array([np.exp(-x) for x in sample]))
        count += 1
    assert count > 5


def test_delta_for_epsilon_unsorted_goes_to_dp_accounting():
    pld = _random_pld(5, 50, 1e-3, True)
    with pytest.raises(ValueError, match="sorted"):
        pld_epsilon.delta_for_epsilon(pld, np.array([1.0, 0.5]))


def test_kept_sums_do_not_depend_on_the_order_of_the_deltas():
    """A PMF's sums are kept across calls: deltas asked deepest first, then shallowest, then
    again, give dp_accounting's values, and the kept chunks are the PMF's."""
    pld = _random_pld(6, 20_000, 1e-4, True).self_compose(2)
    reference = _theirs(pld)
    for delta in [*DELTAS[::-1], *DELTAS]:
        assert _same(reference.get_epsilon_for_delta(delta), epsilon_for_delta(pld, delta)), delta
    assert pld.remove in pld_epsilon._PREFIXES


def test_export_through_the_public_constructor_is_the_same_pld():
    """Pld.to_dp_accounting (create_from_rounded_probability: dense above 1000 losses) reads the same values."""
    for pld in (_random_pld(7, 3000, 1e-3, True, 1e-10), _random_pld(8, 3000, 1e-3, False)):
        exported = pld.to_dp_accounting()
        for delta in DELTAS:
            assert _same(exported.get_epsilon_for_delta(delta), epsilon_for_delta(pld, delta)), delta
