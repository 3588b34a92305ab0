"""Sanity checks of the brute-force reference itself (closed forms for tiny cases)."""

import math

import mpmath
import pytest
from brute_force import (
    dataset_values,
    histogram_distributions,
    hockey_stick,
    pair_distributions,
    single_bin_distributions,
)


@pytest.mark.parametrize(
    "n,k,n_x0,dataset", [(1, 2, 0, "third"), (3, 3, 1, "third"), (4, 4, 2, "spread"), (3, 2, 0, "x1")]
)
def test_laws_sum_to_one(n, k, n_x0, dataset):
    for law in histogram_distributions(n, k, n_x0, dataset, epsilon_local=0.7):
        with mpmath.workdps(50):
            assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** -40
        assert all(sum(c) == n for c in law)


def test_single_user_closed_form():
    # n = 1: the x0 count is u's indicator: Bern(p) under D(x0), Bern(q) under D(x1).
    eps0, k = 1.3, 3
    p = math.exp(eps0) / (math.exp(eps0) + k - 1)
    q = 1 / (math.exp(eps0) + k - 1)
    p0, p1 = single_bin_distributions(1, k, 0, epsilon_local=eps0)
    assert float(p0[1]) == pytest.approx(p, rel=1e-14)
    assert float(p1[1]) == pytest.approx(q, rel=1e-14)
    # H_{e^eps}(Bern(p) || Bern(q)) = max(p - e^eps q, 0) + max((1-p) - e^eps (1-q), 0) (closed form)
    eps = 0.4
    expected = max(p - math.exp(eps) * q, 0) + max((1 - p) - math.exp(eps) * (1 - q), 0)
    assert float(hockey_stick(p0, p1, eps)) == pytest.approx(expected, rel=1e-12)
    # eps0-LDP: no divergence beyond eps0
    assert hockey_stick(p0, p1, eps0 + 1e-9) == 0


def test_pair_marginal_of_histogram():
    p0, _ = histogram_distributions(3, 3, 1, epsilon_local=0.5)
    pair0, _ = pair_distributions(3, 3, 1, epsilon_local=0.5)
    with mpmath.workdps(50):
        expected = mpmath.fsum(v for c, v in p0.items() if c[:2] == (1, 1))
        assert abs(pair0[(1, 1)] - expected) < mpmath.mpf(10) ** -45


def test_dataset_values():
    assert dataset_values(5, 4, 1, "third") == [0, 2, 2, 2]
    assert dataset_values(5, 4, 1, "spread") == [0, 2, 3, 2]
    assert dataset_values(4, 2, 0, "third") == [1, 1, 1]
    with pytest.raises(ValueError, match=r"`n_x0` must be an integer in \[0, 3\]; got 4"):
        dataset_values(4, 3, 4)


# ------------------------------------------------------------------ worst case over datasets, adversary views


def test_other_datasets_are_every_count_vector_once():
    from brute_force import other_datasets

    for n, k in [(1, 2), (4, 3), (6, 4), (3, 5)]:
        datasets = other_datasets(n, k)
        assert len(datasets) == len(set(datasets)) == math.comb(n + k - 2, k - 1)
        assert all(len(d) == k and sum(d) == n - 1 and min(d) >= 0 for d in datasets)
        # every multiset of values of the n - 1 others appears (independent enumeration)
        import itertools

        seen = {
            tuple(values.count(v) for v in range(k))
            for values in (list(t) for t in itertools.combinations_with_replacement(range(k), n - 1))
        }
        assert seen == set(datasets)


@pytest.mark.parametrize("counts, k", [((2, 0, 1), 3), ((0, 3, 0, 1), 4), ((4, 1), 2), ((0, 0, 0), 3)])
def test_convolution_law_equals_literal_enumeration(counts, k):
    from brute_force import histogram_distribution_of_counts, histogram_distribution_of_values

    values = [v for v, c in enumerate(counts) for _ in range(c)]
    literal = histogram_distribution_of_values(values, k, epsilon_local=0.9)
    convolved = histogram_distribution_of_counts(counts, k, epsilon_local=0.9)
    assert set(literal) == set(convolved)
    with mpmath.workdps(50):
        assert max(abs(literal[o] - convolved[o]) for o in literal) < mpmath.mpf(10) ** -45


def test_true_worst_case_single_user_closed_form():
    """n = 1: the output is u's k-RR report; H(W[x0] || W[x1]) = max(p - e^eps q, 0) (the (k-2) bins
    with q on both sides and bin x1 with q - e^eps p < 0 contribute nothing)."""
    from brute_force import true_worst_case_delta

    for eps0, k, eps in [(1.3, 3, 0.4), (0.5, 2, 0.0), (2.0, 5, 1.9), (2.0, 5, 2.5)]:
        p = math.exp(eps0) / (math.exp(eps0) + k - 1)
        q = 1 / (math.exp(eps0) + k - 1)
        result = true_worst_case_delta(eps, eps0, 1, k)
        assert float(result.delta) == pytest.approx(max(p - math.exp(eps) * q, 0.0), rel=1e-12, abs=1e-40)
        assert result.others == (0,) * k


