"""Mechanisms: the shuffled histogram of a local randomizer, and the central baselines (geometric, Gaussian).

k-randomized response (Kairouz et al. 2016; paper Section III) with local parameter epsilon_0
reports the true value with probability p = e^eps0 / (e^eps0 + k - 1) and each of the other k - 1
values with probability q = 1 / (e^eps0 + k - 1).

The samplers take the randomizer itself (:class:`~shuffledp.accounting.randomizers.Randomizer`, e.g.
``KRR(epsilon_local, k)``), which holds its channel and its own sampler. The shuffled histogram (paper:
M = T o R_kRR) depends only on the true histogram: the users holding value x report a Multinomial(c_x,
row x of the channel) vector, independently across x, and the released histogram is the sum of those k
vectors. :func:`sample_shuffled_histogram` draws exactly that -- O(k^2) work per replicate, whatever the
number of users. :func:`sample_shuffled_counts` draws with the randomizer's own sampler: k-RR's draws the
same law in O(k) through its blanket decomposition (below).

k-RR is a mixture: with probability gamma = k q a user reports a uniform value on all k, otherwise its
own (p = 1 - gamma + gamma / k, q = gamma / k). So the histogram is T + U with T_x ~ Bin(c_x, 1 - gamma)
independent truthful reports and U ~ Multinomial(n - sum T, uniform on k) the blanket.

The classical pure-epsilon central reference is the two-sided geometric mechanism (Ghosh, Roughgarden
& Sundararajan 2009): integer noise with P(Z = z) = (1 - alpha) / (1 + alpha) alpha^|z|,
alpha = e^(-eps / Delta_1), added to every bin of a histogram of L1 sensitivity Delta_1 (2 when one
user's value is replaced, 1 when a user is added or removed), is (eps, 0)-DP. E[Z] = 0,
Var Z = 2 alpha / (1 - alpha)^2, E|Z| = 2 alpha / (1 - alpha^2) (:func:`geometric_moments`).

The central baseline is the analytic Gaussian mechanism of Balle & Wang (2018, Theorem 8): adding
N(0, sigma^2) noise to a query of L2 sensitivity Delta is (eps, delta)-DP iff

    Phi(Delta / (2 sigma) - eps sigma / Delta) - e^eps Phi(-Delta / (2 sigma) - eps sigma / Delta) <= delta.

:func:`analytic_gaussian_sigma` solves this for the smallest sigma in log space (``log_ndtr``), so it
stays exact down to delta = 1e-300. diffprivlib's ``GaussianAnalytic`` (the paper's implementation)
evaluates the normal CDF with ``erf`` in linear space and under-noises once delta falls below about
1e-16; :func:`gaussian_calibration` records both sigmas and says which one is used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from shuffledp._numerics import log_sub
from shuffledp._validation import check_choice, check_integer, check_real
from shuffledp.accounting.randomizers import Randomizer
from shuffledp.accounting.randomizers.counts import check_counts, check_rng, sample_through_channel

__all__ = [
    "NEIGHBOURING_SENSITIVITY",
    "NEIGHBOURING_L1_SENSITIVITY",
    "sample_shuffled_counts",
    "geometric_alpha",
    "geometric_moments",
    "geometric_histogram",
    "l1_sensitivity_for",
    "sample_shuffled_histogram",
    "gaussian_log_delta",
    "analytic_gaussian_sigma",
    "diffprivlib_gaussian_sigma",
    "GaussianCalibration",
    "gaussian_calibration",
    "gaussian_histogram",
    "sensitivity_for",
]

#: L2 sensitivity of a histogram under each neighbouring relation: replacing one user's value moves
#: one unit between two bins (sqrt 2); adding or removing a user changes one bin by one (1).
NEIGHBOURING_SENSITIVITY = {"replace-one": math.sqrt(2.0), "add-remove": 1.0}
#: L1 sensitivity of a histogram under each neighbouring relation (one unit moved between two bins: 2)
NEIGHBOURING_L1_SENSITIVITY = {"replace-one": 2.0, "add-remove": 1.0}

#: relative difference between two sigmas above which they are reported as different
SIGMA_RELATIVE_TOLERANCE = 1e-6
_LOG_SIGMA_TOLERANCE = 1e-13


def _check_randomizer(randomizer) -> Randomizer:
    if not isinstance(randomizer, Randomizer):
        raise TypeError(
            f"`randomizer` must be a Randomizer (shuffledp.accounting.randomizers, e.g. KRR(epsilon_local, k)); "
            f"got {type(randomizer).__name__}."
        )
    return randomizer


def sample_shuffled_histogram(
    counts,
    *,
    randomizer: Randomizer,
    rng: np.random.Generator,
    size: int | None = None,
) -> np.ndarray:
    """The shuffled report counts of a dataset with true histogram ``counts``, through the randomizer's channel.

    For each true value x, the c_x users holding it report Multinomial(c_x, channel[x]); the released
    counts are the sum over x. No per-user work: O(size * k * d).

    Args:
        counts: the true histogram (k = ``randomizer.k`` non-negative integers).
        randomizer: a randomizer with a finite ``channel`` (k-RR: the k x k channel).
        rng: the numpy Generator drawn from.
        size: None for one draw of shape (d,); else ``size`` independent draws, shape (size, d).

    Returns:
        The report counts.

    Raises:
        ValueError: bad ``counts``, ``randomizer`` or ``size``.
        TypeError: ``rng`` is not a numpy Generator.
        NotImplementedError: a randomizer without a finite channel.
    """
    randomizer = _check_randomizer(randomizer)
    counts = check_counts(counts, k=randomizer.k)
    check_rng(rng)
    channel = randomizer.channel
    if channel is None:
        raise NotImplementedError(f"randomizer {randomizer.name!r} has no finite channel to sample through")
    return sample_through_channel(channel, counts, rng=rng, size=size)


def sample_shuffled_counts(
    counts,
    *,
    randomizer: Randomizer,
    rng: np.random.Generator,
    size: int | None = None,
) -> np.ndarray:
    """The shuffled report counts of ``counts``, by the randomizer's own sampler (``randomizer.sample_counts``).

    k-RR draws them through its blanket decomposition in O(k) (see the module docstring): the same law as
    :func:`sample_shuffled_histogram`, another random stream.

    Args:
        counts: the true histogram (k = ``randomizer.k`` non-negative integers).
        randomizer: any :class:`~shuffledp.accounting.randomizers.Randomizer`.
        rng: the numpy Generator drawn from.
        size: None for one draw; else the number of independent draws (a leading axis).

    Returns:
        The report counts, shape (d,) or (size, d).

    Raises:
        ValueError, TypeError: bad ``counts``, ``randomizer``, ``rng`` or ``size``.
    """
    return _check_randomizer(randomizer).sample_counts(counts, rng=rng, size=size)


def geometric_alpha(*, epsilon: float, sensitivity: float) -> float:
    """alpha = exp(-epsilon / sensitivity) of the two-sided geometric mechanism ((epsilon, 0)-DP).

    Args:
        epsilon: the pure-DP epsilon, in (0, inf).
        sensitivity: the query's L1 sensitivity, in (0, inf).

    Returns:
        alpha, in (0, 1).

    Raises:
        ValueError: ``epsilon`` or ``sensitivity`` not in (0, inf).
        TypeError: ``epsilon`` or ``sensitivity`` not a real number.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=True, high_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True, high_open=True)
    return math.exp(-epsilon / sensitivity)


