"""Tests of the composition layer (src/shuffledp/accounting/composition.py and the views' binned privacy loss distributions) and of the
Girgis et al. RDP accountants (src/shuffledp/accounting/girgis.py).

References: the brute-force adversary views of ``brute_force.py`` (literal enumeration of blanket bits
and reports, Koskela, Heikkila, Honkela 2021, Def. 1 and Def. 3) composed by exact convolution of their
privacy-loss distributions in plain numpy; the single-round accountants (exact in log space); values
stored by Koskela et al.'s own code (clones_girgis_comparison_fig3/pickles/eps_fig1_girgis_upper.p).
Discretisation bound: with grid Delta, T rounds move the composed loss by < T Delta, so
delta_true(eps + T Delta) - slack <= lower <= upper <= delta_true(eps - T Delta) + slack.
"""

import math
from collections import defaultdict

import numpy as np
import pytest
from brute_force import strong_adversary_view_distributions, weak_adversary_view_distributions

from shuffledp.accounting import get_accountant
from shuffledp.accounting.composition import Round, compose, round_pld
from shuffledp.accounting.worst_case.families.family import FAMILY

DELTA = 1e-4  # grid used in the tests (coarse: fast, and the bounds below account for it)
SLACK = 1e-13  # FFT rounding and tail truncation (absolute)


def exact_composed_delta(p_law: dict, q_law: dict, T: int, eps: float) -> float:
    """max over both directions of H_{e^eps}(P^T || Q^T), by exact convolution of the loss laws (numpy)."""
    best = 0.0
    for P, Q in ((p_law, q_law), (q_law, p_law)):
        law = defaultdict(float)  # loss (rounded to 1e-12 as a key) -> P-mass; inf separately
        infinity = 0.0
        for outcome, p in P.items():
            p, q = float(p), float(Q.get(outcome, 0.0))
            if p == 0.0:
                continue
            if q == 0.0:
                infinity += p
            else:
                law[round(math.log(p / q), 12)] += p
        losses, masses = np.array(list(law)), np.array(list(law.values()))
        total_l, total_m = np.zeros(1), np.ones(1)
        for _ in range(T):
            total_l = (total_l[:, None] + losses[None, :]).ravel()
            total_m = (total_m[:, None] * masses[None, :]).ravel()
        finite = float(np.sum(total_m * np.clip(-np.expm1(eps - total_l), 0.0, None)))
        best = max(best, finite + 1.0 - (1.0 - infinity) ** T)
    return best


TINY = [  # (name, view function, eps0, n, k)
    ("weak-adversary", weak_adversary_view_distributions, 1.0, 4, 3),
    ("weak-adversary", weak_adversary_view_distributions, 2.0, 3, 4),
    ("strong-adversary", strong_adversary_view_distributions, 1.0, 4, 3),
    ("strong-adversary", strong_adversary_view_distributions, 0.5, 5, 2),
]


@pytest.mark.parametrize("name, laws, eps0, n, k", TINY)
@pytest.mark.parametrize("T", [1, 2, 3])
def test_composed_pld_agrees_with_brute_force_convolution(name, laws, eps0, n, k, T):
    p_law, q_law = laws(n, k, epsilon_local=eps0, dps=30)
    accountant = compose(
        name, epsilon_local=eps0, n_users=n, k=k, compositions=T, value_discretization_interval=DELTA
    )
    for eps in (0.05, 0.3, 0.8):
        upper = float(accountant.delta_for_epsilon(eps)[0])
        assert upper >= exact_composed_delta(p_law, q_law, T, eps) - SLACK  # errs upwards
        assert (
            upper <= exact_composed_delta(p_law, q_law, T, max(0.0, eps - T * DELTA)) + 1e-12
        )  # within the bound


@pytest.mark.parametrize("eps0, n, k", [(1.0, 4, 3), (2.0, 3, 4), (0.7, 5, 2)])
def test_worst_case_lower_composed_stays_below_weak_brute_force(eps0, n, k):
    p_law, q_law = weak_adversary_view_distributions(n, k, epsilon_local=eps0, dps=30)
    for T in (1, 3):
        lower = compose(
            "worst-case-lower",
            epsilon_local=eps0,
            n_users=n,
            k=k,
            compositions=T,
            value_discretization_interval=DELTA,
        )
        for eps in (0.05, 0.4):
            assert (
                float(lower.delta_for_epsilon(eps)[0]) <= exact_composed_delta(p_law, q_law, T, eps) + SLACK
            )