def test_true_worst_case_is_max_over_literal_full_histograms():
    """Every dataset's delta (literal k^n enumeration, existing API) is <= the worst case, and the
    reported argmax attains it. Case: n = 8, k = 4, eps0 = 1, eps = 0.75, whose worst case is 1.40e-3 by
    brute force (the worst dataset: every other user on one of x0, x1)."""
    from brute_force import true_worst_case_delta

    n, k, eps0, eps = 8, 4, 1.0, 0.75
    worst = true_worst_case_delta(eps, eps0, n, k)
    for n_x0, dataset in [(0, "third"), (0, "x1"), (n - 1, "third"), (3, "spread")]:
        p0, p1 = histogram_distributions(n, k, n_x0, dataset, epsilon_local=eps0)
        with mpmath.workdps(50):
            assert max(hockey_stick(p0, p1, eps), hockey_stick(p1, p0, eps)) <= worst.delta * (
                1 + mpmath.mpf(10) ** -40
            )
    values = [v for v, c in enumerate(worst.others) for _ in range(c)]
    from brute_force import histogram_distribution_of_values

    p0 = histogram_distribution_of_values([0] + values, k, epsilon_local=eps0)
    p1 = histogram_distribution_of_values([1] + values, k, epsilon_local=eps0)
    first, second = (p0, p1) if worst.direction == "P0||P1" else (p1, p0)
    with mpmath.workdps(50):
        assert abs(hockey_stick(first, second, eps) - worst.delta) < mpmath.mpf(10) ** -45
    assert float(worst.delta) == pytest.approx(1.40e-3, abs=0.005e-3)  # the brute-force figure, 3 digits


def test_weak_view_does_not_depend_on_the_others_data():
    """After removing the truthful others' reports, the weak adversary's view has the same law for
    every dataset of the others; with the full histogram (no removal) the law differs but the
    hockey-stick divergence is the same (bijection given bits and data)."""
    from brute_force import weak_adversary_view_distributions

    n, k, eps0 = 5, 3, 0.8
    datasets = [[0, 0, 0, 0], [1, 2, 2, 0], [2, 2, 2, 2], [1, 1, 1, 1]]
    reference = weak_adversary_view_distributions(n, k, epsilon_local=eps0, others=datasets[0])
    for others in datasets[1:]:
        laws = weak_adversary_view_distributions(n, k, epsilon_local=eps0, others=others)
        for law, ref in zip(laws, reference):
            assert set(law) == set(ref)
            assert max(abs(law[o] - ref[o]) for o in law) < mpmath.mpf(10) ** -45
    for others in datasets:
        full = weak_adversary_view_distributions(
            n, k, epsilon_local=eps0, others=others, remove_truthful=False
        )
        for eps in (0.0, 0.3, 0.7):
            assert abs(hockey_stick(*full, eps) - hockey_stick(*reference, eps)) < mpmath.mpf(10) ** -45
    # the full-histogram laws do depend on the data (the removal is what makes the view data-free)
    full_a = weak_adversary_view_distributions(
        n, k, epsilon_local=eps0, others=datasets[0], remove_truthful=False
    )
    full_b = weak_adversary_view_distributions(
        n, k, epsilon_local=eps0, others=datasets[2], remove_truthful=False
    )
    assert set(full_a[0]) != set(full_b[0])


def test_adversary_views_sum_to_one_and_single_user_closed_forms():
    from brute_force import (
        strong_adversary_view_bruteforce,
        strong_adversary_view_distributions,
        weak_adversary_view_bruteforce,
        weak_adversary_view_distributions,
    )

    for laws in (
        weak_adversary_view_distributions(4, 3, epsilon_local=1.1),
        strong_adversary_view_distributions(4, 3, epsilon_local=1.1),
    ):
        for law in laws:
            with mpmath.workdps(50):
                assert abs(mpmath.fsum(law.values()) - 1) < mpmath.mpf(10) ** -45
    eps0, k, eps = 1.3, 4, 0.2
    e = math.exp(eps0)
    p, q = e / (e + k - 1), 1 / (e + k - 1)
    # n = 1: weak sees u's k-RR report; strong also sees u's bit: truthful (prob 1 - gamma) is
    # fully revealing, blanket is identical under both (delta = 1 - gamma for every eps)
    assert float(weak_adversary_view_bruteforce(eps, eps0, 1, k)) == pytest.approx(
        p - math.exp(eps) * q, rel=1e-12
    )
    assert float(strong_adversary_view_bruteforce(eps, eps0, 1, k)) == pytest.approx(1 - k * q, rel=1e-12)
    assert float(strong_adversary_view_bruteforce(5.0, eps0, 1, k)) == pytest.approx(1 - k * q, rel=1e-12)


@pytest.mark.parametrize("n, k, eps0", [(3, 2, 0.5), (4, 3, 1.0), (5, 4, 2.0), (6, 2, 1.0)])
def test_true_worst_case_below_weak_below_strong(n, k, eps0):
    """Data processing: the real histogram is a function of the weak view (plus the known data),
    which is a function of the strong view; so true worst case <= weak <= strong, both directions."""
    from brute_force import (
        strong_adversary_view_bruteforce,
        true_worst_case_delta,
        weak_adversary_view_bruteforce,
    )

    for eps in (0.0, 0.1, 0.3, 0.75, eps0, eps0 + 0.5):
        true = true_worst_case_delta(eps, eps0, n, k).delta
        weak = weak_adversary_view_bruteforce(eps, eps0, n, k)
        strong = strong_adversary_view_bruteforce(eps, eps0, n, k)
        with mpmath.workdps(50):
            tolerance = mpmath.mpf(10) ** -40  # eps = eps0: exact ties, rounding at 50 digits
            assert true <= weak * (1 + tolerance) + tolerance
            assert weak <= strong * (1 + tolerance) + tolerance


def test_view_enumeration_refuses_oversized_cases():
    from brute_force import weak_adversary_view_distributions

    with pytest.raises(ValueError, match="exceeds MAX_VECTORS"):
        weak_adversary_view_distributions(12, 6, epsilon_local=1.0)
    with pytest.raises(ValueError, match=r"`others` must be 3 values in \[0, 2\]"):
        weak_adversary_view_distributions(4, 3, epsilon_local=1.0, others=[0, 1, 3])
