"""Shuffle or trust a curator, for a collection repeated over T rounds.

:func:`compare_rounds` answers :func:`shuffledp.experiments.compare.compare`'s question for T rounds
against ONE total (epsilon, delta), in the papers' convention (Girgis et al. 2021, Koskela et al. 2023):
``n_users`` is the population, each round a uniformly random subset of exactly m = q n users reports
(``subsample`` q; q = 1: everyone, every round). Each mechanism is calibrated to the total with its
tightest *valid* composition, on the same neighbouring relation (replace-one unless ``neighbouring``
says add-remove) and the same subsampling (Zhu, Dong & Wang 2022, Prop. 30: if (P, Q) dominates one
round, (q P + (1 - q) Q, Q) and (Q, q P + (1 - q) Q) dominate the subsampled round):

* **shuffle** (k-RR through a shuffler): the largest eps0 whose composed ``weak-adversary`` PLD
  (pessimistic, :func:`shuffledp.accounting.composition.compose`; an upper bound for every dataset) gives
  epsilon_T(delta) <= epsilon, or, where larger, the largest eps0 whose composed ``worst-case-upper`` (the pair
  dominating its certified profile, docs/composing-a-profile.md) meets it: the tighter of the two guarantees
  (:func:`shuffle_epsilon_local_tighter`; the verdict's ``shuffle_accountant`` names which). The profile's pair
  is searched only where a search over datasets runs (else it is the weak adversary's value) and for at most
  :data:`PROFILE_MAX_PER_ROUND` users per round (each step builds a profile: about 100 searches);
* **gaussian**: q = 1, the exact answer: T Gaussians of sigma on the same query are one Gaussian of
  sigma / sqrt(T), so sigma = sqrt(T) x the analytic one-round sigma; q < 1, the smallest sigma whose
  dp_accounting Gaussian PLD (``from_gaussian_mechanism(sampling_prob=q)``: its REMOVE / ADD pair is the
  mixture above with P, Q the Gaussians one L2 sensitivity apart) composed T times meets the target;
* **geometric** (two-sided geometric = discrete Laplace on every cell): its pair is finite and exact --
  each changed cell's loss is +-eps_cell, replace-one changes two cells (eps_cell = eps_g / 2, L1
  sensitivity 2), add-remove one -- so its PLD is built from those points, subsampled as above, losses
  rounded up to the grid, and composed T times as dp_accounting composes (our dense PLD);
* **local k-RR**: no shuffler, no amplification by sampling (the server sees who reports); k-RR's own
  exact pair (loss eps_l on the user's value, -eps_l on the other's, 0 elsewhere) composed T times.

Every calibration keeps the parameter that *meets* the target (it errs towards privacy), and never goes
below the pure-DP floor: a pure eps_r per round, subsampled at q, is log(1 + q (e^eps_r - 1))-DP, so T
rounds are (epsilon, 0)-DP when eps_r <= log(1 + (e^(epsilon / T) - 1) / q) (basic composition; at q = 1,
eps_r <= epsilon / T). Shuffled k-RR with eps0 <= eps_r is eps_r-DP per round (post-processing of eps0-LDP
reports), so an eps0 below that floor would contradict it; a discretised PLD can say otherwise, the floor
cannot. The search (:func:`_largest_meeting`) is Illinois from :mod:`shuffledp.accounting.numerics.search`
on the composed epsilon; each step builds the round's PLD once and composes it by one T-fold self
convolution (never T convolutions), and the composed accountant of the final answer is the one searched.
Where rounds are subsampled, the shuffle search first runs on a grid :data:`COARSE_FACTOR` x coarser (a
starting point only, :func:`_largest_meeting`): the answer is still a point of the calibration's own grid.

Errors (per round and of the average over T rounds, the data not changing between rounds). Each round's
true histogram is the data's at m users (:func:`~shuffledp.experiments.compare.dataset_counts` with
n = m); per-round rows are :func:`~shuffledp.experiments.compare.exact_rows` and
:func:`~shuffledp.experiments.compare.simulated_rows` at the calibrated parameters. The average of the T
unbiased, independent per-round estimates is reported as ``average_l1_half`` / ``average_squared_l2``:

* squared L2, exact for every unprojected estimator: the per-round value / T;
* TV, exact: shuffle+inv and local-krr+inv (the sum of T k-RR histograms of the same counts is the k-RR
  histogram of T x the counts, and INV is linear), gaussian (the average noise is Gaussian of sigma /
  sqrt(T)); geometric: Monte Carlo of the average noise (a sum of T two-sided geometrics is a difference
  of two negative binomials), with its standard error;
* projected and IBU rows: per round only (``average_*`` left empty).

``compositions`` = 1 with ``subsample`` = 1 is today's one-round comparison, returned as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from shuffledp._random import job_rng
from shuffledp._validation import check_choice, check_integer, check_probability, check_real
from shuffledp.accounting.composition import DEFAULT_INTERVAL, MAX_COMPOSITIONS, compose
from shuffledp.accounting.numerics.dense_pld import DensePmf, Pld
from shuffledp.accounting.numerics.pld_epsilon import epsilon_for_delta as pld_epsilon_for_delta
from shuffledp.accounting.numerics.search import Bracket, illinois
from shuffledp.accounting.params import users_per_round
from shuffledp.accounting.randomizers import KRR
from shuffledp.experiments.compare import (
    MECHANISMS,
    Comparison,
    compare,
    dataset_counts,
    exact_rows,
    simulated_rows,
    verdict,
)
from shuffledp.experiments.exact_error import gaussian_expected_error
from shuffledp.experiments.rounds_guess import search_from_guess, shuffle_guess
from shuffledp.mechanisms import (
    NEIGHBOURING_SENSITIVITY,
    analytic_gaussian_sigma,
    l1_sensitivity_for,
    sensitivity_for,
)
from shuffledp.metrics import total_variation

__all__ = [
    "SHUFFLE_ACCOUNTANT",
    "RoundsSetting",
    "loss_grid",
    "pure_floor",
    "shuffle_epsilon_local",
    "shuffle_epsilon_local_tighter",
    "SHUFFLE_PROFILE_ACCOUNTANT",
    "PROFILE_MAX_PER_ROUND",
    "gaussian_sigma",
    "geometric_epsilon",
    "local_krr_epsilon",
    "calibrate_rounds",
    "protocol_monte_carlo",
    "compare_rounds",
    "rounds_baselines",
    "rounds_grid_job",
    "rounds_verdicts",
]

#: the composable upper bound of the shuffled rows (a guarantee for every dataset)
SHUFFLE_ACCOUNTANT = "weak-adversary"
#: the accountant whose profile's pair is composed beside the weak adversary's PLD (the tighter is kept)
SHUFFLE_PROFILE_ACCOUNTANT = "worst-case-upper"
#: most users per round, by k, for which the profile's pair is searched (cost: one profile, about 130
#: worst-case-upper evaluations, per calibration step; measured at eps0 = 1: k = 2, 1000 users 1.8 CPU s,
#: 10^4 users ~135 CPU s; k = 3, 200 users (the exact search) over 400 s; other k not measured): absent k, none
PROFILE_MAX_PER_ROUND = {2: 1000}
#: largest eps0 searched (the composition module's limit)
_MAX_EPSILON_LOCAL = 50.0
#: relative tolerance of every calibrated parameter (the answer meets the target; 1 + this does not)
_TOLERANCE = 1e-4
_MAX_EVALUATIONS = 60
#: the subsampled shuffle calibration's first search runs on a grid this many times the calibration's
#: (a guess only: the fine search starts from its answer; the composed PLD's length, and so the FFT's
#: cost, scales with 1 / grid)
COARSE_FACTOR = 10.0
#: relative tolerance of that coarse search (its answer is a starting point only)
_COARSE_TOLERANCE = 1e-3


@dataclass(frozen=True)
class RoundsSetting:
    """A checked T-round target: population, k, total (epsilon, delta), T, q and m = q n users per round."""

    n_users: int
    k: int
    epsilon: float
    delta: float
    compositions: int
    subsample: float
    neighbouring: str = "replace-one"

    def __post_init__(self):
        object.__setattr__(self, "n_users", check_integer(self.n_users, "n", low=1))
        object.__setattr__(self, "k", check_integer(self.k, "k", low=2))
        object.__setattr__(
            self, "epsilon", check_real(self.epsilon, "eps", low=0.0, low_open=True, high_open=True)
        )
        object.__setattr__(self, "delta", check_probability(self.delta, "delta"))
        object.__setattr__(
            self,
            "compositions",
            check_integer(self.compositions, "compositions", low=1, high=MAX_COMPOSITIONS),
        )
        object.__setattr__(
            self, "subsample", check_real(self.subsample, "subsample", low=0.0, high=1.0, low_open=True)
        )
        check_choice(self.neighbouring, "neighbouring", NEIGHBOURING_SENSITIVITY)
        users_per_round(self.n_users, self.subsample)  # q n a whole number >= 1, else one line

    @property
    def per_round(self) -> int:
        return users_per_round(self.n_users, self.subsample)


def loss_grid(compositions: int) -> float:
    """The PLD grid width of a T-round calibration: 10^-3 / T within [10^-5, 10^-4] (rounding every loss up
    moves the composed epsilon up by less than T x the width: at most 10^-3 up to T = 100, 10^-2 at T = 1000;
    the first search stage uses 10 x it)."""
    return min(1e-4, max(DEFAULT_INTERVAL, 1e-3 / compositions))


def pure_floor(epsilon: float, compositions: int, subsample: float) -> float:
    """The largest pure per-round epsilon whose T subsampled rounds are (epsilon, 0)-DP by basic composition:
    log(1 + (e^(epsilon / T) - 1) / q) (module docstring); epsilon / T at q = 1."""
    return math.log1p(math.expm1(epsilon / compositions) / subsample)


def _grow_and_close(
    evaluate,
    low: float,
    high: float,
    *,
    upper: float,
    factor: float,
    name: str,
    epsilon: float,
    h_low: float = -math.inf,
) -> float:
    """From ``low`` (meets; ``h_low`` its composed epsilon minus the target, -inf if not evaluated), move
    ``high`` up (``high`` = ``low`` + ``factor`` x (``high`` - ``low``)) while it meets, then Illinois to
    :data:`_TOLERANCE` x the grown ``low``; returns the end that met (or ``low``)."""
    fails, h_high, value_high = evaluate(high)
    while not fails:
        if high >= upper:
            raise ValueError(
                f"`{name}` must be bounded by the target: every {name} up to {upper!r} meets the "
                f"target epsilon; got epsilon = {epsilon!r}."
            )
        low, h_low, high = high, h_high, min(low + factor * (high - low), upper)
        fails, h_high, value_high = evaluate(high)
    return illinois(
        evaluate, Bracket(low, high, math.nan, value_high), h_low, h_high, tolerance=_TOLERANCE * low
    ).low


def _coarse_guess(
    evaluate, guess: tuple[float, float], *, floor: float, upper: float, name: str, epsilon: float
) -> tuple[float, float]:
    """Where the fine search starts: ``guess`` ((x, slope)) searched on the coarse grid (``evaluate``, whose
    target is the shifted one of :func:`_largest_meeting`) to :data:`_COARSE_TOLERANCE`; returns (its answer,
    the secant slope of the nearest coarse evaluations on either side that are at least
    :data:`_COARSE_TOLERANCE` x ``epsilon`` from the target -- the guess's slope where there are none). A guess
    only: what the calibration returns is the fine search's. Where the coarse search fails (every x up to
    ``upper`` meets the coarse target) the guess is returned as it was."""
    seen: list[tuple[float, float]] = []

    def recording(x: float):
        fails, h, value = evaluate(x)
        if math.isfinite(h):
            seen.append((x, h))
        return fails, h, value

    try:
        found = search_from_guess(
            recording,
            *guess,
            floor=floor,
            upper=upper,
            tolerance=_COARSE_TOLERANCE,
            name=name,
            epsilon=epsilon,
        )
    except ValueError:
        return guess
    spread = _COARSE_TOLERANCE * epsilon
    below = [(x, h) for x, h in seen if x <= found and h <= -spread]
    above = [(x, h) for x, h in seen if x > found and h >= spread]
    slope = guess[1]
    if below and above:
        (x0, h0), (x1, h1) = max(below), min(above)
        slope = (h1 - h0) / (x1 - x0)
    return found, slope


def _largest_meeting(
    composed_epsilon,
    *,
    epsilon: float,
    floor: float,
    upper: float,
    name: str,
    interval: float,
    guess: tuple[float, float] | None = None,
    coarse_shift: float | None = None,
) -> float:
    """Largest x in [floor, upper] with ``composed_epsilon(x, interval)`` <= ``epsilon``.

    ``floor`` meets the target without being evaluated (pure DP). First stage on a grid 10 x ``interval``
    (cheap; its PLDs are pessimistic too, so what meets there meets): a bracket grown from 2 x ``floor``
    by factors of 4 while the target is met, closed by Illinois on the composed epsilon minus the target
    to :data:`_TOLERANCE` relative. Then the answer is evaluated on ``interval`` itself; if that leaves
    more than :data:`_TOLERANCE` x epsilon unused, the search goes on there (1 % steps, doubling, then
    Illinois). With ``guess`` ((x, slope), :func:`~shuffledp.experiments.rounds_guess.shuffle_guess`) the
    search runs on ``interval`` alone from there instead (:func:`~shuffledp.experiments.rounds_guess.search_from_guess`);
    with ``coarse_shift`` too, that guess is first replaced by the answer of the same search on the grid
    :data:`COARSE_FACTOR` x ``interval`` for the target ``epsilon`` + ``coarse_shift`` (:func:`_coarse_guess`):
    rounding every loss up to a grid moves each round's losses up by half a bin on average, so T rounds' composed
    epsilon by about T x (:data:`COARSE_FACTOR` - 1) x ``interval`` / 2 more on the coarse grid than on the
    fine one -- the shift that puts the coarse answer next to the fine one.
    The returned end is ``floor`` or a point that met the target. Raises when ``upper`` meets it too."""
    count = [0]

    def evaluator(grid: float, target: float = epsilon):
        def evaluate(x: float):
            count[0] += 1
            if count[0] > _MAX_EVALUATIONS:  # pragma: no cover - a non-monotone composed epsilon
                raise RuntimeError(
                    f"calibration of {name} did not converge in {_MAX_EVALUATIONS} evaluations"
                )
            value = composed_epsilon(x, grid)
            return value > target, value - target, value

        return evaluate

    if guess is not None and coarse_shift is not None:
        guess = _coarse_guess(
            evaluator(COARSE_FACTOR * interval, epsilon + coarse_shift),
            guess,
            floor=floor,
            upper=upper,
            name=name,
            epsilon=epsilon,
        )
    if guess is not None:
        return search_from_guess(
            evaluator(interval),
            *guess,
            floor=floor,
            upper=upper,
            tolerance=_TOLERANCE,
            name=name,
            epsilon=epsilon,
        )
    coarse = _grow_and_close(
        evaluator(10.0 * interval),
        floor,
        min(2.0 * floor, upper),
        upper=upper,
        factor=4.0,
        name=name,
        epsilon=epsilon,
    )
    if coarse >= upper or coarse == floor:
        return coarse
    fine = evaluator(interval)
    fails, h_coarse, _ = fine(coarse)
    if fails or -h_coarse <= _TOLERANCE * epsilon:  # the coarse answer is already within the tolerance
        return coarse
    return _grow_and_close(
        fine,
        coarse,
        min(coarse * 1.01, upper),
        upper=upper,
        factor=2.0,
        name=name,
        epsilon=epsilon,
        h_low=h_coarse,
    )


def _composed_points_epsilon(
    loss,
    p_mass,
    q_mass,
    *,
    compositions: int,
    subsample: float,
    delta: float,
    interval: float,
    symmetric: bool,
) -> float:
    """epsilon(delta) of T rounds of the finite pair with losses ``loss`` (exact, finite) and masses
    ``p_mass`` under P, ``q_mass`` under Q, subsampled at q (module docstring), losses rounded up."""
    loss, p_mass, q_mass = (np.asarray(a, dtype=float) for a in (loss, p_mass, q_mass))
    q = subsample
    remove_loss = np.log1p(q * np.expm1(loss)) if q < 1.0 else loss
    remove = DensePmf.from_bins(
        np.ceil(remove_loss / interval), q * p_mass + (1.0 - q) * q_mass, 0.0, interval, True
    )
    if symmetric and q == 1.0:
        pld = Pld(remove)
    else:
        add = DensePmf.from_bins(np.ceil(-remove_loss / interval), q_mass, 0.0, interval, True)
        pld = Pld(remove, add)
    if compositions > 1:
        pld = pld.self_compose(compositions)
    return float(pld_epsilon_for_delta(pld, delta))


def _geometric_pair(geometric_epsilon: float, neighbouring: str):
    """Losses and masses of the geometric's exact pair at per-round pure epsilon (module docstring)."""
    cells = int(l1_sensitivity_for(neighbouring))  # replace-one: two cells change by 1; add-remove: one
    a = geometric_epsilon / cells
    alpha = math.exp(-a)
    p = 1.0 / (1.0 + alpha)  # P(noise <= 0): the cell's loss is +a there, -a elsewhere
    j = np.arange(cells + 1)  # number of cells whose loss is -a
    from scipy.special import comb

    p_mass = comb(cells, j) * p ** (cells - j) * (1.0 - p) ** j
    loss = a * (cells - 2 * j)
    return loss, p_mass, p_mass * np.exp(-loss)


