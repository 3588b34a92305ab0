"""Exact worst case over datasets at small n (worst_case/exact/enumeration.py).

References, each able to fail: brute force over EVERY dataset of the other users and both directions
(``brute_force.true_worst_case_delta``, 50-digit enumeration of histograms of the others, not user
vectors). k = 3: the certified value must bracket the truth within 1e-12 relative, from both sides.
k >= 4: the third-value family (a lower bound) must stay below the truth, and ``worst-case-upper``
(weak-adversary there) above it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from brute_force import true_worst_case_delta
from scipy.special import gammaln

from shuffledp.accounting import get_accountant
from shuffledp.accounting.params import KrrParams
from shuffledp.accounting.worst_case.exact.enumeration import (
    _rows,
    k3_worst_case,
    pair_laws,
    pair_outputs,
    pair_sums,
    stack_laws,
    third_value_delta,
    third_value_law,
)

EPS0 = (0.5, 2.0, 4.0)
K3 = [(n, e0, f) for n in range(2, 11) for e0 in EPS0 for f in (0.0, 0.1, 0.5)]
K3_LARGER = [(n, 1.0, 0.3) for n in (15, 20, 25, 30)]


@pytest.mark.parametrize("n,e0,f", K3 + K3_LARGER)
def test_k3_exact_maximum_equals_brute_force(n, e0, f):
    eps = f * e0
    truth = float(true_worst_case_delta(eps, e0, n, 3).delta)
    result = k3_worst_case(eps, n_users=n, epsilon_local=e0)
    assert result.lower <= truth <= result.upper, (result, truth)
    # within 1e-12 of the truth beyond the representation error of p and q the budget now counts: its part of
    # the tolerance, representation_ulps(n) u (P + e^eps Q) per term, sums to at most that times (1 + e^eps)
    # (sum P = sum Q = 1), once for the tolerance and once more for the error it covers
    representation = KrrParams.of(e0, 3).representation_ulps(n) * 2.0**-53 * (1.0 + math.exp(eps))
    assert result.upper <= truth * (1 + 1e-12) + 2.0 * representation + 1e-300
    assert result.lower >= truth * (1 - 1e-12) - 2.0 * representation
    value = float(
        get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=3).delta_for_epsilon([eps])[0]
    )
    lower = float(
        get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=3).delta_for_epsilon([eps])[0]
    )
    # the older family members ("none", "all on x0") carry ~1 ulp of rounding
    assert lower <= truth * (1 + 1e-14) and truth <= value <= truth * (1 + 1e-9) + 1e-300, (
        lower,
        truth,
        value,
    )


@pytest.mark.parametrize(
    "n,k,e0",
    [(n, k, e0) for k in (4, 5) for n in range(2, 11) for e0 in EPS0 if (k, n) not in ((5, 10), (5, 9))],
)
def test_k4_and_k5_bracket_the_brute_force_worst_case(n, k, e0):
    eps = 0.4 * e0
    truth = true_worst_case_delta(eps, e0, n, k)
    lower = float(
        get_accountant("worst-case-lower", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon([eps])[0]
    )
    upper = float(
        get_accountant("worst-case-upper", epsilon_local=e0, n_users=n, k=k).delta_for_epsilon([eps])[0]
    )
    assert lower <= float(truth.delta) * (1 + 1e-12) <= upper * (1 + 2e-12), (lower, truth, upper)


def test_third_value_family_attains_the_worst_case_on_a_tiny_case():
    """A measured case: n = 10, k = 4, eps0 = 2, eps = 1.5 (true worst case 0.01901)."""
    truth = float(true_worst_case_delta(1.5, 2.0, 10, 4).delta)
    best = max(
        third_value_delta(1.5, n_users=10, k=4, epsilon_local=2.0, a=a, b=b)
        for a in range(10)
        for b in range(10 - a)
    )
    # the certified lower value sits below the truth by its budget: 1e-12 for the arithmetic, and the
    # representation error of p and q (n factors per entry) on the mass of both laws (1 + e^eps), twice
    representation = KrrParams.of(2.0, 4).representation_ulps(10) * 2.0**-53 * (1.0 + math.exp(1.5))
    assert truth * (1 - 1e-12) - 2.0 * representation <= best <= truth * (1 + 1e-12), (best, truth)
    lower = float(
        get_accountant("worst-case-lower", epsilon_local=2.0, n_users=10, k=4).delta_for_epsilon([1.5])[0]
    )
    # a LOWER bound is widened down by its rounding bound (numerics/safe_side.py)
    assert truth * (1 - 2e-12) - 2.0 * representation <= lower <= truth * (1 + 1e-12), (lower, truth)


def test_third_value_needs_k_at_least_4():
    with pytest.raises(ValueError, match="`k` must be >= 4"):
        third_value_delta(0.5, n_users=5, k=3, epsilon_local=1.0)


def _reference_third_value_delta(eps, *, n, k, epsilon_local, law):
    """The straightforward form the fast paths must equal bit for bit: four zero-padded shifted
    copies of the law, whole-array arithmetic (the law itself: gammaln over the whole (c0, c1, c2) grid)."""
    krr = KrrParams.of(epsilon_local, k)
    p, q = math.exp(krr.log_p), math.exp(krr.log_q)
    parts = []
    for axis in range(4):
        h = np.zeros(tuple(s + 1 for s in law.shape))
        index = [slice(None, -1)] * 3
        if axis < 3:
            index[axis] = slice(1, None)
        h[tuple(index)] = law
        parts.append(h[: law.shape[0], : law.shape[1]] if law.shape[0] < n else h)
    common = q * parts[2] + (k - 3) * q * parts[3]
    P, Q = p * parts[0] + q * parts[1] + common, q * parts[0] + p * parts[1] + common
    # the arithmetic budget, plus the representation error of p and q (n factors of each entry)
    ops = (
        int(8 * (float(gammaln(n + 1.0)) + n * abs(krr.log_q)))
        + 8 * (n + 8)
        + 64
        + krr.representation_ulps(n)
    )
    terms, tol = P - math.exp(eps) * Q, ops * 2.0**-53 * (P + math.exp(eps) * Q)
    return max(float(np.sum(np.maximum(terms - tol, 0.0))) * (1.0 - 2.0 * terms.size * 2.0**-53), 0.0)


def _reference_multinomial3(m, log_probs, rows):
    c = np.arange(m + 1, dtype=float)
    c0, c1, c2 = np.meshgrid(c[:rows], c[:rows], c, indexing="ij")
    rest = m - c0 - c1 - c2
    ok = rest >= 0
    rest = np.where(ok, rest, 0.0)
    log = (
        gammaln(m + 1.0)
        - gammaln(c0 + 1)
        - gammaln(c1 + 1)
        - gammaln(c2 + 1)
        - gammaln(rest + 1)
        + c0 * log_probs[0]
        + c1 * log_probs[1]
        + c2 * log_probs[2]
        + (rest * log_probs[3] if m > 0 else 0.0)
    )
    return np.where(ok, np.exp(np.where(ok, log, -np.inf)), 0.0)


def _reference_third_value_law(*, n, k, epsilon_local, a, b):
    krr = KrrParams.of(epsilon_local, k)
    p, q = math.exp(krr.log_p), math.exp(krr.log_q)
    rows = _rows(n, q, a + b)
    g = _reference_multinomial3(n - 1 - a - b, (krr.log_q, krr.log_q, krr.log_p, math.log((k - 3) * q)), rows)
    for probs in [(p, q, q, (k - 3) * q)] * a + [(q, p, q, (k - 3) * q)] * b:
        out = np.zeros(tuple(s + 1 for s in g.shape))
        out[:-1, :-1, :-1] = probs[3] * g
        out[1:, :-1, :-1] += probs[0] * g
        out[:-1, 1:, :-1] += probs[1] * g
        out[:-1, :-1, 1:] += probs[2] * g
        g = out[:rows, :rows]
    return g


@pytest.mark.parametrize(
    "n,k,e0,a,b",
    [
        (2, 4, 1.0, 1, 0),
        (16, 4, 0.5, 3, 5),
        (64, 7, 3.0, 0, 1),
        (150, 5, 2.2, 1, 1),
        (200, 10, 8.0, 2, 0),
        (120, 6, 0.1, 0, 0),
    ],
)
def test_third_value_fast_paths_equal_the_straightforward_form_bit_for_bit(n, k, e0, a, b):
    law = third_value_law(n_users=n, k=k, epsilon_local=e0, a=a, b=b)
    reference = _reference_third_value_law(n=n, k=k, epsilon_local=e0, a=a, b=b)
    assert law.shape == reference.shape and law.tobytes() == np.ascontiguousarray(reference).tobytes()
    for eps in (0.0, 0.3 * e0, 0.9 * e0):
        value = third_value_delta(eps, n_users=n, k=k, epsilon_local=e0, a=a, b=b)
        assert (
            value.hex() == _reference_third_value_delta(eps, n=n, k=k, epsilon_local=e0, law=reference).hex()
        )


def _reference_pair_outputs(g, p, q, k, order=None):
    """The straightforward form the in-place pair outputs must equal bit for bit: three zero-padded shifted
    copies of the stack of laws, whole-array arithmetic. ``order="late"`` adds the last two terms first (the
    probe: another order of the same sum)."""
    shape = (g.shape[0], g.shape[1] + 1, g.shape[2] + 1)
    g0, g1 = np.zeros(shape), np.zeros(shape)
    g0[:, 1:, :-1], g1[:, :-1, 1:] = g, g
    common = np.zeros(shape)
    common[:, :-1, :-1] = (k - 2) * q * g
    if order == "late":
        return p * g0 + (q * g1 + common), q * g0 + (p * g1 + common)
    return p * g0 + q * g1 + common, q * g0 + p * g1 + common


def _reference_pair_sums(P, Q, eps, ops):
    e = math.exp(eps)
    terms, tol = P - e * Q, ops * 2.0**-53 * (P + e * Q)
    upper = np.sum(np.where(terms > -tol, terms + tol, 0.0), axis=(1, 2))
    lower = np.sum(np.maximum(terms - tol, 0.0), axis=(1, 2))
    cells = P.shape[1] * P.shape[2]
    return upper * (1.0 + 2.0 * cells * 2.0**-53) + 1e-300, np.maximum(
        lower * (1.0 - 2.0 * cells * 2.0**-53), 0.0
    )


def _pair_stacks():
    """Stacks of laws: the pair laws of every dataset at n = 12 (eps0 = 4), a random stack with entries
    down to the subnormals, and a strided window of it (as the block search passes its boxes)."""
    krr = KrrParams.of(4.0, 3)
    _, laws = stack_laws(pair_laws(12, math.exp(krr.log_p), math.exp(krr.log_q)))
    rng = np.random.default_rng(7)
    noisy = rng.random((5, 9, 11)) * 10.0 ** rng.integers(-320, 0, size=(5, 9, 11))
    return [laws, noisy, noisy[:, 2:8, 1:10]]


def test_pair_outputs_and_sums_in_place_equal_the_straightforward_form_bit_for_bit():
    """pair_outputs and pair_sums (in place, each product formed once) give the bits of the whole-array form
    on every stack, at epsilons with and without cancellation; the probe: the same sums in another order
    differ, so the comparison can fail."""
    differs = False
    for g in _pair_stacks():
        for k, p, q in ((3, 0.7, 0.15), (5, 0.41, 0.1475)):
            P, Q = pair_outputs(g, p, q, k)
            ref_P, ref_Q = _reference_pair_outputs(g, p, q, k)
            assert P.tobytes() == ref_P.tobytes() and Q.tobytes() == ref_Q.tobytes()
            late = _reference_pair_outputs(g, p, q, k, order="late")
            differs |= late[0].tobytes() != ref_P.tobytes()
            for eps in (0.0, 0.3, 1.2, math.log(p / q)):
                got, ref = pair_sums(P, Q, eps, 60.0), _reference_pair_sums(ref_P, ref_Q, eps, 60.0)
                assert got[0].tobytes() == ref[0].tobytes() and got[1].tobytes() == ref[1].tobytes()
    assert differs
