"""Koskela, Heikkilä & Honkela's Figure 4 (their Section 5): delta(eps) of shuffled Gaussian noise by
Monte Carlo integration of the d-dimensional hockey-stick divergence, with confidence bands.

The pair (their Section 5): d users hold 0 (dataset X) or one user holds 1 instead (X'); each adds
N(0, sigma^2) noise and the outputs are shuffled. The adversary sees

    Q = N(0, sigma^2 I_d)                          (from X)
    P = (1/d) sum_i N(e_i, sigma^2 I_d)            (from X', e_i the i-th unit vector)

and the likelihood ratio depends on y only through sum_i exp(y_i / sigma^2):

    log L(y) = log p(y)/q(y) = logsumexp(y / sigma^2) - log d - 1 / (2 sigma^2).

``delta_pq`` = H_{e^eps}(P || Q) = E_P[(1 - e^{eps - log L})_+] and ``delta_qp`` = H_{e^eps}(Q || P) =
E_Q[(1 - e^{eps + log L})_+]; ``delta`` is their maximum, the tight delta(eps) *of this pair* (so a
lower bound on the shuffled Gaussian's delta over all neighbouring datasets; the paper takes this pair
"without loss of generality" for datasets whose other elements are equal). Both integrands lie in
[0, 1], so the sample means have bounded variance.

Estimator: exact sampling from Q (z ~ N(0, I_d), y = sigma z) and from P with the same z shifted by e_1
-- permutation invariance of L lets the shift sit on the first coordinate for every sample, which is
how this estimator uses the symmetry the paper points to (the paper integrates on a hypercube
instead). One pass of samples gives every eps: log L is computed once per sample and the integrands
for all eps are accumulated chunk by chunk, in log space until the final ``expm1``.

Bands (per eps): ``delta_low`` / ``delta_high`` are CLT intervals at level ``confidence`` for the
maximum, Bonferroni over the two directions (each direction at 1 - (1 - confidence)/2; asymptotic,
not a bound). ``delta_upper_bound`` is the empirical-Bernstein upper bound of Maurer & Pontil (2009,
Thm 4) for each direction at (1 - confidence)/2, maximised: valid for every sample size at level
``confidence`` (errs on the safe side: above the true delta with at least that probability); it is
the only non-trivial statement where no sample hit the region (estimate 0).

Exact values for d = 1 (closed form of the Gaussian mechanism, sensitivity 1) and d = 2 (one
closed-form inner integral -- a lognormal call or put -- inside a composite Gauss-Legendre rule) check the
estimator: :func:`hockey_stick_exact`.

Room: the library side of the ``koskela_fig4`` rule. Imports helpers and :mod:`shuffledp.tables`
(verdict labels) only.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import special

from shuffledp._random import job_rng
from shuffledp._validation import check_integer, check_real, check_real_array
from shuffledp.tables import CURVE_VERDICT_COLUMNS, not_reproducible_row

__all__ = [
    "FIG4_COLUMNS",
    "FIG4_VERDICT_COLUMNS",
    "MISSING_PARAMETERS",
    "PLAIN",
    "IMPORTANCE",
    "GUARANTEE",
    "log_likelihood_ratio",
    "hockey_stick_monte_carlo",
    "hockey_stick_importance",
    "importance_shifts",
    "hockey_stick_exact",
    "fig4_frame",
    "band_width",
    "fig4_verdicts",
]

#: columns of :func:`hockey_stick_monte_carlo` and :func:`fig4_frame`
FIG4_COLUMNS = [
    "estimator",
    "dimension",
    "sigma",
    "samples",
    "epsilon",
    "delta",
    "delta_low",
    "delta_high",
    "delta_upper_bound",
    "delta_pq",
    "se_pq",
    "delta_qp",
    "se_qp",
    "exact_pq",
    "exact_qp",
    "seconds",
]
#: columns of :func:`fig4_verdicts`: the curve-verdict table's (:data:`shuffledp.tables.CURVE_VERDICT_COLUMNS`,
#: those of Koskela's curves too, so the report reads both tables with one reader)
FIG4_VERDICT_COLUMNS = CURVE_VERDICT_COLUMNS
#: what every Fig. 4 curve is (``guarantee`` column)
GUARANTEE = (
    "not a guarantee: an estimate (with a 95% band) of delta for one dataset pair (all zeros vs one 1), "
    "so of a lower bound on the shuffled Gaussian's delta over all datasets"
)
#: why no curve of Fig. 4 can be compared (checks in docs/koskela-figures.md, "Fig. 4")
MISSING_PARAMETERS = (
    "the parameters are not published: the paper's text states no sigma, d, eps grid or N, and the "
    "authors' code (numerical-shuffler-experiments, every commit to 75068f3) has no Fig. 4 script or data"
)
_CHUNK = 1 << 14
#: the two estimators (``estimator`` column): plain Monte Carlo and importance sampling
PLAIN, IMPORTANCE = "monte-carlo hockey-stick", "importance-sampling hockey-stick"


def _check_sigma_dimension(sigma, dimension) -> tuple[float, int]:
    return (check_real(sigma, "sigma", low=0.0, low_open=True), check_integer(dimension, "dimension", low=1))


def log_likelihood_ratio(y, sigma: float) -> np.ndarray:
    """log p(y)/q(y) for the rows of ``y`` (shape (N, d)): P the shuffled mixture, Q = N(0, sigma^2 I)."""
    y = np.atleast_2d(np.asarray(y, dtype=float))
    sigma, _ = _check_sigma_dimension(sigma, y.shape[1])
    return special.logsumexp(y / sigma**2, axis=1) - math.log(y.shape[1]) - 0.5 / sigma**2


def _log_ratios(z: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """log L at y = sigma z (a draw of Q) and at y = sigma z + e_1 (a draw of P)."""
    a = z / sigma
    shift = 0.5 / sigma**2 + math.log(z.shape[1])
    top = a.max(axis=1)
    rest = np.exp(a - top[:, None])
    sum_q = rest.sum(axis=1)
    log_q = top + np.log(sum_q) - shift
    first = a[:, 0] + 1.0 / sigma**2  # the shifted coordinate, in log space
    top_p = np.maximum(top, first)
    sum_p = (sum_q - rest[:, 0]) * np.exp(top - top_p) + np.exp(first - top_p)
    log_p = top_p + np.log(sum_p) - shift
    return log_q, log_p


def _bernstein_upper(mean, variance, samples, alpha, weight_range: float = 1.0) -> np.ndarray:
    """Maurer & Pontil (2009), Thm 4: E[f] <= mean + sqrt(2 V ln(2/alpha) / N) + 7 b ln(2/alpha) / (3 (N - 1))
    with probability >= 1 - alpha, for f in [0, b] (b = ``weight_range``; the theorem for f / b, scaled back)
    and V the unbiased sample variance; capped at 1 (delta is a probability difference)."""
    log_term = math.log(2.0 / alpha)
    return np.minimum(
        mean
        + np.sqrt(2.0 * variance * log_term / samples)
        + 7.0 * weight_range * log_term / (3.0 * (samples - 1)),
        1.0,
    )


def _check_run(dimension, sigma, epsilons, samples, confidence):
    sigma, dimension = _check_sigma_dimension(sigma, dimension)
    return (
        dimension,
        sigma,
        check_real_array(epsilons, "epsilons", low=0.0),
        check_integer(samples, "samples", low=2),
        check_real(confidence, "confidence", low=0.0, high=1.0, low_open=True, high_open=True),
    )


def _frame(dimension, sigma, samples, epsilons, sums, *, confidence, seconds, estimator, weight_range=1.0):
    """The rows of one run from ``sums`` = (sum f_pq, sum f_pq^2, sum f_qp, sum f_qp^2) over ``samples``
    draws of integrands in [0, ``weight_range``]: estimates, CLT band, empirical-Bernstein bound."""
    mean_pq, mean_qp = sums[0] / samples, sums[2] / samples
    var_pq = np.maximum(sums[1] - samples * mean_pq**2, 0.0) / (samples - 1)
    var_qp = np.maximum(sums[3] - samples * mean_qp**2, 0.0) / (samples - 1)
    se_pq, se_qp = np.sqrt(var_pq / samples), np.sqrt(var_qp / samples)
    alpha = (1.0 - confidence) / 2.0  # Bonferroni over the two directions
    z = special.ndtri(1.0 - alpha / 2.0)
    exact = hockey_stick_exact(dimension, sigma, epsilons) if dimension <= 2 else (np.nan, np.nan)
    frame = pd.DataFrame(
        {
            "estimator": estimator,
            "dimension": dimension,
            "sigma": sigma,
            "samples": samples,
            "epsilon": epsilons,
            "delta": np.maximum(mean_pq, mean_qp),
            "delta_low": np.maximum(np.maximum(mean_pq - z * se_pq, mean_qp - z * se_qp), 0.0),
            "delta_high": np.minimum(np.maximum(mean_pq + z * se_pq, mean_qp + z * se_qp), 1.0),
            "delta_upper_bound": np.maximum(
                _bernstein_upper(mean_pq, var_pq, samples, alpha, weight_range),
                _bernstein_upper(mean_qp, var_qp, samples, alpha, weight_range),
            ),
            "delta_pq": mean_pq,
            "se_pq": se_pq,
            "delta_qp": mean_qp,
            "se_qp": se_qp,
            "exact_pq": exact[0],
            "exact_qp": exact[1],
            "seconds": seconds,
        }
    )
    return frame[FIG4_COLUMNS]


def _accumulate(sums, f_pq, f_qp) -> None:
    sums += [f_pq.sum(0), (f_pq * f_pq).sum(0), f_qp.sum(0), (f_qp * f_qp).sum(0)]


def hockey_stick_monte_carlo(
    dimension: int,
    sigma: float,
    epsilons,
    *,
    samples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """delta(eps) of the shuffled Gaussian pair for every eps in ``epsilons`` from one set of ``samples``
    draws of plain Monte Carlo (see the module docstring for the estimator and its bands); columns
    :data:`FIG4_COLUMNS` (``exact_*`` filled for d <= 2)."""
    dimension, sigma, epsilons, samples, confidence = _check_run(
        dimension, sigma, epsilons, samples, confidence
    )
    start = time.perf_counter()
    sums = np.zeros((4, len(epsilons)))
    for size in _chunks(samples):
        log_q, log_p = _log_ratios(rng.standard_normal((size, dimension)), sigma)
        _accumulate(
            sums,
            -np.expm1(np.minimum(epsilons[None, :] - log_p[:, None], 0.0)),
            -np.expm1(np.minimum(epsilons[None, :] + log_q[:, None], 0.0)),
        )
    return _frame(
        dimension,
        sigma,
        samples,
        epsilons,
        sums,
        confidence=confidence,
        seconds=time.perf_counter() - start,
        estimator=PLAIN,
    )


def _chunks(samples: int):
    done = 0
    while done < samples:
        size = min(_CHUNK, samples - done)
        yield size
        done += size


def importance_shifts(
    dimension: int, sigma: float, epsilon_max: float, shifts: int
) -> tuple[np.ndarray, np.ndarray]:
    """The proposal components (mu_j for P || Q, nu_j for Q || P), ``shifts`` of each, equally spaced:
    mu from 1 (P itself) to sigma^2 (eps_max + log d + 1/(2 sigma^2)) + sigma, where a draw of the shifted
    coordinate alone puts log L at eps_max; nu from 0 (Q itself) to sigma^2 eps_max + sigma, where the
    downward shift of every coordinate moves log L to about -eps_max."""
    s2 = sigma**2
    top = s2 * (epsilon_max + math.log(dimension) + 0.5 / s2) + sigma
    return np.linspace(1.0, max(top, 1.0 + sigma), shifts), np.linspace(0.0, s2 * epsilon_max + sigma, shifts)


def _importance_pq(z, sigma, mu, choice, epsilons) -> np.ndarray:
    """w (1 - e^{eps - log L})_+ for draws y = sigma z + mu_j e_1 of the mixture R = (1/m) sum_j R_j,
    R_j = (1/d) sum_i N(mu_j e_i, sigma^2 I); w = p/r = L / (r/q), log(r/q) a logsumexp over (j, i)."""
    s2, d = sigma**2, z.shape[1]
    a = sigma * z / s2
    a[:, 0] += mu[choice] / s2
    log_l = special.logsumexp(a, axis=1) - math.log(d) - 0.5 / s2
    terms = a[:, :, None] * mu[None, None, :] - (mu**2 / (2.0 * s2))[None, None, :]
    log_r = special.logsumexp(terms.reshape(len(z), -1), axis=1) - math.log(d * len(mu))
    return -np.expm1(np.minimum(epsilons[None, :] - log_l[:, None], 0.0)) * np.exp(log_l - log_r)[:, None]


def _importance_qp(z, sigma, nu, choice, epsilons) -> np.ndarray:
    """w (1 - e^{eps + log L})_+ for draws y = sigma z - nu_j 1 of R = (1/m) sum_j N(-nu_j 1, sigma^2 I);
    w = q/r, log(r/q) = logsumexp_j(-nu_j sum(y) / sigma^2 - d nu_j^2 / (2 sigma^2)) - log m."""
    s2, d = sigma**2, z.shape[1]
    y = sigma * z - nu[choice][:, None]
    log_l = special.logsumexp(y / s2, axis=1) - math.log(d) - 0.5 / s2
    total = y.sum(axis=1) / s2
    log_r = special.logsumexp(
        -nu[None, :] * total[:, None] - d * nu[None, :] ** 2 / (2.0 * s2), axis=1
    ) - math.log(len(nu))
    return -np.expm1(np.minimum(epsilons[None, :] + log_l[:, None], 0.0)) * np.exp(-log_r)[:, None]


def hockey_stick_importance(
    dimension: int,
    sigma: float,
    epsilons,
    *,
    samples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    shifts: int = 8,
) -> pd.DataFrame:
    """delta(eps) of the shuffled Gaussian pair by importance sampling (see the module docstring): each
    direction from ``samples`` iid draws of a mixture of ``shifts`` shifted Gaussians
    (:func:`importance_shifts`), weighted by the exact density ratio; same columns and bands as
    :func:`hockey_stick_monte_carlo`, the Bernstein bound with the weighted integrand's range ``shifts``."""
    dimension, sigma, epsilons, samples, confidence = _check_run(
        dimension, sigma, epsilons, samples, confidence
    )
    shifts = check_integer(shifts, "shifts", low=1)
    mu, nu = importance_shifts(dimension, sigma, float(epsilons.max(initial=0.0)), shifts)
    start = time.perf_counter()
    sums = np.zeros((4, len(epsilons)))
    for size in _chunks(samples):
        f_pq = _importance_pq(
            rng.standard_normal((size, dimension)), sigma, mu, rng.integers(shifts, size=size), epsilons
        )
        f_qp = _importance_qp(
            rng.standard_normal((size, dimension)), sigma, nu, rng.integers(shifts, size=size), epsilons
        )
        _accumulate(sums, f_pq, f_qp)
    return _frame(
        dimension,
        sigma,
        samples,
        epsilons,
        sums,
        confidence=confidence,
        seconds=time.perf_counter() - start,
        estimator=IMPORTANCE,
        weight_range=float(shifts),
    )