SINGLE = [  # (name, eps0, n, k)
    ("strong-adversary", 1.0, 50, 3),
    ("strong-adversary", 2.0, 2000, 4),
    ("weak-adversary", 1.0, 50, 3),
    ("weak-adversary", math.log(13.0), 1000, 4),  # Koskela et al.'s blanket experiment (k = 4, gamma = 1/4)
    ("weak-adversary", 0.5, 300, 2),
    ("feldman-numerical", 2.0, 1000, 2),
    ("clones-krr", 1.0, 200, 5),
    ("worst-case-lower", 2.0, 1000, 4),
    ("worst-case-lower", 1.0, 100, 2),
]


@pytest.mark.parametrize("name, eps0, n, k", SINGLE)
def test_one_round_equals_single_round_accountant_within_discretisation(name, eps0, n, k):
    single = get_accountant(name, epsilon_local=eps0, n_users=n, k=k)
    composed = compose(name, epsilon_local=eps0, n_users=n, k=k, value_discretization_interval=DELTA)
    eps = np.array([0.01, 0.05, 0.2, 0.5])  # > Delta: the bound compares with delta at eps - Delta
    value = composed.delta_for_epsilon(eps)
    delta_of = single.delta_for_epsilon
    if (
        name == "worst-case-lower"
    ):  # the binned views are those of FAMILY; the widened members are single-round only

        def delta_of(values):
            return np.array(
                [
                    math.exp(max(v for key, v in single.member_log_deltas(float(e)).items() if key in FAMILY))
                    for e in values
                ]
            )

    exact = delta_of(eps)
    shifted = (
        delta_of(np.maximum(eps - DELTA, 0.0))
        if composed.kind.value == "upper bound"
        else delta_of(eps + DELTA)
    )
    if composed.kind.value == "upper bound":
        assert np.all(value >= exact * (1 - 1e-9) - SLACK) and np.all(value <= shifted * (1 + 1e-6) + 1e-12)
    else:
        assert np.all(value <= exact * (1 + 1e-9) + SLACK) and np.all(value >= shifted * (1 - 1e-6) - 1e-12)


@pytest.mark.parametrize("eps0, n, k", [(1.0, 200, 3), (math.log(13.0), 1000, 4)])
def test_upper_above_lower_and_monotone_in_rounds(eps0, n, k):
    previous_upper = previous_lower = 0.0
    for T in (1, 2, 4, 16):
        upper = compose(
            "weak-adversary",
            epsilon_local=eps0,
            n_users=n,
            k=k,
            compositions=T,
            value_discretization_interval=DELTA,
        ).epsilon_for_delta(1e-6)
        strong = compose(
            "strong-adversary",
            epsilon_local=eps0,
            n_users=n,
            k=k,
            compositions=T,
            value_discretization_interval=DELTA,
        ).epsilon_for_delta(1e-6)
        lower = compose(
            "worst-case-lower",
            epsilon_local=eps0,
            n_users=n,
            k=k,
            compositions=T,
            value_discretization_interval=DELTA,
        ).epsilon_for_delta(1e-6)
        assert lower <= upper <= strong  # the strong adversary sees more than the weak one
        assert upper > previous_upper and lower > previous_lower
        previous_upper, previous_lower = upper, lower


def test_heterogeneous_rounds_match_homogeneous_and_lie_between():
    same = compose("weak-adversary", rounds=[(1.0, 200)] * 3, k=3, value_discretization_interval=DELTA)
    homogeneous = compose(
        "weak-adversary",
        epsilon_local=1.0,
        n_users=200,
        k=3,
        compositions=3,
        value_discretization_interval=DELTA,
    )
    eps = np.array([0.1, 0.4])
    np.testing.assert_allclose(same.delta_for_epsilon(eps), homogeneous.delta_for_epsilon(eps), rtol=1e-9)
    mixed = compose(
        "weak-adversary",
        rounds=[Round(1.0, 200, 3), Round(0.5, 200, 3), Round(1.0, 400, 3)],
        value_discretization_interval=DELTA,
    )
    low = compose(
        "weak-adversary",
        epsilon_local=0.5,
        n_users=400,
        k=3,
        compositions=3,
        value_discretization_interval=DELTA,
    )
    high = compose(
        "weak-adversary",
        epsilon_local=1.0,
        n_users=200,
        k=3,
        compositions=3,
        value_discretization_interval=DELTA,
    )
    assert np.all(low.delta_for_epsilon(eps) <= mixed.delta_for_epsilon(eps))
    assert np.all(mixed.delta_for_epsilon(eps) <= high.delta_for_epsilon(eps))