def geometric_moments(alpha: float) -> dict[str, float]:
    """Mean (0), variance 2 alpha / (1 - alpha)^2 and mean absolute value 2 alpha / (1 - alpha^2) of
    two-sided geometric noise with parameter ``alpha`` in (0, 1).

    Args:
        alpha: the noise parameter (:func:`geometric_alpha`), in (0, 1).

    Returns:
        ``{"mean": ..., "variance": ..., "mean_absolute": ...}``.

    Raises:
        ValueError: ``alpha`` not in (0, 1).
        TypeError: ``alpha`` not a real number.
    """
    alpha = check_real(alpha, "alpha", low=0.0, high=1.0, low_open=True, high_open=True)
    return {
        "mean": 0.0,
        "variance": 2.0 * alpha / (1.0 - alpha) ** 2,
        "mean_absolute": 2.0 * alpha / (1.0 - alpha**2),
    }


def geometric_histogram(
    counts, *, epsilon: float, sensitivity: float, rng: np.random.Generator, size: int | None = None
) -> np.ndarray:
    """The central pure-epsilon release: ``counts`` + two-sided geometric noise on every bin.

    The noise is G1 - G2 with G1, G2 ~ Geometric(1 - alpha) independent (their offset cancels),
    alpha = exp(-epsilon / sensitivity), ``sensitivity`` the histogram's L1 sensitivity. Integer
    valued; shape (k,) with ``size=None``, else (size, k).

    Args:
        counts: the true histogram (at least 2 non-negative integers).
        epsilon: the pure-DP epsilon, in (0, inf).
        sensitivity: the histogram's L1 sensitivity (:func:`l1_sensitivity_for`), in (0, inf).
        rng: the numpy Generator drawn from.
        size: None for one release; else the number of independent releases (>= 1, a leading axis).

    Returns:
        The noisy integer counts, shape (k,) or (size, k).

    Raises:
        ValueError: bad ``counts`` (not 1-d, fewer than 2 bins, a negative or fractional entry), ``epsilon``
            or ``sensitivity`` not in (0, inf), or ``size`` < 1.
        TypeError: ``rng`` not a numpy Generator, non-numeric ``counts``, or a non-numeric parameter.
    """
    counts = check_counts(counts)
    alpha = geometric_alpha(epsilon=epsilon, sensitivity=sensitivity)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}.")
    shape = counts.shape if size is None else (check_integer(size, "size", low=1), counts.size)
    return counts + rng.geometric(1.0 - alpha, size=shape) - rng.geometric(1.0 - alpha, size=shape)