def _gaussian_mechanism_delta(sigma: float, epsilons: np.ndarray) -> np.ndarray:
    """Closed form for d = 1 (Gaussian mechanism, sensitivity 1; both directions are equal):
    Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma), the second term in log space."""
    a, b = 0.5 / sigma - epsilons * sigma, -0.5 / sigma - epsilons * sigma
    return special.ndtr(a) - np.exp(epsilons + special.log_ndtr(b))


def _lognormal_excess(k: np.ndarray, tau: float, call: bool) -> np.ndarray:
    """E[(U - k)_+] (call) or E[(k - U)_+] (put) for U = e^W, W ~ N(0, tau^2), elementwise in k > 0."""
    log_k = np.log(k)
    growth = math.exp(0.5 * tau**2)
    if call:
        return growth * special.ndtr(tau - log_k / tau) - k * special.ndtr(-log_k / tau)
    return k * special.ndtr(log_k / tau) - growth * special.ndtr(log_k / tau - tau)


def _gauss_legendre(edges, order: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the composite Gauss-Legendre rule on consecutive ``edges``."""
    nodes, weights = np.polynomial.legendre.leggauss(order)
    edges = np.asarray(edges, dtype=float)
    half, middle = np.diff(edges)[:, None] / 2.0, (edges[:-1] + edges[1:])[:, None] / 2.0
    return (middle + half * nodes).ravel(), (half * weights).ravel()


def _standard_normal_pdf(x: np.ndarray) -> np.ndarray:
    """The standard normal density, as scipy.stats.norm.pdf forms it (bit for bit on finite x): scipy.special
    and this line instead of scipy.stats, whose import costs each process about 0.5 s of CPU."""
    return np.exp(-(x**2) / 2.0) / np.sqrt(2.0 * np.pi)


def _outer(inner, kink: float, lo: float, hi: float, tau: float, panels: int) -> float:
    """int_lo^hi inner(w) N(w; 0, tau^2) dw, panels on each side of the kink of ``inner``."""
    kink = min(max(kink, lo), hi)
    edges = np.unique(np.concatenate([np.linspace(lo, kink, panels + 1), np.linspace(kink, hi, panels + 1)]))
    w, weights = _gauss_legendre(edges)
    return float(inner(w) @ (weights * _standard_normal_pdf(w / tau) / tau))


def _exact_two(sigma: float, epsilons: np.ndarray, panels: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """d = 2: with W_i = y_i / sigma^2 ~ N(0, tau^2), tau = 1 / sigma, and c = e^{-1/(2 sigma^2)} / 2,
    L = c (e^{W_1} + e^{W_2}); for fixed W_1 = w the expectation over W_2 is a lognormal call (P || Q) or
    put (Q || P) in closed form; the outer integral over w is a composite Gauss-Legendre rule (``panels``
    x 16 nodes on each side of the point where the strike crosses 0) on [-14 tau, tau^2 + 14 tau]
    (outside: N(0, tau^2) mass, tilted by e^w for P || Q, below 1e-42)."""
    tau, c = 1.0 / sigma, 0.5 * math.exp(-0.5 / sigma**2)
    lo, hi = -14.0 * tau, tau**2 + 14.0 * tau
    growth = math.exp(0.5 * tau**2)
    pq, qp = [], []
    for e in np.asarray(epsilons, dtype=float):

        def inner_pq(w, e=e):
            k = math.exp(e) / c - np.exp(w)
            safe = np.where(k > 0, k, 1.0)
            return np.where(
                k > 0, c * _lognormal_excess(safe, tau, True), c * (np.exp(w) + growth) - math.exp(e)
            )

        def inner_qp(w, e=e):
            k = math.exp(-e) / c - np.exp(w)
            safe = np.where(k > 0, k, 1.0)
            return np.where(k > 0, math.exp(e) * c * _lognormal_excess(safe, tau, False), 0.0)

        pq.append(_outer(inner_pq, e - math.log(c), lo, hi, tau, panels))
        qp.append(_outer(inner_qp, -e - math.log(c), lo, hi, tau, panels))
    return np.array(pq), np.array(qp)


def hockey_stick_exact(dimension: int, sigma: float, epsilons) -> tuple[np.ndarray, np.ndarray]:
    """(H(P || Q), H(Q || P)) at each eps by numerical integration, for d = 1 (closed form) and d = 2
    (closed-form inner integral, composite Gauss-Legendre outer integral)."""
    sigma, dimension = _check_sigma_dimension(sigma, dimension)
    epsilons = check_real_array(epsilons, "epsilons", low=0.0)
    if dimension == 1:
        value = _gaussian_mechanism_delta(sigma, epsilons)
        return value, value.copy()
    if dimension != 2:
        raise ValueError(f"`dimension` must be in [1, 2] for the exact integral; got {dimension}.")
    return _exact_two(sigma, epsilons)


def _epsilon_grid(spec) -> np.ndarray:
    if isinstance(spec, Mapping):
        return np.linspace(float(spec["start"]), float(spec["stop"]), int(spec["num"]))
    return np.asarray(spec, dtype=float)


def fig4_frame(section: Mapping, *, seed: int) -> pd.DataFrame:
    """Every curve of Fig. 4 from the ``koskela.fig4`` config slice: per dimension d, one plain Monte Carlo
    run (``samples``; stream (seed, "koskela", "fig4", d)) and, when the slice has ``importance``
    ({samples, shifts}), one importance-sampling run (stream (seed, "koskela", "fig4", "importance", d))."""
    epsilons = _epsilon_grid(section["epsilon"])
    sigma, confidence = float(section["sigma"]), float(section["confidence"])
    frames = []
    for d in map(int, section["dimensions"]):
        frames.append(
            hockey_stick_monte_carlo(
                d,
                sigma,
                epsilons,
                samples=int(section["samples"]),
                rng=job_rng(seed, "koskela", "fig4", d),
                confidence=confidence,
            )
        )
        if "importance" in section:
            spec = section["importance"]
            frames.append(
                hockey_stick_importance(
                    d,
                    sigma,
                    epsilons,
                    samples=int(spec["samples"]),
                    rng=job_rng(seed, "koskela", "fig4", "importance", d),
                    confidence=confidence,
                    shifts=int(spec.get("shifts", 8)),
                )
            )
    return pd.concat(frames, ignore_index=True)


def band_width(group: pd.DataFrame) -> float:
    """Largest relative half-width of the CLT band, (delta_high - delta_low) / (2 delta), over the rows with
    delta > 0 (NaN if none)."""
    delta = group["delta"].to_numpy(float)
    half = (group["delta_high"] - group["delta_low"]).to_numpy(float) / 2.0
    positive = delta > 0
    return float(np.max(half[positive] / delta[positive])) if positive.any() else math.nan


def _exact_text(group: pd.DataFrame, smallest_delta: float) -> str:
    delta = group["delta"].to_numpy(float)
    exact = np.maximum(group["exact_pq"].to_numpy(float), group["exact_qp"].to_numpy(float))
    judged = np.isfinite(exact) & (exact > smallest_delta)
    if not judged.any():
        return ""
    relative = np.abs(delta[judged] - exact[judged]) / exact[judged]
    inside = (group["delta_low"].to_numpy(float)[judged] <= exact[judged]) & (
        exact[judged] <= group["delta_high"].to_numpy(float)[judged]
    )
    return (
        f"; against the exact integral: largest relative difference {relative.max():.2%}, "
        f"{int(inside.sum())} of {int(judged.sum())} points inside the band"
    )


def _plain_text(group: pd.DataFrame, plain: pd.DataFrame | None) -> str:
    """How far the importance-sampling estimate is from the plain one, in combined standard errors."""
    if plain is None or plain.empty:
        return ""
    merged = group.merge(plain, on="epsilon", suffixes=("", "_plain"))
    both = merged["delta_pq_plain"] > 0
    z = (
        np.abs(merged["delta_pq"] - merged["delta_pq_plain"])
        / np.hypot(merged["se_pq"], merged["se_pq_plain"])
    )[both]
    return (
        f"; against plain Monte Carlo (P || Q, {int(both.sum())} eps where it is positive): largest difference "
        f"{z.max():.2f} combined standard errors"
        if both.any()
        else ""
    )


def fig4_verdicts(frame: pd.DataFrame, *, smallest_delta: float = 0.0) -> pd.DataFrame:
    """One verdict per curve (estimator, dimension d): *not reproducible as specified*
    (:data:`MISSING_PARAMETERS`), with what we can check instead in the note -- the largest relative
    half-width of the CLT band, for d <= 2 the largest relative difference from the exact integral and how
    many points lie inside the band (points with exact delta below ``smallest_delta`` excluded), and for
    importance sampling its distance from plain Monte Carlo."""
    rows = []
    for (estimator, dimension), group in frame.groupby(["estimator", "dimension"], sort=True):
        delta, width, samples = (
            group["delta"].to_numpy(float),
            band_width(group),
            int(group["samples"].iloc[0]),
        )
        # samples for two significant figures (relative half-width 5%) at every eps, by the 1/sqrt(N) rate
        needed = f"{samples * (width / 0.05) ** 2:.2g}" if math.isfinite(width) else "unknown"
        note = (
            f"{estimator}, {samples:,} samples, {len(group)} eps in [{group['epsilon'].min():g}, "
            f"{group['epsilon'].max():g}]: delta from {delta.max():.3g} down to {delta.min():.3g}, largest "
            f"relative half-width of the band {width:.2%} (about {needed} samples would make it 5%); "
            f"{group['seconds'].iloc[0]:.2f} s" + _exact_text(group, smallest_delta)
        )
        if estimator == IMPORTANCE:
            note += _plain_text(
                group, frame[(frame["estimator"] == PLAIN) & (frame["dimension"] == dimension)]
            )
        rows.append(
            not_reproducible_row(
                figure=4,
                curve=f"shuffled Gaussian, d = {int(dimension)}"
                + (" (plain Monte Carlo)" if estimator == PLAIN else ""),
                accountant=estimator,
                compositions="",
                note=note,
                known_cause=MISSING_PARAMETERS,
                guarantee=GUARANTEE,
            )
        )
    return pd.DataFrame(rows, columns=FIG4_VERDICT_COLUMNS)