def _krr_pair(epsilon_local: float, k: int):
    """k-RR's exact pair for two different values: loss eps_l, -eps_l, and 0 on the other k - 2 outputs."""
    total = math.exp(epsilon_local) + k - 1
    p_mass = np.array([math.exp(epsilon_local), 1.0, k - 2.0]) / total
    loss = np.array([epsilon_local, -epsilon_local, 0.0])
    return loss, p_mass, p_mass * np.exp(-loss)


def _composed_epsilon(name: str, setting: RoundsSetting):
    """The composed epsilon of accountant ``name``'s T rounds at the setting's delta, as a function of (eps0,
    the PLD's loss grid): what the eps0 searches below call."""

    def composed(epsilon_local: float, grid: float) -> float:
        return compose(
            name,
            epsilon_local=epsilon_local,
            n_users=setting.n_users,
            k=setting.k,
            compositions=setting.compositions,
            subsample=setting.subsample,
            value_discretization_interval=grid,
        ).epsilon_for_delta(setting.delta)

    return composed


def shuffle_epsilon_local(setting: RoundsSetting, *, interval: float | None = None) -> float:
    """Largest eps0 whose T composed, subsampled ``weak-adversary`` rounds meet the total target, never
    below :func:`pure_floor` (module docstring)."""
    s = setting
    interval = loss_grid(s.compositions) if interval is None else interval

    composed = _composed_epsilon(SHUFFLE_ACCOUNTANT, s)

    floor = pure_floor(s.epsilon, s.compositions, s.subsample)
    if floor >= _MAX_EPSILON_LOCAL:
        return _MAX_EPSILON_LOCAL
    guess = shuffle_guess(
        epsilon=s.epsilon,
        delta=s.delta,
        per_round=s.per_round,
        k=s.k,
        compositions=s.compositions,
        subsample=s.subsample,
        low=floor,
        high=_MAX_EPSILON_LOCAL,
    )
    return _largest_meeting(
        composed,
        epsilon=s.epsilon,
        floor=floor,
        upper=_MAX_EPSILON_LOCAL,
        name="eps0",
        interval=interval,
        guess=guess,
        coarse_shift=0.5 * s.compositions * (COARSE_FACTOR - 1.0) * interval if s.subsample < 1.0 else None,
    )


