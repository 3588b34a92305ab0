"""The bracketing searches of accounting/numerics/search.py on monotone functions with known roots."""

from __future__ import annotations

import math

import pytest

from shuffledp.accounting.numerics.search import (
    LARGEST,
    Bracket,
    InterpolatingSearch,
    bisect,
    descend_to_crossing,
    exponential_bracket,
    first_high_integer,
    first_high_integers,
    first_not_above,
    geometric_or_halfway,
    grow_bracket,
    halfway,
    illinois,
    regula_falsi,
    secant_or_iqi,
)


class Counted:
    """A yes/no question ``x >= root`` that records where it was asked."""

    def __init__(self, root):
        self.root, self.points = root, []

    def __call__(self, x):
        self.points.append(x)
        return x >= self.root


# -- grow_bracket


@pytest.mark.parametrize(
    "root,expected",
    [
        (0.5, (0.0, 1.0)),
        (1.5, (1.0, 2.0)),
        (3.0, (2.0, 4.0)),
        (300.0, (256.0, 65536.0)),
        (1e300, (2.0**512, LARGEST)),
    ],
)
def test_grow_bracket_doubles_then_squares(root, expected):
    is_high = Counted(root)
    assert grow_bracket(lambda x: not is_high(x)) == expected
    low, high = expected
    assert low < root <= high


def test_grow_bracket_gives_none_when_even_the_largest_float_is_low():
    assert grow_bracket(lambda x: True) is None
    assert grow_bracket(lambda x: x < 100.0, largest=50.0) is None


# -- bisect


@pytest.mark.parametrize("root", [math.pi / 10, 0.7, 1e-3, 12345.678])
@pytest.mark.parametrize("split", [halfway, geometric_or_halfway])
def test_bisection_brackets_the_root_to_the_tolerance(root, split):
    is_high = Counted(root)
    tolerance = 1e-10
    low, high = bisect(is_high, 0.0, 2e4, split=split, wide=lambda lo, hi: hi - lo > tolerance * max(1.0, hi))
    assert low < root <= high  # high is answered yes (the safe end for "meets the target"), low no
    assert high - low <= tolerance * max(1.0, high)
    assert is_high(high) and not is_high(low)


def test_geometric_split_reaches_a_huge_root_in_few_steps():
    root = 1e250
    is_high = Counted(root)
    low, high = grow_bracket(lambda x: not is_high(x))
    low, high = bisect(
        is_high, low, high, split=geometric_or_halfway, wide=lambda lo, hi: hi - lo > 1e-10 * max(1.0, hi)
    )
    assert low < root <= high and high - low <= 1e-10 * high
    assert len(is_high.points) < 80  # arithmetic halving from 2^1024 would need ~1000


def test_geometric_or_halfway():
    assert geometric_or_halfway(1.0, 100.0) == pytest.approx(10.0)
    assert geometric_or_halfway(1.0, 3.0) == 2.0
    assert geometric_or_halfway(0.0, 100.0) == 50.0


def test_bisect_returns_the_start_when_already_narrow():
    assert bisect(
        lambda x: pytest.fail("evaluated"), 1.0, 1.5, wide=lambda lo, hi: hi - lo > 1.0, split=halfway
    ) == (1.0, 1.5)


# -- integer searches