def gaussian_log_delta(sigma, *, epsilon: float, sensitivity: float) -> np.ndarray:
    """Natural log of the tight delta(eps) of the Gaussian mechanism N(0, sigma^2) (Balle & Wang Thm 8).

    Vectorised over ``sigma``; exact in log space (``log_ndtr``), so it is accurate for delta down to
    the smallest positive double and below.

    Args:
        sigma: the noise standard deviation(s), scalar or array, > 0.
        epsilon: the epsilon at which delta is read, in [0, inf).
        sensitivity: the query's L2 sensitivity, in (0, inf).

    Returns:
        log delta(epsilon), the shape of ``sigma``.

    Raises:
        ValueError: ``epsilon`` not in [0, inf) or ``sensitivity`` not in (0, inf).
        TypeError: ``epsilon`` or ``sensitivity`` not a real number.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, high_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True, high_open=True)
    sigma = np.asarray(sigma, dtype=float)
    ratio = sensitivity / (2.0 * sigma)
    shift = epsilon * sigma / sensitivity
    return log_sub(log_ndtr(ratio - shift), epsilon + log_ndtr(-ratio - shift))


def analytic_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest sigma for which N(0, sigma^2) noise on a sensitivity-``sensitivity`` query is (eps, delta)-DP.

    Solves Balle & Wang (2018) Theorem 8 with equality for log(sigma), by Brent's method on the
    log-space delta curve (strictly decreasing in sigma). Exact up to a relative 1e-13 in sigma for
    any delta in (0, 1), including delta far below 1e-16 where linear-space CDFs underflow.

    Args:
        epsilon: the target epsilon, in (0, inf).
        delta: the target delta, in (0, 1).
        sensitivity: the query's L2 sensitivity (:func:`sensitivity_for`), in (0, inf).

    Returns:
        The smallest sigma meeting (epsilon, delta).

    Raises:
        ValueError: ``epsilon`` or ``sensitivity`` not in (0, inf), or ``delta`` not in (0, 1).
        TypeError: a parameter that is not a real number.
    """
    epsilon = check_real(epsilon, "epsilon", low=0.0, low_open=True, high_open=True)
    delta = check_real(delta, "delta", low=0.0, high=1.0, low_open=True, high_open=True)
    sensitivity = check_real(sensitivity, "sensitivity", low=0.0, low_open=True, high_open=True)
    log_target = math.log(delta)
    from scipy.optimize import brentq  # here, not at the top: scipy.optimize costs ~0.15 s CPU to import

    def excess(log_sigma: float) -> float:
        return (
            float(gaussian_log_delta(math.exp(log_sigma), epsilon=epsilon, sensitivity=sensitivity))
            - log_target
        )

    # Bracket: delta -> 1 as sigma -> 0 and delta -> 0 as sigma -> inf.
    low = math.log(sensitivity) - 1.0
    while excess(low) < 0:
        low -= 2.0
    high = math.log(sensitivity) + 1.0
    while excess(high) > 0:
        high += 1.0
    return math.exp(brentq(excess, low, high, xtol=_LOG_SIGMA_TOLERANCE, rtol=4 * np.finfo(float).eps))


