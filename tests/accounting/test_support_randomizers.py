"""The randomizers estimated from support counts (OUE, SUE, OLH, Hadamard response, subset selection), each
held to its full channel built here from the definition alone:

* the sampling law: the support counts drawn by counts against their exact law, enumerated over every user's
  output through the channel (a chi-square test at a fixed seed);
* the estimate is unbiased (exact expectation of the support counts through the channel, and Monte Carlo);
* the exact expected squared error and half L1 against Monte Carlo (within 4 standard errors);
* the output types against types recounted from the channel (d = 3, 4), and the type blanket (at least as
  tight as the generic blanket in Balle et al.'s bounds; equal to k-RR's own for k-RR);
* bad input refused in one line.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats
from scipy.linalg import hadamard

from shuffledp.accounting import get_accountant
from shuffledp.accounting.randomizers import (
    KRR,
    OLH,
    OUE,
    SUE,
    GenericBlanket,
    HadamardResponse,
    KrrBlanket,
    SubsetSelection,
    TypeBlanket,
    best_hash_range,
    optimal_subset_size,
    randomizer_class,
    types_from_channel,
)

# --- full channels and their support sets, from the definitions alone --------------------------------


def _unary(p: float, q: float, k: int):
    outputs = list(itertools.product((0, 1), repeat=k))
    channel = np.array(
        [
            [
                math.prod((p if j == x else q) if b[j] else (1 - p if j == x else 1 - q) for j in range(k))
                for b in outputs
            ]
            for x in range(k)
        ]
    )
    return channel, np.array(outputs, dtype=np.int64)


def _channel(randomizer):
    """(C, supports): C[x, o] = P(o | x); supports[o, j] = 1 when output o supports value j."""
    e0, k = randomizer.epsilon_local, randomizer.k
    if isinstance(randomizer, OUE):
        return _unary(0.5, 1 / (math.exp(e0) + 1), k)
    if isinstance(randomizer, SUE):
        p = math.exp(e0 / 2) / (math.exp(e0 / 2) + 1)
        return _unary(p, 1 - p, k)
    if isinstance(randomizer, OLH):
        g = randomizer.hash_range
        outputs = [(h, y) for h in itertools.product(range(g), repeat=k) for y in range(g)]
        q = 1 / (math.exp(e0) + g - 1)
        channel = np.array(
            [[(math.exp(e0) * q if h[x] == y else q) / g**k for h, y in outputs] for x in range(k)]
        )
        return channel, np.array([[int(h[j] == y) for j in range(k)] for h, y in outputs])
    if isinstance(randomizer, HadamardResponse):
        size = 1
        while size <= k:
            size *= 2
        rows = hadamard(size)[1 : k + 1]
        channel = np.where(rows > 0, math.exp(e0), 1.0) * 2 / ((math.exp(e0) + 1) * size)
        return channel, (rows.T > 0).astype(np.int64)
    if isinstance(randomizer, SubsetSelection):
        subsets = list(itertools.combinations(range(k), randomizer.subset_size))
        weights = np.array([[math.exp(e0) if x in z else 1.0 for z in subsets] for x in range(k)])
        return weights / weights.sum(axis=1, keepdims=True), np.array(
            [[int(j in z) for j in range(k)] for z in subsets]
        )
    raise AssertionError(randomizer)


SMALL = [
    OUE(1.0, 3),
    SUE(0.7, 3),
    OLH(1.2, 3),
    OLH(0.5, 3, 3),
    HadamardResponse(1.0, 3),
    HadamardResponse(2.0, 4),
    SubsetSelection(0.8, 4, 2),
    SubsetSelection(1.5, 4),
]
IDS = [repr(r) for r in SMALL]


def _exact_support_law(randomizer, counts):
    """{support-count vector: probability} over every user's output, through the channel."""
    channel, supports = _channel(randomizer)
    law = {(0,) * randomizer.k: 1.0}
    for x, c in enumerate(counts):
        for _ in range(c):
            step: dict = {}
            for vector, mass in law.items():
                for o in np.flatnonzero(channel[x] > 0):
                    key = tuple(np.add(vector, supports[o]))
                    step[key] = step.get(key, 0.0) + mass * channel[x, o]
            law = step
    return law


@pytest.mark.parametrize("randomizer", SMALL, ids=IDS)
def test_channels_rows_are_laws_and_eps0_ldp(randomizer):
    channel, _ = _channel(randomizer)
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, rtol=1e-12)
    spread = np.log(channel.max(axis=0) / channel.min(axis=0)).max()
    assert spread == pytest.approx(randomizer.epsilon_local, rel=1e-12)