@pytest.mark.parametrize("first,last", [(1, 1), (1, 2), (1, 57), (3, 1000)])
@pytest.mark.parametrize("step", [1, 24])
def test_first_high_integer_finds_the_first_index(first, last, step):
    for answer in range(first, last + 2):  # last + 1: no integer answers yes
        for guess in {first, last, (first + last) // 2, min(last, answer)}:
            is_high = Counted(answer)
            low, high = first_high_integer(is_high, guess, first=first, last=last, step=step)
            assert high == answer and low == answer - 1
            assert all(first <= h <= last for h in is_high.points)  # sentinels never evaluated


def test_exponential_bracket_cost_is_logarithmic_and_window_is_kept():
    is_high = Counted(10_000_000)
    low, high = exponential_bracket(is_high, 5, first=1, last=10**9, step=24)
    assert low < 10_000_000 <= high
    assert len(is_high.points) < 25
    low, high = first_high_integer(is_high, 5, first=1, last=10**9, step=24, width=48)
    assert low < 10_000_000 <= high and high - low <= 48


# -- Illinois


def _cubic(x):
    h = x**3 - 2.0
    return h > 0, h, -x


def test_illinois_converges_superlinearly_to_the_tolerance():
    root = 2.0 ** (1.0 / 3.0)
    calls = []

    def evaluate(x):
        calls.append(x)
        return _cubic(x)

    end = illinois(evaluate, Bracket(0.0, 3.0, -0.0, -3.0), -2.0, 25.0, tolerance=1e-12)
    assert end.low <= root < end.high and end.high - end.low <= 1e-12
    assert end.low**3 - 2.0 <= 0 < end.high**3 - 2.0  # low answered no, high yes
    assert end.value_low == -end.low and end.value_high == -end.high
    assert len(calls) < 20  # bisection from width 3 to 1e-12 needs 42


def test_illinois_bisects_where_values_are_not_finite():
    root = 0.37

    def evaluate(x):
        return x >= root, (math.inf if x >= root else -math.inf), x

    end = illinois(evaluate, Bracket(0.0, 1.0), -math.inf, math.inf, tolerance=1e-6)
    assert end.low < root <= end.high and end.high - end.low <= 1e-6


def test_illinois_before_step_can_stop_it():
    class Stop(Exception):
        pass

    def before_step(low, high):
        raise Stop

    with pytest.raises(Stop):
        illinois(_cubic, Bracket(0.0, 3.0), -2.0, 25.0, tolerance=1e-12, before_step=before_step)


# -- descend_to_crossing


def _gaussian_tail(root):
    """A log delta shaped as a Gaussian tail, crossing log 1e-6 at ``root``; records where it is asked."""
    points = []
    scale = math.sqrt(-2.0 * math.log(1e-6)) / root

    def log_delta(x):
        points.append(x)
        return -0.5 * (scale * x) ** 2 if x < 10.0 * root else -math.inf

    return log_delta, points


@pytest.mark.parametrize("root", [0.0026, 0.03, 0.9, 3.5])
def test_descend_to_crossing_brackets_as_bisection_does_in_fewer_steps(root):
    log_delta, points = _gaussian_tail(root)
    end = descend_to_crossing(log_delta, math.log(1e-6), 4.0 if root < 4.0 else 8.0, tolerance=1e-7)
    assert end.low < root <= end.high and end.high - end.low <= 1e-7 * end.low
    assert end.value_low > math.log(1e-6) >= end.value_high  # low exceeds the target, high meets it
    assert end.value_low == log_delta(end.low) and end.value_high == log_delta(end.high)
    descended = len(points) - 2  # the two checks above
    bisection, _ = _gaussian_tail(root)
    reference = first_not_above(lambda x: bisection(x) > math.log(1e-6), tolerance=1e-7)
    assert end.low < reference and abs(reference - end.high) <= 1e-7 * max(1.0, reference)
    assert descended < 25  # halvings from 4 to the root, then Illinois; bisection from 1 takes ~25-30


def test_descend_to_crossing_absolute_width_stops_earlier():
    log_delta, points = _gaussian_tail(0.003)
    end = descend_to_crossing(log_delta, math.log(1e-6), 1.0, tolerance=1e-12, absolute=1e-7)
    assert end.high - end.low <= 1e-7 and end.low < 0.003 <= end.high
    many, more = _gaussian_tail(0.003)
    descend_to_crossing(many, math.log(1e-6), 1.0, tolerance=1e-12)
    assert len(more) > len(points)


def test_descend_to_crossing_returns_zero_when_nothing_exceeds_the_target():
    end = descend_to_crossing(lambda x: -math.inf, math.log(1e-6), 1.0, tolerance=1e-4)
    assert end.low == 0.0 and end.high > 0.0


def test_descend_to_crossing_refuses_a_start_that_fails_the_target():
    """Probe: a start above the target (e.g. a lower bound above the upper epsilon) is refused, not searched."""
    log_delta, _ = _gaussian_tail(0.5)
    with pytest.raises(ValueError, match="`high` must meet the target"):
        descend_to_crossing(log_delta, math.log(1e-6), 0.4, tolerance=1e-4)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"high": 0.0}, "`high` must be > 0"),
        ({"tolerance": 0.0}, "`tolerance` must be > 0"),
        ({"absolute": -1.0}, "`absolute` must be >= 0"),
        ({"factor": 1.0}, "`factor` must be in"),
    ],
)
def test_descend_to_crossing_names_bad_input(kwargs, match):
    arguments = {"high": 1.0, "tolerance": 1e-4} | kwargs
    with pytest.raises(ValueError, match=match):
        descend_to_crossing(lambda x: -math.inf, math.log(1e-6), **arguments)


