"""shuffledp.accounting.numerics.pld_epsilon: dp_accounting's epsilon(delta), bit for bit (issue 24)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import pld_pmf
from dp_accounting.pld.privacy_loss_distribution import (
    from_gaussian_mechanism,
    from_laplace_mechanism,
    from_randomized_response,
)

from shuffledp.accounting.composition import Round, round_pld
from shuffledp.accounting.numerics import pld_epsilon
from shuffledp.accounting.numerics.pld_epsilon import epsilon_for_delta

DELTAS = [0.9, 0.3, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8, 1e-10, 1e-13, 1e-16, 1e-30]


def _plds():
    yield from_randomized_response(0.2, 4, value_discretization_interval=1e-3)
    yield from_laplace_mechanism(1.0, value_discretization_interval=1e-4)  # ~20k losses: several chunks
    yield from_gaussian_mechanism(1.0, value_discretization_interval=1e-4)
    yield from_laplace_mechanism(0.7, value_discretization_interval=1e-3).self_compose(5)
    yield from_gaussian_mechanism(2.0, value_discretization_interval=1e-3, use_connect_dots=False)
    for name in ("weak-adversary", "strong-adversary", "worst-case-lower"):
        for pld in round_pld(name, Round(2.0, 200, 4, 1.0), interval=1e-4):
            yield pld
            yield pld.self_compose(3)


def _same(a, b) -> bool:
    return (a == b and type(a) is type(b)) or (math.isinf(a) and math.isinf(b))


def test_equal_to_dp_accounting_bit_for_bit():
    count = 0
    for pld in _plds():
        for delta in DELTAS:
            theirs, ours = pld.get_epsilon_for_delta(delta), epsilon_for_delta(pld, delta)
            assert _same(theirs, ours), (delta, theirs, ours)
            count += 1
    assert count > 100


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64])
def test_chunk_boundaries_do_not_matter(monkeypatch, chunk):
    """Chunks of 1..64 losses (the carry between chunks) give dp_accounting's value too."""
    monkeypatch.setattr(pld_epsilon, "_FIRST_CHUNK", chunk)
    monkeypatch.setattr(pld_epsilon, "_LARGEST_CHUNK", 2 * chunk)
    pld = from_randomized_response(0.3, 3, value_discretization_interval=1e-2).self_compose(4)
    for delta in DELTAS:
        assert _same(pld.get_epsilon_for_delta(delta), epsilon_for_delta(pld, delta))


def test_zero_lower_mass_and_infinity_mass_branches():
    """Loss so large that e^-l is 0 (their `return max(0, loss)`), and infinity mass above delta (inf)."""
    probs = np.array([0.25, 0.25, 0.5])
    pmf = pld_pmf.DensePLDPmf(1.0, 798, probs, infinity_mass=1e-3, pessimistic_estimate=True)
    for delta in (1e-4, 0.1, 0.3, 0.6):
        theirs = pmf.get_epsilon_for_delta(delta)
        assert _same(theirs, pld_epsilon._pmf_epsilon(pmf, delta)), delta


def test_delta_for_epsilon_equal_to_dp_accounting_bit_for_bit():
    """Ascending epsilons below, inside and above the losses, repeated ones; both directions."""
    epsilons = np.sort(np.concatenate([[-1.0, 0.0, 0.0, 1e-9], np.linspace(0.0, 3.0, 57), [5.0, 50.0]]))
    count = 0
    for pld in _plds():
        theirs = np.asarray(pld.get_delta_for_epsilon(epsilons), dtype=float)
        ours = np.asarray(pld_epsilon.delta_for_epsilon(pld, epsilons), dtype=float)
        assert np.array_equal(theirs, ours, equal_nan=True)
        # the assumption the module doc states: np.exp on the array is their per-loss np.exp
        pmf = pld._pmf_remove
        if not isinstance(pmf, pld_pmf.DensePLDPmf):
            continue
        losses = (np.arange(pmf.size) + pmf._lower_loss) * pmf._discretization
        sample = losses[:: max(1, losses.size // 2000)]
        assert np.array_equal(np.exp(-sample), np.array([np.exp(-x) for x in sample]))
        count += 1
    assert count > 5


def test_delta_for_epsilon_unsorted_goes_to_dp_accounting():
    pld = from_randomized_response(0.2, 4, value_discretization_interval=1e-3)
    with pytest.raises(ValueError, match="sorted"):
        pld_epsilon.delta_for_epsilon(pld, np.array([1.0, 0.5]))


def test_kept_sums_do_not_depend_on_the_order_of_the_deltas():
    """A PMF's sums are kept across calls (issue 24): deltas asked deepest first, then shallowest, then
    again, give dp_accounting's values, and the kept chunks are the PMF's."""
    pld = from_laplace_mechanism(1.0, value_discretization_interval=1e-4).self_compose(2)
    for delta in [*DELTAS[::-1], *DELTAS]:
        assert _same(pld.get_epsilon_for_delta(delta), epsilon_for_delta(pld, delta)), delta
    assert pld._pmf_remove in pld_epsilon._PREFIXES