@pytest.mark.parametrize("randomizer", SMALL, ids=IDS)
def test_sampling_law_matches_the_channel(randomizer):
    counts = np.zeros(randomizer.k, dtype=np.int64)
    counts[:2] = (2, 1) if not isinstance(randomizer, OLH) else (1, 1)
    law = _exact_support_law(randomizer, counts)
    draws = randomizer.sample_counts(counts, rng=np.random.default_rng(3), size=20_000)
    assert np.all(draws[:, -1] == counts.sum())
    keys = list(law)
    index = {key: i for i, key in enumerate(keys)}
    observed = np.zeros(len(keys))
    for row in map(tuple, draws[:, :-1]):
        observed[index[row]] += 1  # a key outside the exact support fails here
    expected = np.array([law[key] for key in keys]) * draws.shape[0]
    big = expected >= 5
    pooled_obs = np.append(observed[big], observed[~big].sum())
    pooled_exp = np.append(expected[big], expected[~big].sum())
    keep = pooled_exp > 0
    _, pvalue = stats.chisquare(pooled_obs[keep], pooled_exp[keep])
    assert pvalue > 1e-4


@pytest.mark.parametrize("randomizer", SMALL, ids=IDS)
def test_estimate_is_unbiased_exactly(randomizer):
    counts = np.arange(1, randomizer.k + 1) * 3
    channel, supports = _channel(randomizer)
    mean_support = counts @ channel @ supports  # E S_j
    estimate = randomizer.estimate(np.append(mean_support, counts.sum()))
    np.testing.assert_allclose(estimate, counts / counts.sum(), atol=1e-12)


@pytest.mark.parametrize(
    "randomizer",
    [
        OUE(2.0, 16),
        SUE(1.0, 16),
        OLH(3.0, 16),
        OLH(3.0, 16, 40),
        HadamardResponse(1.5, 16),
        SubsetSelection(1.0, 16),
        SubsetSelection(2.5, 16, 3),
    ],
    ids=repr,
)
def test_exact_error_matches_monte_carlo(randomizer):
    counts = np.array([40, 25, 10, 5, 0, 0, 3, 7, 1, 2, 9, 4, 6, 8, 0, 30])
    draws = 4000
    reports = randomizer.sample_counts(counts, rng=np.random.default_rng(11), size=draws)
    error = randomizer.estimate(reports) - counts / counts.sum()
    exact = randomizer.expected_error(counts)
    np.testing.assert_allclose(error.mean(axis=0), 0.0, atol=5 * error.std(axis=0).max() / math.sqrt(draws))
    for value, samples in ((exact[0], 0.5 * np.abs(error).sum(axis=1)), (exact[1], (error**2).sum(axis=1))):
        se = samples.std(ddof=1) / math.sqrt(draws)
        assert abs(samples.mean() - value) < 4 * se


def test_subset_selection_of_size_one_is_krr():
    counts = np.array([30, 20, 10, 5, 0])
    krr, subset = KRR(1.3, 5), SubsetSelection(1.3, 5, 1)
    assert subset.support_probabilities == pytest.approx(krr.probabilities, rel=1e-14)
    assert subset.expected_error(counts)[1] == pytest.approx(krr.expected_error(counts)[1], rel=1e-12)
    assert subset.expected_error(counts)[0] == pytest.approx(krr.expected_error(counts)[0], rel=1e-9)


@pytest.mark.parametrize("randomizer", SMALL, ids=IDS)
@pytest.mark.parametrize("inputs", [2, 3])
def test_types_match_the_channel(randomizer, inputs):
    channel, _ = _channel(randomizer)
    types = randomizer.output_types(inputs)
    brute = types_from_channel(channel, randomizer.epsilon_local, inputs)
    assert types.log_gamma == pytest.approx(brute.log_gamma, rel=1e-12, abs=1e-13)

    def table(t):
        found: dict = {}
        for column in range(t.n_types):
            key = tuple(np.round(np.exp(t.log_ratios[:, column]), 9))
            found[key] = found.get(key, 0.0) + math.exp(t.log_blanket_mass[column])
        return found

    got, expected = table(types), table(brute)
    assert got.keys() == expected.keys()
    for key, mass in expected.items():
        assert got[key] == pytest.approx(mass, rel=1e-10)