@pytest.mark.parametrize("name", ["feldman-numerical", "weak-adversary", "strong-adversary"])
def test_subsample_one_equals_unsampled_and_smaller_q_helps(name):
    kwargs = dict(epsilon_local=2.0, n_users=300, k=3, compositions=4, value_discretization_interval=DELTA)
    full = compose(name, **kwargs)
    sampled = compose(name, subsample=1.0, **kwargs)
    eps = np.array([0.1, 0.5, 1.0])
    np.testing.assert_array_equal(full.delta_for_epsilon(eps), sampled.delta_for_epsilon(eps))
    # the same 300 users reporting per round, sampled from a population of 600: subsampling only helps
    half = compose(name, subsample=0.5, **{**kwargs, "n_users": 600})
    assert half.rounds[0].per_round == 300
    assert np.all(half.delta_for_epsilon(eps) <= full.delta_for_epsilon(eps) + SLACK)


def test_subsampled_pair_matches_exact_mixture_for_tiny_case():
    """(q P + (1 - q) Q, Q) of the exact weak view, composed exactly, against the PLD result."""
    p_law, q_law = weak_adversary_view_distributions(3, 3, epsilon_local=1.5, dps=30)
    q = 0.3
    mixed = {
        o: q * float(p_law.get(o, 0)) + (1 - q) * float(q_law.get(o, 0)) for o in set(p_law) | set(q_law)
    }
    qq = {o: float(q_law.get(o, 0)) for o in mixed}
    accountant = compose(
        "weak-adversary",
        epsilon_local=1.5,
        n_users=10,
        k=3,
        compositions=2,
        subsample=q,
        value_discretization_interval=DELTA,
    )
    for eps in (0.05, 0.2):
        upper = float(accountant.delta_for_epsilon(eps)[0])
        assert exact_composed_delta(mixed, qq, 2, eps) - SLACK <= upper
        assert upper <= exact_composed_delta(mixed, qq, 2, eps - 2 * 2 * DELTA) + 1e-12