def shuffle_epsilon_local_tighter(
    setting: RoundsSetting, *, interval: float | None = None, max_per_round: int | None = None
) -> tuple[float, float]:
    """(eps0 of the tighter guarantee, eps0 of ``weak-adversary``): the largest eps0 that meets the total target by
    either composed PLD (module docstring). The profile's pair is tried only where ``worst-case-upper`` searches
    over datasets and for at most ``max_per_round`` users per round; its search starts from the weak adversary's
    eps0, which meets by it too (its value is at most the weak adversary's at every epsilon, up to the hull).

    Args:
        setting: the rounds.
        interval: the PLD's loss grid (default :func:`loss_grid` of T).
        max_per_round: the most users per round for which the profile's pair is searched (default
            :data:`PROFILE_MAX_PER_ROUND` at the setting's k; 0 where k is not listed).

    Returns:
        The two epsilons; the first is at least the second.
    """
    from shuffledp.accounting import get_accountant

    s = setting
    weak = shuffle_epsilon_local(s, interval=interval)
    if max_per_round is None:
        max_per_round = PROFILE_MAX_PER_ROUND.get(s.k, 0)
    if s.per_round > max_per_round:
        return weak, weak
    accountant = get_accountant(SHUFFLE_PROFILE_ACCOUNTANT, epsilon_local=weak, n_users=s.per_round, k=s.k)
    if not getattr(accountant, "searched", False):
        return weak, weak
    interval = loss_grid(s.compositions) if interval is None else interval

    composed = _composed_epsilon(SHUFFLE_PROFILE_ACCOUNTANT, s)

    if composed(weak, interval) > s.epsilon:  # the hull between grid points lost what the search gained
        return weak, weak
    if weak >= _MAX_EPSILON_LOCAL:
        return weak, weak
    ours = _largest_meeting(
        composed,
        epsilon=s.epsilon,
        floor=weak,
        upper=_MAX_EPSILON_LOCAL,
        name="eps0 (worst-case-upper profile)",
        interval=interval,
        guess=(1.1 * weak, s.epsilon / max(weak, 1e-12)),
    )
    return max(ours, weak), weak