@pytest.mark.parametrize(
    "randomizer",
    [OUE(1.0, 4), OLH(1.0, 4, 3), SubsetSelection(1.0, 4, 2), HadamardResponse(1.0, 3)],
    ids=repr,
)
def test_pair_types_do_not_depend_on_the_pair(randomizer):
    channel, _ = _channel(randomizer)
    reference = types_from_channel(channel, randomizer.epsilon_local, 2)
    for pair in itertools.permutations(range(randomizer.k), 2):
        order = list(pair) + [x for x in range(randomizer.k) if x not in pair]
        other = types_from_channel(channel[order], randomizer.epsilon_local, 2)
        assert sorted(np.round(np.exp(other.log_blanket_mass), 12)) == sorted(
            np.round(np.exp(reference.log_blanket_mass), 12)
        )


EPS = np.array([0.05, 0.3, 0.9])


@pytest.mark.parametrize("epsilon_local,k", [(1.0, 2), (2.0, 7), (6.0, 100), (12.0, 408)])
def test_type_blanket_is_krr_blanket_for_krr(epsilon_local, k):
    krr = KRR(epsilon_local, k)
    own, typed = KrrBlanket(krr.params), TypeBlanket(krr.output_types(2))
    eps = EPS[epsilon_local > EPS]
    assert typed.log_gamma == pytest.approx(own.log_gamma, rel=1e-12)
    np.testing.assert_allclose(typed.log_range(eps), own.log_range(eps), rtol=1e-10)
    np.testing.assert_allclose(typed.bennett_logs(eps), own.bennett_logs(eps), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["balle-hoeffding-generic", "balle-bennett-generic"])
@pytest.mark.parametrize(
    "randomizer",
    [OUE(2.0, 16), SUE(3.0, 192), OLH(4.0, 408), HadamardResponse(1.0, 64), SubsetSelection(2.0, 50)],
    ids=repr,
)
def test_type_blanket_is_at_least_as_tight_as_the_generic_one(name, randomizer):
    generic = get_accountant(name, randomizer=randomizer, n_users=10_000)
    own = get_accountant(name, randomizer=randomizer, n_users=10_000)
    own._blanket = lambda: randomizer.blanket  # the randomizer's own blanket in the same bound
    eps = np.array([0.1, 0.3, 0.6, 1.0])
    assert np.all(own.log_delta_for_epsilon(eps) <= generic.log_delta_for_epsilon(eps) + 1e-12)
    assert randomizer.blanket.log_gamma >= GenericBlanket(randomizer.epsilon_local).log_gamma


def _olh_error(e0: float, k: int, g: int) -> float:
    p = 1 / (1 + (g - 1) * math.exp(-e0))
    return (p * (1 - p) + (k - 1) / g * (1 - 1 / g)) / (p - 1 / g) ** 2


def test_default_parameters():
    assert OLH(1.0, 10).hash_range == math.ceil(math.e) + 1
    assert OLH(math.log(7.0), 10).hash_range == 8
    for e0, k in [(0.5, 10), (2.0, 100), (5.0, 408)]:
        s = optimal_subset_size(e0, k)
        assert abs(s - k / (math.exp(e0) + 1)) <= 1.0 + 0.1 * k / (math.exp(e0) + 1)
        g = best_hash_range(e0, k)
        assert abs(g - (math.exp(e0) + 1)) <= 1.0 + 0.2 * (math.exp(e0) + 1)  # the own-value term moves it
        assert _olh_error(e0, k, g) <= min(_olh_error(e0, k, g - 1), _olh_error(e0, k, g + 1))
    assert HadamardResponse(1.0, 3).order == 4 and HadamardResponse(1.0, 4).order == 8


@pytest.mark.parametrize("key", ["oue", "sue", "olh", "hadamard", "subset"])
def test_registered_and_built_from_loose_parameters(key):
    randomizer = randomizer_class(key).from_parameters(epsilon_local=1.0, k=5)
    assert randomizer.k == 5 and randomizer.key == key


