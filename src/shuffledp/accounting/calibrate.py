"""Calibration: the largest local epsilon_0 that meets a target (epsilon, delta).

For given n, k (and n_x0 for dataset-dependent accountants) find the largest eps0 with
delta(epsilon; eps0) <= delta_target. The search assumes delta is non-decreasing in eps0 (less local
noise never helps privacy; true for every accountant tested in this package) and keeps a bracket
[low, high] with low meeting the target and high not; it returns ``low``, so the answer always meets
the target (it errs towards privacy), and stops once high - low <= ``tolerance`` (absolute), so
eps0 + ``tolerance`` does not meet it.

Steps are Illinois (a regula falsi that halves the retained end's value when the same end is kept
twice; superlinear, never leaves the bracket) on

    h(eps0) = log(-log delta_target) - log(-log delta(epsilon; eps0)),

which is increasing in eps0 and close to linear over the hundreds of nats that log delta spans between
eps0 = epsilon (delta = 0, h = -inf) and large eps0 (h -> +inf as delta -> 1); an end where h is not
finite is handled by bisection. Once the bracket is small, each step is kept at least tolerance / 2
inside it, so the last two evaluations straddle the root and close the bracket: about 8-12 accountant
evaluations instead of the ~25 of a bisection to 1e-6. ``meets`` is decided on log delta itself, never
on the interpolant.

Shuffled k-RR with eps0 <= epsilon is (epsilon, 0)-DP (post-processing of eps0-LDP reports), so the
answer is never below the target epsilon: eps0 = epsilon meets every target even when a loose
accountant's bound says otherwise, and the search starts there.

**Lower bound first (``lower=``).** A lower-bound accountant (e.g. ``worst-case-lower``, ~0.01 s
per calibration) is calibrated first; where it exceeds the target, the true worst case does, and so does
every valid upper bound: its failing end is a certified failing end of this search. The searched accountant
is then evaluated only just below it (1-4 times instead of ~10 for ``worst-case-upper`` at k = 2, where those
evaluations cost 0.05-0.4 s each). The answer still meets the target by the searched accountant's own value,
and eps0 + ``tolerance`` still does not; as the path differs, the eps0 found moves within ``tolerance``
against the plain search (up to 9.4e-4 at tolerance 1e-3 on the stand-in phase grid).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shuffledp._validation import check_choice, check_probability, check_real
from shuffledp.accounting import BoundKind, accountant_class, get_accountant
from shuffledp.accounting.numerics.search import Bracket, illinois
from shuffledp.accounting.randomizers import Randomizer

__all__ = ["calibrate_epsilon_local", "calibrate_epsilon_local_traced", "EpsilonLocalCalibration"]

#: search methods of :func:`calibrate_epsilon_local_traced`
METHODS = ("illinois", "bisection")
_SMALLEST = 1e-6  # smallest epsilon_0 tried
_MAX_EVALUATIONS = 200  # safety net: Illinois plus bisection never need this many on a monotone curve


@dataclass(frozen=True)
class EpsilonLocalCalibration:
    """Result of a calibration: the answer ``epsilon_local`` (meets the target), the first value
    known not to (``epsilon_local_fails``; at most ``tolerance`` above), log delta at both, and the
    number of accountant evaluations."""

    epsilon_local: float
    epsilon_local_fails: float
    log_delta: float
    log_delta_fails: float
    evaluations: int


def _log_delta(accountant: str, epsilon_local: float, epsilon: float, parameters: dict) -> float:
    randomizer = parameters.get("randomizer")
    if isinstance(randomizer, type) and issubclass(
        randomizer, Randomizer
    ):  # a randomizer class: built at each eps0 with its defaults at (eps0, k)
        rest = {name: value for name, value in parameters.items() if name not in ("randomizer", "k")}
        built = randomizer.from_parameters(epsilon_local=epsilon_local, k=parameters.get("k"))
        return float(get_accountant(accountant, randomizer=built, **rest).log_delta_for_epsilon(epsilon)[0])
    return float(
        get_accountant(accountant, epsilon_local=epsilon_local, **parameters).log_delta_for_epsilon(epsilon)[
            0
        ]
    )


def _transformed(log_delta: float, log_log_target: float) -> float:
    """h = log(-log target) - log(-log delta): -inf at delta = 0, +inf at delta >= 1, increasing in delta."""
    if log_delta >= 0.0:
        return math.inf
    if log_delta == -math.inf:
        return -math.inf
    return log_log_target - math.log(-log_delta)


@dataclass
class _Search:
    """One calibration's accountant evaluations (counted) at the target (epsilon, delta)."""

    accountant: str
    epsilon: float
    delta: float
    log_target: float
    parameters: dict
    evaluations: int = 0

    def log_delta_at(self, epsilon_local: float) -> float:
        self.evaluations += 1
        return _log_delta(self.accountant, epsilon_local, self.epsilon, self.parameters)

    def check_budget(self, low: float, high: float) -> None:
        if self.evaluations >= _MAX_EVALUATIONS:  # pragma: no cover - a non-monotone accountant
            raise RuntimeError(
                f"calibration of {self.accountant!r} did not converge in {_MAX_EVALUATIONS} evaluations "
                f"(bracket [{low!r}, {high!r}]); is delta non-decreasing in epsilon_local?"
            )