def gaussian_sigma(setting: RoundsSetting, *, interval: float | None = None) -> float:
    """Smallest per-round sigma meeting the total target (module docstring): exact at q = 1, else the
    dp_accounting PLD searched on 1 / sigma from the unsampled answer (valid: sampling only helps)."""
    s = setting
    interval = loss_grid(s.compositions) if interval is None else interval
    sensitivity = sensitivity_for(s.neighbouring)
    unsampled = math.sqrt(s.compositions) * analytic_gaussian_sigma(
        epsilon=s.epsilon, delta=s.delta, sensitivity=sensitivity
    )
    if s.subsample == 1.0:
        return unsampled

    # here, not at the top: see _LAZY_IMPORTS in shuffledp.accounting.numerics.dense_pld
    from dp_accounting.pld import privacy_loss_distribution as dp_pld

    def composed(inverse_sigma: float, grid: float) -> float:
        pld = dp_pld.from_gaussian_mechanism(
            1.0 / inverse_sigma,
            sensitivity=sensitivity,
            value_discretization_interval=grid,
            sampling_prob=s.subsample,
        )
        return pld.self_compose(s.compositions).get_epsilon_for_delta(s.delta)

    floor = 1.0 / unsampled  # sampling only helps: the unsampled sigma meets the target
    return 1.0 / _largest_meeting(
        composed, epsilon=s.epsilon, floor=floor, upper=1e6 * floor, name="1/sigma", interval=interval
    )