def _independent_pld_epsilon(laws_p, laws_q, T, delta):
    """Composed epsilon of raw pmfs through dp_accounting directly (no code of this package)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    log_p = {o: math.log(float(v)) for o, v in laws_p.items() if float(v) > 0}  # dp_accounting takes log pmfs
    log_q = {o: math.log(float(v)) for o, v in laws_q.items() if float(v) > 0}
    # arguments are (lower, upper): the PLD of upper vs lower
    one = pld.from_two_probability_mass_functions(log_q, log_p, value_discretization_interval=1e-4)
    other = pld.from_two_probability_mass_functions(log_p, log_q, value_discretization_interval=1e-4)
    return max(
        one.self_compose(T).get_epsilon_for_delta(delta), other.self_compose(T).get_epsilon_for_delta(delta)
    )


@pytest.mark.parametrize(
    "name, laws",
    [
        ("weak-adversary", weak_adversary_view_distributions),
        ("strong-adversary", strong_adversary_view_distributions),
    ],
)
def test_composed_epsilon_agrees_with_independent_pld_of_exact_views(name, laws):
    eps0, n, k, T = 1.0, 6, 3, 8
    p_law, q_law = laws(n, k, epsilon_local=eps0, dps=30)
    ours = compose(name, epsilon_local=eps0, n_users=n, k=k, compositions=T).epsilon_for_delta(1e-3)
    independent = _independent_pld_epsilon(p_law, q_law, T, 1e-3)
    assert ours == pytest.approx(independent, rel=0.01)


def test_girgis_reproduces_koskela_stored_values():
    # Koskela et al.'s clones_girgis_comparison_fig3/girgis_upper.py: n = 1e5, q = 0.01, eps0 = 3, delta = 1e-5;
    # values from its pickle eps_fig1_girgis_upper.p at T = 10, 100, 1000, 10000. Called in the paper's words:
    # n_users is the population, 1,000 users are sampled each round.
    expected = {10: 0.73077, 100: 1.74824, 1000: 4.28734, 10000: 11.87878}
    for T, value in expected.items():
        accountant = get_accountant(
            "girgis-rdp", epsilon_local=3.0, n_users=100000, k=2, compositions=T, subsample=0.01
        )
        assert accountant.users_per_round == 1000
        assert accountant.epsilon_for_delta(1e-5) == pytest.approx(value, abs=1e-5)


@pytest.mark.parametrize("name", ["girgis-rdp", "girgis-rdp-simple"])
@pytest.mark.parametrize("eps0, n, T", [(1.0, 1000, 1), (1.0, 1000, 10), (2.0, 5000, 4)])
def test_girgis_above_tight_upper_bounds(name, eps0, n, T):
    girgis = get_accountant(name, epsilon_local=eps0, n_users=n, k=2, compositions=T).epsilon_for_delta(1e-6)
    for tight in ("feldman-numerical", "weak-adversary"):
        ours = compose(
            tight, epsilon_local=eps0, n_users=n, k=2, compositions=T, value_discretization_interval=DELTA
        ).epsilon_for_delta(1e-6)
        assert girgis >= ours


def test_girgis_subsampled_above_composed_subsampled_clones():
    girgis = get_accountant(
        "girgis-rdp", epsilon_local=3.0, n_users=100000, k=2, compositions=100, subsample=0.01
    )
    ours = compose(
        "feldman-numerical",
        epsilon_local=3.0,
        n_users=100000,
        k=2,
        compositions=100,
        subsample=0.01,
        value_discretization_interval=DELTA,
    )
    assert girgis.epsilon_for_delta(1e-5) >= ours.epsilon_for_delta(1e-5)


def test_subsample_population_convention_samples_q_n_users_per_round():
    """n_users is the population (Girgis et al.; Koskela et al. "n = 10^5 users, q = 0.01"): the subsampled
    round is the unsampled pair of q n users mixed with rate q, so at q = 1 the per-round and population
    readings coincide, and below it the views are those of q n users."""
    r = Round(3.0, 100000, 4, 0.01)
    assert r.per_round == 1000 and r.n_users == 100000
    paper = compose(
        "feldman-numerical", epsilon_local=3.0, n_users=100000, k=4, compositions=10, subsample=0.01
    )
    per_round = get_accountant("feldman-numerical", epsilon_local=3.0, n_users=1000, k=4)
    # the subsampled composition is far below 10 rounds of the unsampled 1,000-user shuffler and above zero
    assert 0.0 < paper.epsilon_for_delta(1e-5) < per_round.epsilon_for_delta(1e-5)
    assert paper.epsilon_for_delta(1e-5) == pytest.approx(
        0.0257, abs=5e-4
    )  # the value for 1,000 per round


@pytest.mark.parametrize("n, q, shown", [(50, 0.01, "0.5"), (1234, 0.01, "12.34"), (10, 0.05, "0.5")])
def test_subsample_refuses_settings_without_a_whole_number_of_users_per_round(n, q, shown):
    for call in (
        lambda: compose("weak-adversary", epsilon_local=1.0, n_users=n, k=3, subsample=q),
        lambda: get_accountant("girgis-rdp", epsilon_local=1.0, n_users=n, k=3, subsample=q),
    ):
        with pytest.raises(
            ValueError, match=rf"`subsample` x `n_users` must be a whole number >= 1 .*= {shown}\.$"
        ):
            call()


def test_round_pld_returns_one_pld_per_dataset_for_lower_bound():
    assert len(round_pld("worst-case-lower", Round(1.0, 50, 3), interval=DELTA)) == 2
    assert len(round_pld("worst-case-lower", Round(1.0, 50, 2), interval=DELTA)) == 1


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: compose("biswas-exact", epsilon_local=1.0, n_users=10, k=3),
            ValueError,
            r"`accountant` must be one of .*got 'biswas-exact'",
        ),
        (
            lambda: compose("weak-adversary", epsilon_local=1.0, n_users=10, k=3, compositions=0),
            ValueError,
            r"`compositions` must be an integer in \[1, 1000000\]; got 0",
        ),
        (
            lambda: compose("weak-adversary", epsilon_local=1.0, n_users=10, k=3, subsample=0.0),
            ValueError,
            r"`subsample` must be in \(0, 1\]; got 0.0",
        ),
        (
            lambda: compose("weak-adversary", epsilon_local=1.0, n_users=10, k=3, subsample=1.5),
            ValueError,
            r"`subsample` must be in \(0, 1\]; got 1.5",
        ),
        (
            lambda: compose("weak-adversary", epsilon_local=60.0, n_users=10, k=3),
            ValueError,
            r"`epsilon_local` must be in \(0, 50\]",
        ),
        (
            lambda: compose("weak-adversary", rounds=[]),
            ValueError,
            r"`rounds` must contain at least one round",
        ),
        (
            lambda: compose(
                "weak-adversary", epsilon_local=1.0, n_users=10, k=3, value_discretization_interval=0.5
            ),
            ValueError,
            r"`value_discretization_interval` must be in \(0, 0.1\]; got 0.5",
        ),
        (
            lambda: compose("weak-adversary", n_users=10, k=3),
            ValueError,
            r"`epsilon_local`, `n_users` and `k` are required",
        ),
        (
            lambda: compose("weak-adversary", epsilon_local=1.0, n_users=10, k=3).delta_for_epsilon(-1.0),
            ValueError,
            r"`epsilon` must be in \[0, inf\); got -1.0",
        ),
        (
            lambda: compose("weak-adversary", epsilon_local=1.0, n_users=10, k=3).epsilon_for_delta(0.0),
            ValueError,
            r"`delta` must be in \(0, 1\]; got 0.0",
        ),
        (
            lambda: get_accountant("girgis-rdp-simple", epsilon_local=1.0, n_users=10, k=3, subsample=0.5),
            ValueError,
            r"`subsample` must be 1 for 'girgis-rdp-simple'",
        ),
        (
            lambda: get_accountant("girgis-rdp", epsilon_local=1.0, n_users=10, k=3, compositions=0),
            ValueError,
            r"`compositions` must be an integer",
        ),
    ],
)
def test_bad_input_raises_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_lower_bound_refuses_subsampling_in_one_line():
    """The subsampled mixture (q P + (1 - q) Q, Q) is right for upper bounds only: for 'all on x0' the
    un-sampled round has law P, so the exact pair is (P, q Q + (1 - q) P). Check that the mixture can exceed
    that exact pair's delta (so a lower bound built from it would not be one), and that it is refused."""
    import numpy as np
    from scipy.stats import binom

    from shuffledp.accounting.composition import compose, optimistic_privacy_loss_distribution

    m, q, eps0, eps = 20, 0.5, 1.0, 0.3
    p_stay = np.exp(eps0) / (np.exp(eps0) + 1.0)  # k = 2: reports of x1 among m users
    c = np.arange(m + 1)
    P = binom.pmf(c, m, 1.0 - p_stay)  # u and all others on x0
    Q = np.convolve(binom.pmf(np.arange(m), m - 1, 1.0 - p_stay), [1 - p_stay, p_stay])  # u on x1
    hockey = lambda a, b: float(np.maximum(a - np.exp(eps) * b, 0.0).sum())
    exact = max(hockey(P, q * Q + (1 - q) * P), hockey(q * Q + (1 - q) * P, P))
    mixture = max(hockey(q * P + (1 - q) * Q, Q), hockey(Q, q * P + (1 - q) * Q))
    assert mixture > exact  # the mixture overstates this dataset pair's delta
    with pytest.raises(ValueError, match=r"^`subsample` must be 1 for the lower bound 'worst-case-lower'"):
        compose("worst-case-lower", epsilon_local=1.0, n_users=1000, k=2, compositions=2, subsample=0.5)
    with pytest.raises(ValueError, match=r"^`subsample` must be 1 for the lower bound"):
        optimistic_privacy_loss_distribution("worst-case-lower", 1.0, 1000, 2, subsample=0.5)
