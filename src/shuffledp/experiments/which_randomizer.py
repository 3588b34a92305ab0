"""Which randomizer to shuffle? Every shuffled categorical randomizer at one target (epsilon, delta), each at its
own certified eps0, beside the trusted curators.

For each randomizer (every registered one that can be built at the domain size k: k-RR, OUE, SUE, OLH,
Hadamard response, subset selection; binary RR at k = 2) :func:`calibrate_tightest` finds the eps0 that its
**tightest valid upper bound** certifies for the target: among the registered accountants whose kind is
``BoundKind.UPPER``, that accept the randomizer (``randomizers``, and their view's), and that hold for every
dataset (no ``n_x0``), the one whose calibration gives the largest eps0. The accountants are picked from the
registry each time, so a bound added later (a view over a randomizer's output types) joins without a change
here. The answer is never below the target epsilon: eps0 = epsilon is (epsilon, 0)-DP by post-processing.

Which eps0: every answer meets the target by its accountant's own value, and eps0 + tolerance does not. For
k-RR, whose accountants' delta rises with eps0, that makes it the largest certified eps0 (to within the
tolerance). For the other randomizers it is the crossing the search reaches, not always the largest: their
delta by the weak adversary over output types need not rise with eps0 (OLH's hash range g and subset
selection's size s jump with eps0, and the view switches to a grouped bound beyond ``EXACT_CELLS`` count
vectors), so the eps0 that meet the target can form several intervals (docs/decisions/randomizers.md, "The
which-randomizer grid's cost").

Cost: an accountant is calibrated in full only if it can beat the best eps0 found so far -- one evaluation at
that eps0 decides (delta is non-decreasing in eps0, the calibration's own assumption, which holds for k-RR;
for the others see "Which eps0" above);
accountants that bound delta through Renyi moments (``rdp``, the costly ones) are tried last.

Each randomizer's row gives the exact expected half L1 (TV) and squared L2 errors of its unbiased estimate at
that eps0 (``Randomizer.expected_error``; a randomizer without an exact half L1 has ``None`` there), and the
Gaussian and geometric curators' exact rows (:mod:`shuffledp.experiments.exact_error`) are set beside them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from shuffledp._validation import check_choice, check_integer, check_probability, check_real
from shuffledp.accounting import BoundKind, accountant_class, get_accountant, list_accountants
from shuffledp.accounting.calibrate import calibrate_epsilon_local
from shuffledp.accounting.randomizers import KRR, Randomizer, list_randomizers, randomizer_class
from shuffledp.experiments.compare import central_parameters, dataset_counts
from shuffledp.experiments.exact_error import gaussian_expected_error, geometric_expected_error
from shuffledp.mechanisms import NEIGHBOURING_SENSITIVITY, geometric_alpha, l1_sensitivity_for

__all__ = [
    "CALIBRATION_TOLERANCE",
    "TightestCalibration",
    "shuffled_randomizers",
    "upper_accountants",
    "calibrate_tightest",
    "randomizer_rows",
    "curator_rows",
    "RandomizerComparison",
    "compare_randomizers",
]

#: absolute tolerance of each calibration (the eps0 returned meets the target; eps0 + this does not)
CALIBRATION_TOLERANCE = 1e-6
#: errors within this relative distance of the smallest are a tie, won by the first row (k-RR comes first): a
#: randomizer that is k-RR itself (subset selection of size 1) gives k-RR's error up to its last bits
TIE = 1e-9
#: what certifies eps0 = epsilon when no accountant certifies more
POST_PROCESSING = "post-processing (eps0 = eps)"


@dataclass(frozen=True)
class TightestCalibration:
    """The certified eps0 of one randomizer (module docstring, "Which eps0"), the accountant that certifies it,
    and each candidate's own eps0 (None: it could not beat the best found before it, by one evaluation, or it
    refuses the setting, e.g. outside the range of n it sums exactly)."""

    epsilon_local: float
    accountant: str
    candidates: dict


def shuffled_randomizers(k: int) -> list[str]:
    """The registered randomizer keys that can be built at domain size ``k`` (k-RR first, then alphabetical).

    Args:
        k: the domain size (>= 2).

    Returns:
        The keys, e.g. ``["krr", "hadamard", "olh", "oue", "subset", "sue"]`` for k >= 3.
    """
    keys = []
    for key in list_randomizers():
        try:
            built = randomizer_class(key).from_parameters(epsilon_local=1.0, k=k)
        except (TypeError, ValueError):
            continue
        if built.k == k:
            keys.append(key)
    return sorted(keys, key=lambda key: (key != "krr", key))


def _accepts(accountant, randomizer: type[Randomizer]) -> bool:
    view = accountant.view_class
    return issubclass(randomizer, accountant.randomizers) and (
        view is None or issubclass(randomizer, view.randomizers)
    )


def upper_accountants(randomizer: type[Randomizer]) -> list[str]:
    """The registered accountants that give a valid upper bound for ``randomizer`` on every dataset.

    Args:
        randomizer: a :class:`~shuffledp.accounting.randomizers.Randomizer` class.

    Returns:
        Their names: kind ``UPPER``, accepting the class (and their view accepting it), not needing ``n_x0``;
        those bounding delta through Renyi moments last.
    """
    names = []
    for name in list_accountants():
        accountant = accountant_class(name)
        if (
            accountant.kind is BoundKind.UPPER
            and not accountant.needs_n_x0
            and _accepts(accountant, randomizer)
        ):
            names.append(name)
    return sorted(names, key=lambda name: bool(getattr(accountant_class(name), "rdp", False)))


def _randomizer_option(randomizer: type[Randomizer]) -> dict:
    """The calibration's option: k-RR (and binary RR, k-RR at k = 2: the same channel) is built by the accountants
    from (eps0, k) themselves, their own path; another randomizer is handed to them built at each eps0."""
    return {} if issubclass(randomizer, KRR) else {"randomizer": randomizer}


def calibrate_tightest(
    randomizer: type[Randomizer] | str,
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    tolerance: float = CALIBRATION_TOLERANCE,
) -> TightestCalibration:
    """The eps0 that the tightest valid upper bound certifies for ``randomizer`` at the target (module docstring:
    the largest for k-RR, the search's crossing for the others).

    Args:
        randomizer: the randomizer class or its key.
        n_users: users n; k: the domain size; epsilon, delta: the target.
        tolerance: each calibration's absolute tolerance.

    Returns:
        :class:`TightestCalibration` (eps0 >= epsilon always).

    Raises:
        ValueError: a parameter out of range (one line naming it).
    """
    if isinstance(randomizer, str):
        randomizer = randomizer_class(randomizer)
    option = _randomizer_option(randomizer)
    best, best_name = float(epsilon), POST_PROCESSING
    candidates: dict = {}
    log_target = math.log(delta)
    for name in upper_accountants(randomizer):
        try:
            if best > epsilon and not _meets(
                name, best + tolerance, n_users, k, epsilon, log_target, randomizer
            ):
                candidates[name] = (
                    None  # fails just above the best: cannot certify more (delta rises with eps0)
                )
                continue
            value = calibrate_epsilon_local(
                name, n_users=n_users, k=k, epsilon=epsilon, delta=delta, tolerance=tolerance, **option
            )
        except (
            ValueError
        ):  # the accountant refuses this setting (its own range), or even eps0 = 30 meets the target
            candidates[name] = None
            continue
        candidates[name] = value
        if value > best:
            best, best_name = value, name
    return TightestCalibration(best, best_name, candidates)


def _meets(
    name: str, epsilon_local: float, n_users: int, k: int, epsilon: float, log_target: float, randomizer
) -> bool:
    """Whether accountant ``name`` certifies the target at ``epsilon_local``."""
    if issubclass(randomizer, KRR):
        accountant = get_accountant(name, epsilon_local=epsilon_local, n_users=n_users, k=k)
    else:
        built = randomizer.from_parameters(epsilon_local=epsilon_local, k=k)
        accountant = get_accountant(name, randomizer=built, n_users=n_users)
    return float(accountant.log_delta_for_epsilon(epsilon)[0]) <= log_target


def _parameters(randomizer: Randomizer) -> str:
    """The randomizer's own parameters beyond (eps0, k), e.g. ``g=4`` for OLH (empty for none)."""
    extra = {"hash_range": "g", "subset_size": "s", "order": "K"}
    return " ".join(
        f"{short}={getattr(randomizer, field)}"
        for field, short in extra.items()
        if hasattr(randomizer, field)
    )


def randomizer_rows(
    counts,
    *,
    epsilon: float,
    delta: float,
    randomizers: Sequence[str],
    tolerance: float = CALIBRATION_TOLERANCE,
) -> list[dict]:
    """One exact row per randomizer key: its tightest certified eps0, the accountant, and its expected errors.

    Args:
        counts: the true histogram (k cells).
        epsilon, delta: the target.
        randomizers: registered keys.
        tolerance: each calibration's absolute tolerance.

    Returns:
        Dicts with ``randomizer``, ``name``, ``parameters``, ``epsilon_local``, ``accountant``, ``l1_half``
        (None without an exact one), ``squared_l2``, ``method``.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_users, k = int(counts.sum()), counts.size
    rows = []
    for key in randomizers:
        cls = randomizer_class(key)
        calibration = calibrate_tightest(
            cls, n_users=n_users, k=k, epsilon=epsilon, delta=delta, tolerance=tolerance
        )
        built = cls.from_parameters(epsilon_local=calibration.epsilon_local, k=k)
        error = built.expected_error(counts)
        rows.append(
            {
                "randomizer": key,
                "name": cls.name,
                "parameters": _parameters(built),
                "epsilon_local": calibration.epsilon_local,
                "accountant": calibration.accountant,
                "l1_half": error[0],
                "squared_l2": error[1],
                "method": "exact",
            }
        )
    return rows


def curator_rows(
    *, n_users: int, k: int, epsilon: float, delta: float, neighbouring: str = "replace-one"
) -> list[dict]:
    """The Gaussian and geometric curators' exact rows at the target, in the shape of :func:`randomizer_rows`.

    Args:
        n_users, k: the setting; epsilon, delta: the target; neighbouring: replace-one or add-remove.

    Returns:
        Two dicts (``randomizer`` is ``gaussian`` resp. ``geometric``; ``parameters`` names sigma resp. alpha).
    """
    parameters = central_parameters(epsilon=epsilon, delta=delta, neighbouring=neighbouring)
    sigma = parameters["sigma"]
    gaussian = gaussian_expected_error(k=k, n_users=n_users, sigma=sigma)
    alpha = geometric_alpha(
        epsilon=parameters["geometric_epsilon"], sensitivity=l1_sensitivity_for(neighbouring)
    )
    geometric = geometric_expected_error(k=k, n_users=n_users, alpha=alpha)
    common = {"epsilon_local": None, "accountant": "-", "method": "exact"}
    return [
        {
            "randomizer": "gaussian",
            "name": "Gaussian curator",
            "parameters": f"sigma={sigma:.6g}",
            **common,
            "l1_half": gaussian[0],
            "squared_l2": gaussian[1],
        },
        {
            "randomizer": "geometric",
            "name": "geometric curator",
            "parameters": f"alpha={alpha:.6g}",
            **common,
            "l1_half": geometric[0],
            "squared_l2": geometric[1],
        },
    ]


@dataclass(frozen=True)
class RandomizerComparison:
    """The rows of :func:`compare_randomizers` (randomizers, then curators) and its verdict."""

    rows: list
    verdict: dict

    def to_json(self) -> list:
        """The rows, then the verdict object."""
        return [*self.rows, self.verdict]


def compare_randomizers(
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    data: str = "uniform",
    randomizers: Sequence[str] | None = None,
    neighbouring: str = "replace-one",
    tolerance: float = CALIBRATION_TOLERANCE,
) -> RandomizerComparison:
    """Every shuffled randomizer at its tightest certified eps0 beside the curators (module docstring).

    Args:
        n_users, k, epsilon, delta: the setting and the target; data: as :func:`~shuffledp.experiments.compare.dataset_counts`.
        randomizers: registered keys (None: :func:`shuffled_randomizers` of k).
        neighbouring: the curators' neighbouring relation.
        tolerance: each calibration's absolute tolerance.

    Returns:
        :class:`RandomizerComparison`; the verdict names the best shuffled randomizer and the best of all rows
        by expected half L1 (squared L2 where a row has no exact half L1), and whether any shuffled one beats
        the Gaussian curator.

    Raises:
        ValueError: a parameter out of range, or an unknown key (one line naming it).
    """
    n_users = check_integer(n_users, "n", low=1)
    k = check_integer(k, "k", low=2)
    epsilon = check_real(epsilon, "eps", low=0.0, low_open=True, high_open=True)
    delta = check_probability(delta, "delta")
    check_choice(neighbouring, "neighbouring", NEIGHBOURING_SENSITIVITY)
    keys = list(shuffled_randomizers(k) if randomizers is None else randomizers)
    if not keys:
        raise ValueError("`randomizer` must name at least one randomizer; got none.")
    for key in keys:
        built = randomizer_class(key).from_parameters(epsilon_local=epsilon, k=k)
        if built.k != k:
            raise ValueError(f"`k` must be {built.k} for randomizer {key!r}; got {k}.")
    counts = dataset_counts(data, n_users=n_users, k=k)
    shuffled = randomizer_rows(counts, epsilon=epsilon, delta=delta, randomizers=keys, tolerance=tolerance)
    central = curator_rows(n_users=n_users, k=k, epsilon=epsilon, delta=delta, neighbouring=neighbouring)
    return RandomizerComparison(rows=shuffled + central, verdict=_verdict(shuffled, central))


def first_best(values: Sequence[float]) -> int:
    """The index of the first value within :data:`TIE` (relative) of the smallest.

    Args:
        values: the errors, in the rows' order (k-RR first).

    Returns:
        The winner's index: the first near-smallest, so a randomizer equal to k-RR never wins over it.
    """
    smallest = min(values)
    return next(i for i, value in enumerate(values) if value <= smallest * (1.0 + TIE))


def _score(row: dict) -> float:
    return row["l1_half"] if row["l1_half"] is not None else math.sqrt(row["squared_l2"])


def _verdict(shuffled: list[dict], central: list[dict]) -> dict:
    metric = "l1_half" if all(row["l1_half"] is not None for row in shuffled + central) else "squared_l2"
    best_shuffled = shuffled[first_best([row[metric] for row in shuffled])]
    everyone = shuffled + central
    best = everyone[first_best([row[metric] for row in everyone])]
    gaussian = next(row for row in central if row["randomizer"] == "gaussian")
    return {
        "metric": metric,
        "best_shuffled": best_shuffled["randomizer"],
        "best_shuffled_value": best_shuffled[metric],
        "best": best["randomizer"],
        "best_value": best[metric],
        "shuffled_beating_gaussian": [
            row["randomizer"] for row in shuffled if row[metric] < gaussian[metric]
        ],
    }