def geometric_epsilon(setting: RoundsSetting, *, interval: float | None = None) -> float:
    """Largest per-round pure epsilon of the geometric (alpha = exp(-it / L1)) meeting the total target."""
    s = setting
    interval = loss_grid(s.compositions) if interval is None else interval

    def composed(value: float, grid: float) -> float:
        return _composed_points_epsilon(
            *_geometric_pair(value, s.neighbouring),
            compositions=s.compositions,
            subsample=s.subsample,
            delta=s.delta,
            interval=grid,
            symmetric=True,
        )

    floor = pure_floor(s.epsilon, s.compositions, s.subsample)
    return _largest_meeting(
        composed,
        epsilon=s.epsilon,
        floor=floor,
        upper=_MAX_EPSILON_LOCAL,
        name="geometric epsilon",
        interval=interval,
    )


def local_krr_epsilon(setting: RoundsSetting, *, interval: float | None = None) -> float:
    """Largest per-round eps_l of local k-RR whose T rounds (no amplification) meet the total target."""
    s = setting
    interval = loss_grid(s.compositions) if interval is None else interval

    def composed(value: float, grid: float) -> float:
        return _composed_points_epsilon(
            *_krr_pair(value, s.k),
            compositions=s.compositions,
            subsample=1.0,
            delta=s.delta,
            interval=grid,
            symmetric=True,
        )

    floor = s.epsilon / s.compositions
    return _largest_meeting(
        composed,
        epsilon=s.epsilon,
        floor=floor,
        upper=_MAX_EPSILON_LOCAL,
        name="local epsilon",
        interval=interval,
    )


def calibrate_rounds(setting: RoundsSetting, *, interval: float | None = None) -> dict[str, float]:
    """Every per-round parameter: ``epsilon_local`` (shuffle eps0), ``sigma``, ``geometric_epsilon``,
    ``local_epsilon`` (module docstring)."""
    tighter, weak = shuffle_epsilon_local_tighter(setting, interval=interval)
    return {
        "epsilon_local": tighter,
        "epsilon_local_weak": weak,
        "sigma": gaussian_sigma(setting, interval=interval),
        "geometric_epsilon": geometric_epsilon(setting, interval=interval),
        "local_epsilon": local_krr_epsilon(setting, interval=interval),
    }


def _average_geometric(counts, *, alpha: float, compositions: int, draws: int, rng) -> tuple[float, float]:
    """Monte Carlo E TV of the average of T geometric releases: noise sum = NB(T, 1 - alpha) - NB(T, 1 - alpha)."""
    counts = np.asarray(counts, dtype=np.int64)
    n_users = int(counts.sum())
    shape = (draws, counts.size)
    noise = rng.negative_binomial(compositions, 1.0 - alpha, size=shape) - rng.negative_binomial(
        compositions, 1.0 - alpha, size=shape
    )
    tv = total_variation(counts / n_users + noise / (compositions * n_users), counts / n_users)
    return float(tv.mean()), float(tv.std(ddof=1) / math.sqrt(draws))