# -- interpolation


def test_secant_and_inverse_quadratic_are_exact_on_linear_and_quadratic_data():
    line = [(x, 2.0 * x - 1.0) for x in (0.0, 1.0)]
    assert secant_or_iqi(line, 0.0, 1.0) == pytest.approx(0.5)
    curve = [(g * g + 0.25, g) for g in (-1.0, 0.5, 2.0)]  # x(g) quadratic: IQI gives x(0) exactly
    assert secant_or_iqi(curve, 0.0, 5.0) == pytest.approx(0.25)
    assert math.isnan(secant_or_iqi([(0.0, 1.0), (1.0, 1.0)], 0.0, 1.0))
    assert regula_falsi(0.0, 4.0, -1.0, 3.0) == 1.0
    assert regula_falsi(0.0, 4.0, 1.0, 1.0) == 2.0


def _phi(value):
    return math.sqrt(max(-value, 0.0))


@pytest.mark.parametrize("log_target", [-5.0, -30.0, -200.0])
def test_interpolating_search_keeps_the_certified_ends(log_target):
    c = 50.0  # log delta = -c x^2 on [0, 10): root sqrt(-log_target / c); delta = 0 from 10 on
    root = math.sqrt(-log_target / c)
    calls = []

    def meets(x):
        calls.append(x)
        value = -c * x * x if x < 10.0 else -math.inf
        return value <= log_target, value

    search = InterpolatingSearch(_phi, _phi(log_target), 0.0, 10.0, -math.inf)
    search.run(meets, 1e-9)
    assert search.low < root <= search.high  # high answered yes (safe for an upper bound), low no
    assert search.high - search.low <= 1e-9 * search.high
    assert -c * search.high**2 <= log_target < -c * search.low**2
    assert len(calls) < 15  # bisection to 1e-9 relative needs ~34


def test_interpolating_search_collapses_to_zero_when_zero_meets():
    search = InterpolatingSearch(_phi, _phi(-1.0), 0.0, 3.0, -math.inf)
    search.run(lambda x: (True, -math.inf), 1e-9)
    assert (search.low, search.high) == (0.0, 0.0)


def test_interpolating_search_uses_a_recorded_hint():
    search = InterpolatingSearch(_phi, _phi(-8.0), 0.0, 10.0, -math.inf)
    search.record(2.0, True, -16.0)  # a certified upper end from elsewhere
    search.record(20.0, True, -1e9)  # not inside: the bracket does not widen
    assert search.high == 2.0 and search.value_high == -16.0
    search.record(0.5, False, -1.0)
    assert search.low == 0.5 and search.value_low == -1.0


def test_next_point_steps_just_past_the_newest_end_to_close_the_bracket():
    search = InterpolatingSearch(lambda value: value, 0.0, 0.0, 3.0, 5.0)
    search.record(1.0, False, -1.0)
    search.record(2.0, True, 1e-12)  # the secant lands 1e-12 below this end: within the tolerance
    margin = 0.1 * 1e-6 * 2.0
    assert search.next_point(1e-6) == 2.0 - margin  # moved a whole margin past it (a yes/no there decides)
    assert InterpolatingSearch(lambda value: value, 0.0, 0.0, 3.0, 5.0).next_point(1e-6) == 0.0  # 0 first


def test_first_high_integers_finds_each_first_index():
    import numpy as np

    answers = np.array([0, 3, 7, 7, 10, 12, 5])
    lo = np.array([0, 0, 2, 7, 0, 1, 6])
    hi = np.array([9, 9, 9, 9, 9, 9, 9])
    asked = []

    def is_high(x):
        asked.append(x.copy())
        return x >= answers

    got = first_high_integers(is_high, lo, hi)
    assert got.tolist() == [0, 3, 7, 7, 9, 9, 6]  # hi where no index up to hi answers yes; lo where lo does
    assert lo.tolist() == [0, 0, 2, 7, 0, 1, 6] and hi.tolist() == [9] * 7  # inputs untouched
    assert len(asked) <= 5  # log2(9) + 1 rounds