def _checked_search(
    accountant: str,
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    n_x0: int | None,
    upper: float,
    tolerance: float,
    method: str,
    options: dict,
) -> tuple[_Search, float, float]:
    """The validated arguments as a :class:`_Search`, with ``upper`` and ``tolerance`` checked."""
    check_choice(method, "method", METHODS)
    epsilon = check_real(epsilon, "epsilon", low=0.0)
    delta = check_probability(delta, "delta", allow_zero=True)
    upper = check_real(upper, "upper", low=_SMALLEST, low_open=True)
    tolerance = check_real(tolerance, "tolerance", low=0.0, low_open=True)
    parameters = dict(n_users=n_users, k=k, **options)
    if n_x0 is not None:
        parameters["n_x0"] = n_x0
    log_target = math.log(delta) if delta > 0 else -math.inf
    return _Search(accountant, epsilon, delta, log_target, parameters), upper, tolerance


def _first_bracket(search: _Search, upper: float) -> Bracket:
    """[max(epsilon, 1e-6), upper] with log delta at its ends (-inf at the lower: eps0 <= epsilon gives
    delta = 0, not evaluated); raises when ``upper`` meets the target, or nothing does (epsilon = 0)."""
    accountant, epsilon, delta = search.accountant, search.epsilon, search.delta
    log_high = search.log_delta_at(upper)
    if log_high <= search.log_target:
        raise ValueError(
            f"every `epsilon_local` up to `upper` = {upper!r} meets (epsilon, delta) = ({epsilon!r}, {delta!r}) "
            f"for {accountant!r}; raise `upper` to search further."
        )
    if epsilon <= 0 and not search.log_delta_at(_SMALLEST) <= search.log_target:
        raise ValueError(
            f"no `epsilon_local` in [{_SMALLEST:g}, {upper!r}] meets (epsilon, delta) = ({epsilon!r}, {delta!r}) "
            f"for {accountant!r}; got delta > target even at epsilon_local = {_SMALLEST:g}."
        )
    # eps0 = epsilon is (epsilon, 0)-DP whatever the accountant says: never return less
    return Bracket(min(max(epsilon, _SMALLEST), upper), upper, -math.inf, log_high)


def _lower_first_bracket(search: _Search, lower: str, upper: float, tolerance: float) -> Bracket | None:
    """A start bracket from a cheap LOWER bound (``lower``, e.g. ``worst-case-lower``): its own calibration
    (to ``tolerance`` / 8) gives an eps0 where the lower bound already exceeds the target, so every valid upper
    bound does too (lower <= true worst case <= upper): a certified failing end, with the lower bound's log
    delta there (used only to place the next step). Below it the searched accountant is evaluated at
    ``tolerance``, 2 ``tolerance``, 4 ... below the failing end until a value meets the target (or eps0 reaches
    ``epsilon``, which always meets it). ``None`` when the lower bound meets the target even at ``upper``
    (then the plain search decides, from the accountant's own value at ``upper``)."""
    if accountant_class(lower).kind is not BoundKind.LOWER:
        raise ValueError(
            f"`lower` must be a lower-bound accountant (its failures are failures of every upper "
            f"bound); got {lower!r} ({accountant_class(lower).kind.value})."
        )
    try:
        cheap = calibrate_epsilon_local_traced(
            lower,
            epsilon=search.epsilon,
            delta=search.delta,
            upper=upper,
            tolerance=tolerance / 8.0,
            **search.parameters,
        )
    except ValueError:
        return None
    high, value_high = cheap.epsilon_local_fails, cheap.log_delta_fails
    floor, step = max(search.epsilon, _SMALLEST), tolerance
    while high - step > floor:
        search.check_budget(floor, high)
        value = search.log_delta_at(high - step)
        if value <= search.log_target:
            return Bracket(high - step, high, value, value_high)
        high, value_high, step = high - step, value, 2.0 * step
    return Bracket(floor, high, -math.inf, value_high)