def _add_averages(rows: list[dict], counts, setting: RoundsSetting, *, draws: int, rng) -> None:
    """The error of the average over T rounds (module docstring), in place; empty for projected rows."""
    counts = np.asarray(counts, dtype=np.int64)
    T, m, k = setting.compositions, int(counts.sum()), counts.size
    for row in rows:
        average = {
            "average_l1_half": None,
            "average_l1_half_se": None,
            "average_squared_l2": None,
            "average_method": None,
        }
        mechanism = row["mechanism"]
        if mechanism in ("shuffle+inv", "local-krr+inv"):
            tv, se, method = (
                KRR(epsilon_local=row["epsilon_local"], k=k).expected_error(counts * T).l1_half,
                0.0,
                "exact",
            )
        elif mechanism == "gaussian":
            tv, se, method = (
                gaussian_expected_error(k=k, n_users=m, sigma=row["sigma"] / math.sqrt(T)).l1_half,
                0.0,
                "exact",
            )
        elif mechanism == "geometric":
            tv, se = _average_geometric(
                counts, alpha=row["geometric_alpha"], compositions=T, draws=draws, rng=rng
            )
            method = "exact L2, monte-carlo TV"
        else:
            row.update(average)
            continue
        row.update(
            {
                "average_l1_half": tv,
                "average_l1_half_se": se,
                "average_squared_l2": row["squared_l2"] / T,
                "average_method": method,
            }
        )


def protocol_monte_carlo(
    counts, parameters: dict, *, compositions: int, draws: int, rng, neighbouring: str = "replace-one"
) -> dict[str, tuple[float, float]]:
    """Monte Carlo of the whole T-round protocol on counts (not users), the data not changing: every round
    drawn on its own (k-RR histogram of ``counts`` at eps0 and at the local eps; Gaussian and geometric noise
    on ``counts``), the T unprojected estimates averaged. Returns {mechanism: (mean TV of the average, its
    standard error)} for shuffle+inv, gaussian, geometric and local-krr+inv: an independent check of the
    exact averages of :func:`compare_rounds` (which uses the T-rounds-as-one identities instead)."""
    from shuffledp.estimators import invert
    from shuffledp.mechanisms import gaussian_histogram, geometric_histogram, sample_shuffled_counts

    counts = np.asarray(counts, dtype=np.int64)
    truth = counts / counts.sum()
    sums = {
        name: np.zeros((draws, counts.size))
        for name in ("shuffle+inv", "gaussian", "geometric", "local-krr+inv")
    }
    l1 = l1_sensitivity_for(neighbouring)
    shuffled = KRR(epsilon_local=parameters["epsilon_local"], k=counts.size)
    local = KRR(epsilon_local=parameters["local_epsilon"], k=counts.size)
    for _ in range(compositions):
        sums["shuffle+inv"] += sample_shuffled_counts(counts, randomizer=shuffled, rng=rng, size=draws)
        sums["local-krr+inv"] += sample_shuffled_counts(counts, randomizer=local, rng=rng, size=draws)
        sums["gaussian"] += gaussian_histogram(counts, sigma=parameters["sigma"], rng=rng, size=draws)
        sums["geometric"] += geometric_histogram(
            counts, epsilon=parameters["geometric_epsilon"], sensitivity=l1, rng=rng, size=draws
        )
    estimates = {
        "shuffle+inv": invert(sums["shuffle+inv"], randomizer=shuffled),
        "local-krr+inv": invert(sums["local-krr+inv"], randomizer=local),
        "gaussian": sums["gaussian"] / (compositions * counts.sum()),
        "geometric": sums["geometric"] / (compositions * counts.sum()),
    }
    out = {}
    for name, estimate in estimates.items():
        tv = total_variation(estimate, truth)
        out[name] = (float(tv.mean()), float(tv.std(ddof=1) / math.sqrt(draws)))
    return out


def compare_rounds(
    *,
    n_users: int,
    k: int,
    epsilon: float,
    delta: float,
    compositions: int = 1,
    subsample: float = 1.0,
    data: str = "uniform",
    draws: int = 200,
    seed: int = 0,
    neighbouring: str = "replace-one",
    parameters: dict | None = None,
    interval: float | None = None,
) -> Comparison:
    """Every mechanism of :func:`~shuffledp.experiments.compare.compare` for T = ``compositions`` rounds of
    q n users (q = ``subsample``) against one total (epsilon, delta) (module docstring); T = 1 and q = 1 is
    ``compare`` itself. ``parameters`` (as :func:`calibrate_rounds`) skips the calibration. The verdict's
    ``rounds`` gives T, q, m and the parameters."""
    setting = RoundsSetting(n_users, k, epsilon, delta, compositions, subsample, neighbouring)
    if setting.compositions == 1 and setting.subsample == 1.0 and parameters is None:
        return compare(
            n_users=n_users,
            k=k,
            epsilon=epsilon,
            delta=delta,
            data=data,
            draws=draws,
            seed=seed,
            neighbouring=neighbouring,
        )
    draws = check_integer(draws, "draws", low=2)
    seed = check_integer(seed, "seed", low=0)
    counts = dataset_counts(data, n_users=setting.per_round, k=setting.k)
    if parameters is None:
        parameters = calibrate_rounds(setting, interval=interval)
    shuffle = {"upper": parameters["epsilon_local"]}
    rows = exact_rows(
        counts,
        epsilon=epsilon,
        delta=delta,
        epsilon_local=shuffle,
        neighbouring=neighbouring,
        parameters=parameters,
    )
    rows += simulated_rows(
        counts,
        epsilon=epsilon,
        delta=delta,
        epsilon_local=shuffle,
        draws=draws,
        seed=seed,
        data=data,
        neighbouring=neighbouring,
        parameters=parameters,
        identity=("rounds", setting.compositions, setting.subsample),
    )
    rows.sort(key=lambda row: MECHANISMS.index(row["mechanism"]))
    _add_averages(
        rows,
        counts,
        setting,
        draws=draws,
        rng=job_rng(
            seed,
            "compare-rounds",
            n_users,
            k,
            epsilon,
            delta,
            data,
            setting.compositions,
            setting.subsample,
            "geometric-average",
        ),
    )
    result = verdict(rows)
    result["rounds"] = {
        "compositions": setting.compositions,
        "subsample": setting.subsample,
        "population": setting.n_users,
        "per_round": setting.per_round,
        "shuffle_accountant": shuffle_source(parameters),
        **{key: float(v) for key, v in parameters.items()},
    }
    averaged = [row for row in rows if row["average_l1_half"] is not None]
    best = min(averaged, key=lambda row: row["average_l1_half"])
    result["average_winner"] = best["mechanism"]
    result["average_winner_l1_half"] = best["average_l1_half"]
    return Comparison(rows=rows, verdict=result, data=data)


