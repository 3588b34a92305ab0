"""Shuffle or trust a curator? Every mechanism at one (n, k, epsilon, delta) on one dataset.

:func:`compare` answers, for a target (epsilon, delta): collect through a shuffler with k-RR, or trust
a curator who adds noise, and what does each cost in accuracy? (Any local randomizer: ``randomizer=``, a
:class:`~shuffledp.accounting.randomizers.Randomizer` class; its sampler, estimator and exact error are its own.) One row per mechanism (see
:data:`MECHANISMS`) with the expected TV distance between the estimated and the true distribution and
the expected squared L2 error:

* **exact** rows (:mod:`shuffledp.experiments.exact_error`): ``shuffle+inv`` (unprojected matrix
  inversion), ``gaussian`` (analytic Gaussian, the package's log-space calibration, exact at every delta),
  ``geometric`` (two-sided geometric at pure epsilon), ``local-krr+inv`` (k-RR at eps0 = epsilon, no
  shuffler: the floor of comparison);
* **monte-carlo** rows, ``draws`` draws of the count-level samplers, standard error beside the mean:
  ``shuffle+inv+proj`` (INV projected onto the simplex), ``shuffle+ibu`` (IBU's limit, the maximum-
  likelihood estimate :func:`shuffledp.estimators.krr_maximum_likelihood`), ``gaussian+proj``,
  ``geometric+proj``.

The shuffled rows use the largest eps0 certified by the tightest valid upper bound (``worst-case-upper``,
calibration ``upper``) and again the eps0 allowed by the lower bound on the worst case
(``worst-case-lower``, calibration ``lower``: no analysis can justify more), both from
:func:`shuffledp.accounting.calibrate.calibrate_epsilon_local` with its default tolerance. Only the
valid (``upper``) rows compete for the overall winner. The paper's own question -- shuffle+INV with
projection against the Gaussian with projection -- is answered apart (:func:`verdict`): the ratio of
their expected TVs and whether the winner is *certain* (the same at both eps0, and the two means more
than :data:`CERTAIN_STANDARD_ERRORS` combined standard errors apart at both).

Randomness: each simulated mechanism draws from ``job_rng(seed, "compare", n, k, epsilon, delta,
data, "shuffle" | "gaussian" | "geometric")``, so a row depends only on the seed and its identity. The
shuffled rows of both calibrations start from the same stream (common random numbers: the difference
between the two eps0 is not drowned in independent noise).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shuffledp._random import job_rng
from shuffledp._validation import check_choice, check_integer, check_probability, check_real
from shuffledp.accounting import accountant_class
from shuffledp.accounting.calibrate import calibrate_epsilon_local
from shuffledp.accounting.randomizers import KRR, Randomizer, randomizer_class
from shuffledp.estimators import invert, maximum_likelihood, project_to_simplex
from shuffledp.experiments.exact_error import gaussian_expected_error, geometric_expected_error
from shuffledp.mechanisms import (
    NEIGHBOURING_SENSITIVITY,
    analytic_gaussian_sigma,
    gaussian_histogram,
    geometric_alpha,
    geometric_histogram,
    l1_sensitivity_for,
    sample_shuffled_counts,
    sensitivity_for,
)
from shuffledp.metrics import total_variation

__all__ = [
    "MECHANISMS",
    "CALIBRATIONS",
    "GENERIC_UPPER",
    "LOCAL_OTHER",
    "calibrations_for",
    "CERTAIN_STANDARD_ERRORS",
    "Comparison",
    "largest_remainder",
    "dataset_counts",
    "calibrate",
    "central_parameters",
    "exact_rows",
    "simulated_rows",
    "verdict",
    "compare",
]

MECHANISMS = (
    "shuffle+inv",
    "shuffle+inv+proj",
    "shuffle+ibu",
    "gaussian",
    "gaussian+proj",
    "geometric",
    "geometric+proj",
    "local-krr+inv",
)
#: the local row of a randomizer other than k-RR (its own estimate, no shuffler)
LOCAL_OTHER = "local+inv"
#: calibration name -> accountant: the tightest valid upper bound, then the lower bound on the worst case
CALIBRATIONS = {"upper": "worst-case-upper", "lower": "worst-case-lower"}
#: the upper bound that calibrates a randomizer the accountants of :data:`CALIBRATIONS` do not accept: the
#: generic clones pair, valid for every eps0-LDP randomizer (Feldman, McMillan, Talwar 2021)
GENERIC_UPPER = "feldman-numerical"
#: a simulated verdict is certain only when the two means are more than this many standard errors apart
CERTAIN_STANDARD_ERRORS = 3.0
#: the pair of the paper's question: shuffle+INV with projection against the Gaussian with projection
SHUFFLE, GAUSSIAN = "shuffle+inv+proj", "gaussian+proj"
#: most (draw, cell) values simulated at once
_CHUNK_VALUES = 4_000_000


@dataclass(frozen=True)
class Comparison:
    """Rows (one dict per mechanism and calibration) and the verdict dict of :func:`compare`."""

    rows: list
    verdict: dict
    data: str

    def to_json(self) -> list:
        """The JSON form: the rows, then one object with ``winner`` and ``shuffle_vs_gaussian``."""
        return [*self.rows, self.verdict]


# --- the dataset -------------------------------------------------------------------------------


def largest_remainder(weights, n_users: int) -> np.ndarray:
    """Integer counts summing to ``n_users``, proportional to ``weights`` (Hamilton's largest remainder;
    ties go to the lower index)."""
    weights = np.asarray(weights, dtype=float)
    shares = n_users * weights / weights.sum()
    counts = np.floor(shares).astype(np.int64)
    missing = int(n_users - counts.sum())
    order = np.argsort(-(shares - counts), kind="stable")
    counts[order[:missing]] += 1
    return counts


def _is_number(text) -> bool:
    try:
        float(text)
    except (TypeError, ValueError):
        return False
    return True


def _read_counts_csv(path: Path) -> np.ndarray:
    import pandas as pd

    frame = pd.read_csv(path)
    if frame.shape[1] == 1 and _is_number(frame.columns[0]):  # one column of counts without a header line
        frame = pd.read_csv(path, header=None)
    if "count" in frame.columns:
        column = frame["count"]
    elif frame.shape[1] == 1:
        column = frame.iloc[:, 0]
    else:
        raise ValueError(
            f"`--data` CSV must have a `count` column or a single column; got columns "
            f"{', '.join(map(str, frame.columns))} in {path}."
        )
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        raise ValueError(
            f"`--data` CSV counts must be non-negative numbers; got {column.iloc[int(np.argmax(bad))]!r} "
            f"in {path}."
        )
    return values


def dataset_counts(data: str, *, n_users: int, k: int) -> np.ndarray:
    """The true histogram of n users on k cells: ``uniform``; ``zipf:S`` (cell j has probability
    proportional to j^-S, S >= 0); or a CSV of k counts (a ``count`` column, or one column), scaled to n.
    Counts are rounded by largest remainder to sum to n (a CSV summing to n is used as it is)."""
    n_users = check_integer(n_users, "n", low=1)
    k = check_integer(k, "k", low=2)
    if data == "uniform":
        weights = np.ones(k)
    elif data.startswith("zipf:"):
        try:
            exponent = float(data.removeprefix("zipf:"))
        except ValueError:
            exponent = math.nan
        if not (math.isfinite(exponent) and exponent >= 0):
            raise ValueError(f"`--data` zipf exponent S must be a number in [0, inf); got {data!r}.")
        weights = np.arange(1, k + 1, dtype=float) ** -exponent
    else:
        path = Path(data)
        if not path.is_file():
            raise ValueError(
                f"`--data` must be uniform, zipf:S (S >= 0) or the path of a CSV of counts; got {data!r}."
            )
        weights = _read_counts_csv(path)
        if weights.size != k:
            raise ValueError(
                f"`--data` CSV must hold k = {k} counts (one per cell); got {weights.size} in {path}."
            )
        if weights.sum() <= 0:
            raise ValueError(f"`--data` CSV counts must have a positive total; got 0 in {path}.")
    return largest_remainder(weights, n_users)


# --- calibration and rows ----------------------------------------------------------------------


def calibrations_for(randomizer: type[Randomizer] = KRR) -> dict[str, str]:
    """Calibration name -> accountant for the randomizer class ``randomizer``: those of :data:`CALIBRATIONS`
    that accept it (``Accountant.randomizers``); a class the upper one does not accept is calibrated by
    :data:`GENERIC_UPPER` alone (no lower bound: none is known for it).

    Args:
        randomizer: a :class:`~shuffledp.accounting.randomizers.Randomizer` subclass (k-RR by default).

    Returns:
        e.g. ``{"upper": "worst-case-upper", "lower": "worst-case-lower"}`` for k-RR.
    """
    chosen = {
        name: accountant
        for name, accountant in CALIBRATIONS.items()
        if issubclass(randomizer, accountant_class(accountant).randomizers)
    }
    return chosen if "upper" in chosen else {"upper": GENERIC_UPPER}


def calibrate(
    *, n_users: int, k: int, epsilon: float, delta: float, randomizer: type[Randomizer] = KRR
) -> dict[str, float]:
    """eps0 of each calibration of :func:`calibrations_for` ``randomizer`` (``calibrate_epsilon_local``, default
    tolerance; the generic upper bound depends on (eps0, n) only, so it is evaluated at k-RR's setting).

    Args:
        n_users: users; k: domain size; epsilon, delta: the target; randomizer: the randomizer class.

    Returns:
        calibration name -> eps0.
    """
    return {
        name: calibrate_epsilon_local(accountant, n_users=n_users, k=k, epsilon=epsilon, delta=delta)
        for name, accountant in calibrations_for(randomizer).items()
    }


def _row(
    mechanism: str,
    calibration: str,
    method: str,
    tv: float | None,
    l1_half_se: float,
    squared_l2: float,
    squared_l2_se: float,
    *,
    epsilon_local=None,
    sigma=None,
    alpha=None,
) -> dict:
    return {
        "mechanism": mechanism,
        "calibration": calibration,
        "epsilon_local": epsilon_local,
        "sigma": sigma,
        "geometric_alpha": alpha,
        "l1_half": tv,
        "l1_half_se": l1_half_se,
        "squared_l2": squared_l2,
        "squared_l2_se": squared_l2_se,
        "method": method,
    }


def central_parameters(
    *, epsilon: float, delta: float, neighbouring: str = "replace-one"
) -> dict[str, float]:
    """The one-round parameters of the mechanisms without a shuffler: the analytic Gaussian's ``sigma``, the
    geometric's ``geometric_epsilon`` (pure epsilon; alpha = exp(-it / L1 sensitivity)) and local k-RR's
    ``local_epsilon`` (= epsilon). :mod:`shuffledp.experiments.compare_rounds` passes its own for T rounds."""
    sigma = analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity_for(neighbouring))
    return {"sigma": sigma, "geometric_epsilon": epsilon, "local_epsilon": epsilon}


def exact_rows(
    counts,
    *,
    epsilon: float,
    delta: float,
    epsilon_local: Mapping[str, float],
    neighbouring: str = "replace-one",
    parameters: Mapping[str, float] | None = None,
    randomizer: type[Randomizer] = KRR,
) -> list[dict]:
    """The exact rows: shuffle+inv at each calibration, gaussian, geometric, local-krr+inv (eps0 = epsilon);
    ``parameters`` (as :func:`central_parameters`, its default) sets the Gaussian, geometric and local ones.
    ``randomizer`` (a class, k-RR by default) is built at each eps0 with ``from_parameters``; its rows are
    exact where its ``expected_error`` gives the TV (else :func:`simulated_rows` gives them by Monte Carlo)."""
    counts = np.asarray(counts, dtype=np.int64)
    n_users, k = int(counts.sum()), counts.size
    if parameters is None:
        parameters = central_parameters(epsilon=epsilon, delta=delta, neighbouring=neighbouring)
    rows = []
    for calibration, value in epsilon_local.items():
        error = _local(randomizer, value, k).expected_error(counts)
        if error.l1_half is None:
            continue
        rows.append(
            _row(
                "shuffle+inv",
                calibration,
                "exact",
                error.l1_half,
                0.0,
                error.squared_l2,
                0.0,
                epsilon_local=value,
            )
        )
    sigma = parameters["sigma"]
    error = gaussian_expected_error(k=k, n_users=n_users, sigma=sigma)
    rows.append(_row("gaussian", "none", "exact", error.l1_half, 0.0, error.squared_l2, 0.0, sigma=sigma))
    alpha = geometric_alpha(
        epsilon=parameters["geometric_epsilon"], sensitivity=l1_sensitivity_for(neighbouring)
    )
    error = geometric_expected_error(k=k, n_users=n_users, alpha=alpha)
    rows.append(_row("geometric", "none", "exact", error.l1_half, 0.0, error.squared_l2, 0.0, alpha=alpha))
    local = parameters["local_epsilon"]
    error = _local(randomizer, local, k).expected_error(counts)
    if error.l1_half is not None:
        rows.append(
            _row(
                _local_row(randomizer),
                "none",
                "exact",
                error.l1_half,
                0.0,
                error.squared_l2,
                0.0,
                epsilon_local=local,
            )
        )
    return rows


def _local(randomizer: type[Randomizer], epsilon_local: float, k: int) -> Randomizer:
    """The randomizer of class ``randomizer`` at ``epsilon_local`` over k values."""
    built = randomizer.from_parameters(epsilon_local=epsilon_local, k=k)
    if built.k is not None and built.k != k:
        raise ValueError(f"`k` must be {built.k} for randomizer {randomizer.name!r}; got {k}.")
    return built


def _check_simulated(local: Randomizer) -> None:
    """Refuse, in one line, a randomizer that can be neither sampled nor estimated here (no finite channel, and
    not its own ``sample_counts``)."""
    if local.channel is None and type(local).sample_counts is Randomizer.sample_counts:
        raise ValueError(
            f"`randomizer` must sample its reports as counts for compare (a finite channel, or its own "
            f"sample_counts, estimate and expected_error); got {local.key!r} ({local.name})."
        )


def _local_row(randomizer: type[Randomizer]) -> str:
    """The local (unshuffled) row's name: ``local-krr+inv`` for k-RR, ``local+inv`` for another randomizer."""
    return "local-krr+inv" if issubclass(randomizer, KRR) else LOCAL_OTHER


def _summary(values: np.ndarray) -> tuple[float, float]:
    mean = float(values.mean())
    se = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else math.nan
    return mean, se


def _simulate(
    draw, estimators: Mapping, truth: np.ndarray, draws: int
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per estimator: TV and squared L2 of each draw; ``draw(size)`` samples noisy counts, drawn in chunks."""
    chunk = max(1, _CHUNK_VALUES // truth.size)
    tv: dict[str, list] = {name: [] for name in estimators}
    l2: dict[str, list] = {name: [] for name in estimators}
    for start in range(0, draws, chunk):
        noisy = draw(min(chunk, draws - start))
        for name, estimator in estimators.items():
            estimate = estimator(noisy)
            tv[name].append(total_variation(estimate, truth))
            l2[name].append(np.sum((estimate - truth) ** 2, axis=-1))
    return {name: (np.concatenate(tv[name]), np.concatenate(l2[name])) for name in estimators}


def simulated_rows(
    counts,
    *,
    epsilon: float,
    delta: float,
    epsilon_local: Mapping[str, float],
    draws: int,
    seed: int,
    data: str,
    neighbouring: str = "replace-one",
    parameters: Mapping[str, float] | None = None,
    identity: tuple = (),
    randomizer: type[Randomizer] = KRR,
) -> list[dict]:
    """The Monte-Carlo rows: shuffle+inv+proj and shuffle+ibu at each calibration, gaussian+proj,
    geometric+proj; ``draws`` draws each from the count-level samplers (module docstring for the streams;
    ``identity`` is appended to each stream's identity). ``parameters`` and ``randomizer`` as in
    :func:`exact_rows`; the rows :func:`exact_rows` cannot give exactly (a randomizer without an exact TV:
    shuffle+inv, and the local row from the stream ``"local"``) are added here, and shuffle+ibu only for a
    randomizer with a maximum-likelihood estimate (k-RR, or a finite channel)."""
    counts = np.asarray(counts, dtype=np.int64)
    n_users, k = int(counts.sum()), counts.size
    truth = counts / n_users
    identity = ("compare", n_users, k, epsilon, delta, data, *identity)
    if parameters is None:
        parameters = central_parameters(epsilon=epsilon, delta=delta, neighbouring=neighbouring)
    rows = []

    def add(mechanism, calibration, results, **extra):
        tv, l1_half_se = _summary(results[0])
        l2, l2_se = _summary(results[1])
        rows.append(_row(mechanism, calibration, "monte-carlo", tv, l1_half_se, l2, l2_se, **extra))

    for calibration, value in epsilon_local.items():
        rng = job_rng(seed, *identity, "shuffle")  # the same stream at both eps0: common random numbers
        local = _local(randomizer, value, k)
        results = _simulate(
            lambda size, local=local, rng=rng: sample_shuffled_counts(
                counts, randomizer=local, rng=rng, size=size
            ),
            _shuffle_estimators(local, counts),
            truth,
            draws,
        )
        for mechanism in results:
            add(mechanism, calibration, results[mechanism], epsilon_local=value)
    local = _local(randomizer, parameters["local_epsilon"], k)
    if local.expected_error(counts).l1_half is None:
        rng = job_rng(seed, *identity, "local")
        results = _simulate(
            lambda size: sample_shuffled_counts(counts, randomizer=local, rng=rng, size=size),
            {LOCAL_OTHER: local.estimate},
            truth,
            draws,
        )
        add(LOCAL_OTHER, "none", results[LOCAL_OTHER], epsilon_local=local.epsilon_local)
    sigma = parameters["sigma"]
    rng = job_rng(seed, *identity, "gaussian")
    results = _simulate(
        lambda size: gaussian_histogram(counts, sigma=sigma, rng=rng, size=size) / n_users,
        {"gaussian+proj": project_to_simplex},
        truth,
        draws,
    )
    add("gaussian+proj", "none", results["gaussian+proj"], sigma=sigma)
    l1, geometric_epsilon = l1_sensitivity_for(neighbouring), parameters["geometric_epsilon"]
    rng = job_rng(seed, *identity, "geometric")
    results = _simulate(
        lambda size: (
            geometric_histogram(counts, epsilon=geometric_epsilon, sensitivity=l1, rng=rng, size=size)
            / n_users
        ),
        {"geometric+proj": project_to_simplex},
        truth,
        draws,
    )
    add(
        "geometric+proj",
        "none",
        results["geometric+proj"],
        alpha=geometric_alpha(epsilon=geometric_epsilon, sensitivity=l1),
    )
    return rows


# --- verdict -----------------------------------------------------------------------------------


def _shuffle_estimators(local: Randomizer, counts) -> dict:
    """The shuffled rows' estimators of :func:`simulated_rows`, in row order."""
    estimators: dict[str, Callable[[np.ndarray], np.ndarray]] = {}
    if local.expected_error(counts).l1_half is None:
        estimators["shuffle+inv"] = local.estimate
    estimators["shuffle+inv+proj"] = lambda h: project_to_simplex(invert(h, randomizer=local))
    if isinstance(local, KRR) or local.channel is not None:
        estimators["shuffle+ibu"] = lambda h: maximum_likelihood(h, randomizer=local)
    return estimators


def _find(rows, mechanism: str, calibration: str) -> dict:
    return next(row for row in rows if row["mechanism"] == mechanism and row["calibration"] == calibration)


def verdict(rows: list[dict]) -> dict:
    """Overall winner (smallest expected TV among the valid rows: calibration ``upper`` or none) and the
    paper's pair, shuffle+inv+proj against gaussian+proj: winner and ratio at the ``upper`` eps0, and
    ``certain`` when the winner is the same at both eps0 and the means are more than
    :data:`CERTAIN_STANDARD_ERRORS` combined standard errors apart at both (exact rows have SE 0)."""
    valid = [row for row in rows if row["calibration"] in ("upper", "none")]
    best = min(valid, key=lambda row: row["l1_half"])
    gaussian = _find(rows, GAUSSIAN, "none")
    pair = {}
    for calibration in [name for name in CALIBRATIONS if any(row["calibration"] == name for row in rows)]:
        shuffle = _find(rows, SHUFFLE, calibration)
        spread = math.hypot(shuffle["l1_half_se"], gaussian["l1_half_se"])
        separation = abs(shuffle["l1_half"] - gaussian["l1_half"]) / spread if spread > 0 else math.inf
        pair[calibration] = (
            SHUFFLE if shuffle["l1_half"] < gaussian["l1_half"] else GAUSSIAN,
            separation,
            shuffle["l1_half"] / gaussian["l1_half"],
        )
    winner, separation, ratio = pair["upper"]
    lower = pair.get(
        "lower", (None, math.inf, None)
    )  # no lower-bound eps0 (T rounds): the upper one alone decides
    certain = (lower[0] is None or winner == lower[0]) and min(separation, lower[1]) > CERTAIN_STANDARD_ERRORS
    return {
        "winner": best["mechanism"],
        "winner_l1_half": best["l1_half"],
        "shuffle_vs_gaussian": {
            "winner": winner,
            "ratio": ratio,
            "certain": bool(certain),
            "standard_errors_apart": separation,
            "winner_lower": lower[0],
            "ratio_lower": lower[2],
            "standard_errors_apart_lower": lower[1] if lower[0] is not None else None,
        },
    }


_ORDER = {name: rank for rank, name in enumerate((*MECHANISMS, LOCAL_OTHER))}


def compare(
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    data: str = "uniform",
    draws: int = 200,
    seed: int = 0,
    neighbouring: str = "replace-one",
    epsilon_local: Mapping[str, float] | None = None,
    randomizer: type[Randomizer] | str = KRR,
) -> Comparison:
    """Every mechanism of :data:`MECHANISMS` at (epsilon, delta) on ``data`` (see :func:`dataset_counts`),
    exact where it can be, ``draws`` Monte-Carlo draws otherwise; ``epsilon_local`` (upper, lower) may be
    passed to skip the calibration (module docstring).

    Args:
        n_users, k, epsilon, delta: the setting and the target; data, draws, seed, neighbouring: as above.
        epsilon_local: calibration name -> eps0 (None: :func:`calibrate`).
        randomizer: the local randomizer's class, or its registered key (k-RR by default), built at each eps0 by
            ``from_parameters``; calibrated by the accountants of :func:`calibrations_for` it.

    Returns:
        :class:`Comparison`.

    Raises:
        ValueError: a parameter out of range (one line naming it).
    """
    n_users = check_integer(n_users, "n", low=1)
    k = check_integer(k, "k", low=2)
    epsilon = check_real(epsilon, "eps", low=0.0, low_open=True, high_open=True)
    delta = check_probability(delta, "delta")
    check_choice(neighbouring, "neighbouring", NEIGHBOURING_SENSITIVITY)
    draws = check_integer(draws, "draws", low=2)
    seed = check_integer(seed, "seed", low=0)
    if isinstance(randomizer, str):
        randomizer = randomizer_class(randomizer)
    _check_simulated(_local(randomizer, epsilon, k))
    counts = dataset_counts(data, n_users=n_users, k=k)
    if epsilon_local is None:
        epsilon_local = calibrate(n_users=n_users, k=k, epsilon=epsilon, delta=delta, randomizer=randomizer)
    rows = exact_rows(
        counts,
        epsilon=epsilon,
        delta=delta,
        epsilon_local=epsilon_local,
        neighbouring=neighbouring,
        randomizer=randomizer,
    )
    rows += simulated_rows(
        counts,
        epsilon=epsilon,
        delta=delta,
        epsilon_local=epsilon_local,
        draws=draws,
        seed=seed,
        data=data,
        neighbouring=neighbouring,
        randomizer=randomizer,
    )
    rows.sort(key=lambda row: (row["calibration"] == "lower", _ORDER[row["mechanism"]]))
    return Comparison(rows=rows, verdict=verdict(rows), data=data)