@pytest.mark.parametrize(
    "build,message",
    [
        (lambda: OUE(0.0, 4), r"^`epsilon_local` must be"),
        (lambda: SUE(1.0, 1), r"^`k` must be"),
        (lambda: OLH(1.0, 4, 1), r"^`hash_range` must be"),
        (lambda: SubsetSelection(1.0, 4, 4), r"^`subset_size` must be"),
        (lambda: HadamardResponse(1.0, 2**21), r"^`k` must be"),
        (lambda: OUE.from_parameters(epsilon_local=1.0), r"^`k` must be"),
        (lambda: OUE(1.0, 3).output_types(4), r"^`inputs` must be"),
        (lambda: OUE(1.0, 3).estimate([1, 2, 3]), r"^`reported_counts` must have k \+ 1 = 4"),
        (lambda: OUE(1.0, 3).estimate([1, 2, 5, 4]), r"^`reported_counts` support counts must be at most n"),
        (
            lambda: OLH(1.0, 3).sample_counts([1, 2], rng=np.random.default_rng()),
            r"^`counts` must hold k = 3",
        ),
        (lambda: SubsetSelection(1.0, 3).expected_error([0, 0, 0]), r"^`counts` must have a positive total"),
    ],
)
def test_bad_input_is_refused_in_one_line(build, message):
    with pytest.raises((ValueError, TypeError), match=message) as caught:
        build()
    assert "\n" not in str(caught.value)


# --- the own-blanket Balle bounds ----------------------------------------------------------------------


@pytest.mark.parametrize("family", ["hoeffding", "bennett"])
def test_own_blanket_bounds_are_the_known_ones_for_krr_and_laplace(family):
    eps = np.array([0.1, 0.5, 1.5])
    own = get_accountant(f"balle-{family}-own", epsilon_local=3.0, n_users=5000, k=20)
    krr = get_accountant(f"balle-{family}-krr", epsilon_local=3.0, n_users=5000, k=20)
    np.testing.assert_allclose(own.log_delta_for_epsilon(eps), krr.log_delta_for_epsilon(eps), rtol=1e-12)
    subset = SubsetSelection(3.0, 20, 1)  # k-RR by another name: its type blanket gives the same bound
    by_types = get_accountant(f"balle-{family}-own", randomizer=subset, n_users=5000)
    np.testing.assert_allclose(by_types.log_delta_for_epsilon(eps), krr.log_delta_for_epsilon(eps), rtol=1e-8)
    laplace = randomizer_class("laplace")(epsilon_local=3.0)
    np.testing.assert_array_equal(
        get_accountant(f"balle-{family}-own", randomizer=laplace, n_users=5000).log_delta_for_epsilon(eps),
        get_accountant(f"balle-{family}-laplace", epsilon_local=3.0, n_users=5000).log_delta_for_epsilon(eps),
    )


def _shuffled_law(channel: np.ndarray, inputs) -> np.ndarray:
    """The law of the shuffled multiset (counts per output) of users holding ``inputs``, by convolution."""
    outputs = channel.shape[1]
    law = np.zeros((len(inputs) + 1,) * outputs)
    law[(0,) * outputs] = 1.0
    for x in inputs:
        law = sum(channel[x, o] * np.roll(law, 1, axis=o) for o in range(outputs))
    return law


def _exact_shuffled_delta(randomizer, n_users: int, eps: float) -> float:
    """The largest sum_M max(0, P(M) - e^eps Q(M)) over a few datasets (others all on 0, all on 1, split) and
    both directions of the differing user (0 against 1): a lower bound on the worst case, so at most any
    valid upper bound."""
    channel, _ = _channel(randomizer)
    worst = 0.0
    for on_zero in (0, n_users - 1, (n_users - 1) // 2):
        others = [0] * on_zero + [1] * (n_users - 1 - on_zero)
        first, second = _shuffled_law(channel, [0, *others]), _shuffled_law(channel, [1, *others])
        for p, q in ((first, second), (second, first)):
            worst = max(worst, float(np.maximum(p - math.exp(eps) * q, 0.0).sum()))
    return worst


@pytest.mark.parametrize("family", ["hoeffding", "bennett"])
@pytest.mark.parametrize("randomizer", [OUE(1.0, 2), SUE(1.0, 2), SubsetSelection(1.0, 3, 1)], ids=repr)
def test_own_blanket_bounds_hold_against_the_exact_shuffled_delta(family, randomizer):
    """At n = 20 the bounds are far from trivial (0.02 to 0.3), and the exact delta stays below them."""
    bound = get_accountant(f"balle-{family}-own", randomizer=randomizer, n_users=20)
    for eps in (0.3, 0.6):
        value = math.exp(bound.log_delta_for_epsilon(np.array([eps]))[0])
        assert value < 0.5
        assert 0.0 < _exact_shuffled_delta(randomizer, 20, eps) <= value