def shuffle_source(parameters: dict) -> str:
    """The accountant whose composed guarantee gave the shuffle eps0 of :func:`calibrate_rounds`'s ``parameters``."""
    if parameters.get("epsilon_local", 0.0) > parameters.get("epsilon_local_weak", math.inf):
        return SHUFFLE_PROFILE_ACCOUNTANT
    return SHUFFLE_ACCOUNTANT


# --- the composed phase diagram (workflow: utility.phase_diagram_rounds) ------------------------------


def _grid_point(
    setting: RoundsSetting, counts, parameters: dict[str, float], *, seed: int, draws: int
) -> dict:
    """One (k, T, q, n, epsilon) point at its calibrated ``parameters`` (:func:`calibrate_rounds`'s keys):
    the parameters, the per-round and the averaged exact TVs."""
    rows = exact_rows(
        counts,
        epsilon=setting.epsilon,
        delta=setting.delta,
        epsilon_local={"upper": parameters["epsilon_local"]},
        neighbouring=setting.neighbouring,
        parameters=parameters,
    )
    rng = job_rng(
        seed,
        "phase-diagram-rounds",
        setting.k,
        setting.compositions,
        setting.subsample,
        setting.n_users,
        setting.epsilon,
    )
    _add_averages(rows, counts, setting, draws=draws, rng=rng)
    by = {row["mechanism"]: row for row in rows}
    point = {**parameters, "shuffle_accountant": shuffle_source(parameters)}
    for mechanism, short in (
        ("shuffle+inv", "shuffle"),
        ("gaussian", "gaussian"),
        ("geometric", "geometric"),
        ("local-krr+inv", "local"),
    ):
        point[f"l1_half_{short}"] = by[mechanism]["l1_half"]
        point[f"average_l1_half_{short}"] = by[mechanism]["average_l1_half"]
    point["log_ratio"] = math.log(point["average_l1_half_shuffle"] / point["average_l1_half_gaussian"])
    return point


def _grid_settings(rounds: dict, n_axis, *, k: int, neighbouring: str, compositions=None):
    """The points of :func:`rounds_grid_job` in its order (T, q, n, epsilon), T restricted to ``compositions``
    (None: every T of ``rounds``): pairs (row, setting), setting None where the row carries its ``skipped``
    reason."""
    wanted = None if compositions is None else {int(T) for T in compositions}
    for T in rounds["compositions"]:
        if wanted is not None and int(T) not in wanted:
            continue
        for q in rounds["subsample"]:
            for n_users in n_axis:
                for epsilon in rounds["epsilon"]:
                    row = {
                        "k": int(k),
                        "compositions": int(T),
                        "subsample": float(q),
                        "n_users": int(n_users),
                        "epsilon": float(epsilon),
                        "delta": float(rounds["delta"]),
                        "skipped": "",
                    }
                    try:
                        setting = RoundsSetting(
                            int(n_users),
                            int(k),
                            float(epsilon),
                            float(rounds["delta"]),
                            int(T),
                            float(q),
                            neighbouring,
                        )
                    except ValueError as error:
                        yield {**row, "skipped": str(error)}, None
                        continue
                    if setting.per_round > int(rounds["max_per_round"]):
                        reason = f"q n = {setting.per_round} users per round > max_per_round"
                        yield {**row, "skipped": reason}, None
                        continue
                    yield row, setting


def _baseline_key(compositions, subsample, epsilon) -> tuple[int, float, float]:
    return int(compositions), float(subsample), float(epsilon)


def rounds_baselines(
    rounds: dict, n_axis, *, ks, neighbouring: str = "replace-one", compositions=None
) -> list[dict]:
    """The per-round calibrations of :func:`rounds_grid_job` that depend on neither n nor k -- the Gaussian's
    ``sigma`` (:func:`gaussian_sigma`) and the geometric's ``geometric_epsilon`` (:func:`geometric_epsilon`)
    -- once per (T, q, epsilon) that has a computed point at some k of ``ks`` and n of ``n_axis``, so the
    grid jobs of every k and n read them instead of each calibrating them again (the same functions at the
    same arguments: the same bits).

    Args:
        rounds: ``utility.phase_diagram_rounds`` (``compositions``, ``subsample``, ``epsilon``, ``delta``,
            ``max_per_round``).
        n_axis: the population sizes n of the grid.
        ks: the domain sizes of the grid (only which points are computed depends on them).
        neighbouring: replace-one or add-remove.
        compositions: the T to calibrate (None: every T of ``rounds``).

    Returns:
        One dict per (T, q, epsilon): ``compositions``, ``subsample``, ``epsilon``, ``delta``,
        ``neighbouring``, ``sigma``, ``geometric_epsilon``.

    Raises:
        ValueError: a parameter out of range (one line naming it).
    """
    out: dict[tuple[int, float, float], dict] = {}
    for k in ks:
        for _, setting in _grid_settings(
            rounds, n_axis, k=int(k), neighbouring=neighbouring, compositions=compositions
        ):
            if setting is None:
                continue
            key = _baseline_key(setting.compositions, setting.subsample, setting.epsilon)
            if key not in out:
                out[key] = {
                    "compositions": key[0],
                    "subsample": key[1],
                    "epsilon": key[2],
                    "delta": float(setting.delta),
                    "neighbouring": setting.neighbouring,
                    "sigma": gaussian_sigma(setting),
                    "geometric_epsilon": geometric_epsilon(setting),
                }
    return list(out.values())