def diffprivlib_gaussian_sigma(*, epsilon: float, delta: float, sensitivity: float) -> float:
    """sigma chosen by diffprivlib's ``GaussianAnalytic`` (the paper's implementation), for comparison.

    Read through its public ``variance`` method. Known to under-noise for delta below ~1e-16.

    Args:
        epsilon: the target epsilon.
        delta: the target delta.
        sensitivity: the query's L2 sensitivity.

    Returns:
        diffprivlib's sigma (the square root of its variance).

    Raises:
        ValueError: parameters diffprivlib's ``GaussianAnalytic`` refuses (its own message).
    """
    from diffprivlib.mechanisms import GaussianAnalytic

    mechanism = GaussianAnalytic(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    return math.sqrt(mechanism.variance(0.0))


@dataclass(frozen=True)
class GaussianCalibration:
    """Noise scale of the analytic Gaussian at (epsilon, delta), from two independent calibrations.

    ``sigma`` is the one used (always the log-space ``sigma_log_space``, which is exact);
    ``sigma_diffprivlib`` is what diffprivlib's GaussianAnalytic would have used (NaN if it failed);
    ``diffprivlib_differs`` flags a relative difference above ``SIGMA_RELATIVE_TOLERANCE``.
    """

    epsilon: float
    delta: float
    sensitivity: float
    sigma: float
    sigma_log_space: float
    sigma_diffprivlib: float
    diffprivlib_differs: bool


def gaussian_calibration(*, epsilon: float, delta: float, sensitivity: float) -> GaussianCalibration:
    """Calibrate the analytic Gaussian both ways and return both sigmas (the log-space one is used).

    Args:
        epsilon: the target epsilon, in (0, inf).
        delta: the target delta, in (0, 1).
        sensitivity: the query's L2 sensitivity, in (0, inf).

    Returns:
        Both sigmas, the one used (the log-space one) and whether diffprivlib's differs (NaN and
        ``diffprivlib_differs=True`` when diffprivlib refuses the parameters).

    Raises:
        ValueError: ``epsilon`` or ``sensitivity`` not in (0, inf), or ``delta`` not in (0, 1)
            (:func:`analytic_gaussian_sigma`).
        TypeError: a parameter that is not a real number.
    """
    sigma = analytic_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    try:
        sigma_dpl = diffprivlib_gaussian_sigma(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    except (ValueError, ArithmeticError):  # pragma: no cover - diffprivlib rejects some inputs
        sigma_dpl = math.nan
    differs = not math.isfinite(sigma_dpl) or abs(sigma_dpl - sigma) > SIGMA_RELATIVE_TOLERANCE * sigma
    return GaussianCalibration(
        epsilon=float(epsilon),
        delta=float(delta),
        sensitivity=float(sensitivity),
        sigma=sigma,
        sigma_log_space=sigma,
        sigma_diffprivlib=sigma_dpl,
        diffprivlib_differs=bool(differs),
    )


def gaussian_histogram(
    counts, *, sigma: float, rng: np.random.Generator, size: int | None = None
) -> np.ndarray:
    """The central model's release: ``counts`` + independent N(0, sigma^2) noise on every bin.

    Shape (k,) with ``size=None``, else (size, k).

    Args:
        counts: the true histogram (at least 2 non-negative integers).
        sigma: the noise standard deviation, in [0, inf).
        rng: the numpy Generator drawn from.
        size: None for one release; else the number of independent releases (>= 1, a leading axis).

    Returns:
        The noisy (real-valued) counts, shape (k,) or (size, k).

    Raises:
        ValueError: bad ``counts`` (not 1-d, fewer than 2 bins, a negative or fractional entry), ``sigma``
            not in [0, inf), or ``size`` < 1.
        TypeError: ``rng`` not a numpy Generator, non-numeric ``counts``, or a non-numeric parameter.
    """
    counts = check_counts(counts)
    sigma = check_real(sigma, "sigma", low=0.0, high_open=True)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy.random.Generator; got {type(rng).__name__}.")
    shape = counts.shape if size is None else (check_integer(size, "size", low=1), counts.size)
    return counts + rng.normal(0.0, sigma, size=shape)


def sensitivity_for(neighbouring: str) -> float:
    """L2 sensitivity of the histogram query under ``neighbouring`` ("replace-one" or "add-remove").

    Args:
        neighbouring: ``"replace-one"`` or ``"add-remove"``.

    Returns:
        sqrt(2) for replace-one, 1 for add-remove.

    Raises:
        ValueError: ``neighbouring`` is neither.
    """
    check_choice(neighbouring, "neighbouring", NEIGHBOURING_SENSITIVITY)
    return NEIGHBOURING_SENSITIVITY[neighbouring]


def l1_sensitivity_for(neighbouring: str) -> float:
    """L1 sensitivity of the histogram query under ``neighbouring`` (replace-one: 2, add-remove: 1).

    Args:
        neighbouring: ``"replace-one"`` or ``"add-remove"``.

    Returns:
        2 for replace-one, 1 for add-remove.

    Raises:
        ValueError: ``neighbouring`` is neither.
    """
    check_choice(neighbouring, "neighbouring", NEIGHBOURING_L1_SENSITIVITY)
    return NEIGHBOURING_L1_SENSITIVITY[neighbouring]