def calibrate_epsilon_local_traced(
    accountant: str,
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    n_x0: int | None = None,
    upper: float = 30.0,
    tolerance: float = 1e-6,
    method: str = "illinois",
    lower: str | None = None,
    **options,
) -> EpsilonLocalCalibration:
    """:func:`calibrate_epsilon_local` with the final bracket and the evaluation count.

    Args:
        accountant: registry name of the accountant whose delta must meet the target.
        n_users: number of users n.
        k: domain size.
        epsilon: the target epsilon, >= 0.
        delta: the target delta, in [0, 1].
        n_x0: other users on x0, for accountants that need it (else None).
        upper: the largest eps0 searched; it must not itself meet the target.
        tolerance: absolute width of the final bracket around the crossing.
        method: ``"illinois"`` (default) or ``"bisection"`` (the former method, for comparison and
            benchmarks); both return a bracket of width at most ``tolerance`` around the same crossing.
        lower: optional lower-bound accountant whose cheap calibration brackets the search first. The
            answer is still the searched accountant's: it meets the target by that accountant's own value,
            and eps0 + ``tolerance`` does not (by that accountant, or because the lower bound already
            exceeds the target there: then ``log_delta_fails`` is the lower bound's value). The eps0 found
            may differ from the plain search's by up to ``tolerance``; ``evaluations`` counts the searched
            accountant's only.
        **options: passed to the accountant (e.g. ``direction="both"``); ``randomizer=`` a randomizer
            class (:class:`~shuffledp.accounting.randomizers.Randomizer`) builds it at each eps0 tried
            (``from_parameters(epsilon_local=eps0, k=k)``) and hands the accountant that randomizer.

    Returns:
        An :class:`EpsilonLocalCalibration`: ``epsilon_local`` (meets the target), ``epsilon_local_fails``
        (at most ``tolerance`` above; does not), log delta at both, and the number of evaluations.

    Raises:
        ValueError: a parameter is out of range, no eps0 >= 1e-6 meets the target (only possible at
            epsilon = 0), or even ``upper`` meets it (no largest value exists below ``upper``).
    """
    search, upper, tolerance = _checked_search(
        accountant,
        n_users=n_users,
        k=k,
        epsilon=epsilon,
        delta=delta,
        n_x0=n_x0,
        upper=upper,
        tolerance=tolerance,
        method=method,
        options=options,
    )
    log_target = search.log_target
    if (
        search.delta == 0 or search.delta >= 1 or method == "bisection"
    ):  # no finite transform: plain bisection
        log_log_target = None
    else:
        log_log_target = math.log(-log_target)
    start = None
    if lower is not None and log_log_target is not None and search.epsilon > 0:
        start = _lower_first_bracket(search, lower, upper, tolerance)
    if start is None:
        start = _first_bracket(search, upper)

    def evaluate(epsilon_local: float) -> tuple[bool, float, float]:
        """(fails the target, h, log delta); h = +-inf without a transform (bisection)."""
        log_middle = search.log_delta_at(epsilon_local)
        h_middle = (
            _transformed(log_middle, log_log_target)
            if log_log_target is not None
            else (-math.inf if log_middle <= log_target else math.inf)
        )
        return not log_middle <= log_target, h_middle, log_middle

    h_high = _transformed(start.value_high, log_log_target) if log_log_target is not None else math.inf
    h_low = _transformed(start.value_low, log_log_target) if log_log_target is not None else -math.inf
    # "yes" = fails the target: low meets it, and is returned (it errs towards privacy)
    end = illinois(evaluate, start, h_low, h_high, tolerance=tolerance, before_step=search.check_budget)
    return EpsilonLocalCalibration(
        epsilon_local=end.low,
        epsilon_local_fails=end.high,
        log_delta=end.value_low,
        log_delta_fails=end.value_high,
        evaluations=search.evaluations,
    )


def calibrate_epsilon_local(accountant: str, **arguments) -> float:
    """The largest local eps0 whose shuffled k-RR meets a target (epsilon, delta) by ``accountant``.

    Largest eps0 in [epsilon, ``upper``] with delta(``epsilon``; eps0) <= ``delta``, to within ``tolerance``
    (absolute): the returned eps0 meets the target and eps0 + ``tolerance`` does not. Never returns less
    than ``epsilon`` (eps0 <= epsilon is (epsilon, 0)-DP).

    Args:
        accountant: registry name of the accountant, e.g. ``"worst-case-upper"``.
        **arguments: as :func:`calibrate_epsilon_local_traced`: ``n_users``, ``k``, ``epsilon``, ``delta``
            (required), ``n_x0`` (None), ``upper`` (30.0), ``tolerance`` (1e-6); other options go to the
            accountant (e.g. ``direction=Direction.BOTH``); ``randomizer=`` a randomizer class is built at
            each eps0 tried (the shuffled randomizer is then that class's, not k-RR).

    Returns:
        The calibrated eps0.

    Raises:
        ValueError: a parameter is out of range, no eps0 >= 1e-6 meets the target (only possible for
            epsilon = 0), or even ``upper`` meets it (then no largest value exists below ``upper``; raise
            ``upper``).
    """
    return calibrate_epsilon_local_traced(accountant, **arguments).epsilon_local