def _known_baselines(baselines, rounds: dict, neighbouring: str) -> dict:
    """``baselines`` (:func:`rounds_baselines`' rows) by (T, q, epsilon); refuses rows of another delta or
    neighbouring relation (one line)."""
    known = {}
    for row in baselines or ():
        if float(row["delta"]) != float(rounds["delta"]) or row["neighbouring"] != neighbouring:
            raise ValueError(
                "`baselines` must be calibrated at the grid's delta and neighbouring relation "
                f"({float(rounds['delta'])!r}, {neighbouring!r}); got ({row['delta']!r}, {row['neighbouring']!r})."
            )
        known[_baseline_key(row["compositions"], row["subsample"], row["epsilon"])] = row
    return known


def rounds_grid_job(
    rounds: dict,
    n_axis,
    *,
    k: int,
    seed: int,
    neighbouring: str = "replace-one",
    compositions=None,
    baselines=None,
) -> list[dict]:
    """Every (T, q, n, epsilon) point of ``rounds`` (``utility.phase_diagram_rounds``: ``compositions``,
    ``subsample``, ``epsilon``, ``delta``, ``max_per_round``, ``draws``, ``data``) at this k, n over
    ``n_axis``. A point whose q n is not a whole number >= 1, or above ``max_per_round``, is kept with its
    ``skipped`` reason and no values. ``log_ratio`` = log(average TV shuffle+inv / average TV gaussian).

    Args:
        rounds: ``utility.phase_diagram_rounds``.
        n_axis: the population sizes n.
        k: the domain size.
        seed: the root seed (each point draws from its own stream).
        neighbouring: replace-one or add-remove.
        compositions: the T of this job (a shard of the grid; None: every T). Each point's values do not
            depend on which other points the job computes.
        baselines: :func:`rounds_baselines`' rows, read instead of calibrating the Gaussian and the
            geometric again; a (T, q, epsilon) missing there is calibrated here, once per job, as is local
            k-RR's per-round epsilon (n-free) per (T, epsilon).

    Returns:
        One dict per point, in (T, q, n, epsilon) order.

    Raises:
        ValueError: a parameter out of range, or ``baselines`` of another delta or neighbouring relation.
    """
    known = _known_baselines(baselines, rounds, neighbouring)
    local: dict[tuple[int, float], float] = {}
    out = []
    for row, setting in _grid_settings(
        rounds, n_axis, k=k, neighbouring=neighbouring, compositions=compositions
    ):
        if setting is None:
            out.append(row)
            continue
        parameters = {"epsilon_local": shuffle_epsilon_local(setting)}
        key = _baseline_key(setting.compositions, setting.subsample, setting.epsilon)
        if key not in known:
            known[key] = {"sigma": gaussian_sigma(setting), "geometric_epsilon": geometric_epsilon(setting)}
        parameters["sigma"] = float(known[key]["sigma"])
        parameters["geometric_epsilon"] = float(known[key]["geometric_epsilon"])
        if (setting.compositions, setting.epsilon) not in local:
            local[(setting.compositions, setting.epsilon)] = local_krr_epsilon(setting)
        parameters["local_epsilon"] = local[(setting.compositions, setting.epsilon)]
        counts = dataset_counts(str(rounds["data"]), n_users=setting.per_round, k=int(k))
        row.update(
            per_round=setting.per_round,
            **_grid_point(setting, counts, parameters, seed=seed, draws=int(rounds["draws"])),
        )
        out.append(row)
    return out


def rounds_verdicts(grid) -> list[dict]:
    """Per (k, q, n, epsilon): the winner on the average (shuffle+inv or gaussian) at each T, and the T at
    which it first differs from the winner at the smallest T (None: never)."""
    import pandas as pd

    frame = pd.DataFrame(grid)
    frame = frame[frame["skipped"].isna() | (frame["skipped"].astype(str) == "")].dropna(subset=["log_ratio"])
    out = []
    for (k, q, n_users, epsilon), group in frame.groupby(["k", "subsample", "n_users", "epsilon"], sort=True):
        group = group.sort_values("compositions")
        winners = np.where(group["log_ratio"].to_numpy() < 0, "shuffle", "gaussian")
        changes = [int(T) for T, w in zip(group["compositions"], winners) if w != winners[0]]
        out.append(
            {
                "k": int(k),
                "subsample": float(q),
                "n_users": int(n_users),
                "epsilon": float(epsilon),
                "winners": " ".join(f"T={int(T)}:{w}" for T, w in zip(group["compositions"], winners)),
                "first_winner": str(winners[0]),
                "last_winner": str(winners[-1]),
                "first_change_at": changes[0] if changes else None,
            }
        )
    return out
