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
from scipy.stats import norm

from shuffledp._random import job_rng
from shuffledp._validation import check_integer, check_real, check_real_array
from shuffledp.tables import NOT_REPRODUCIBLE

__all__ = ["FIG4_COLUMNS", "FIG4_VERDICT_COLUMNS", "MISSING_PARAMETERS", "log_likelihood_ratio",
           "hockey_stick_monte_carlo", "hockey_stick_exact", "fig4_frame", "fig4_verdicts"]

#: columns of :func:`hockey_stick_monte_carlo` and :func:`fig4_frame`
FIG4_COLUMNS = ["dimension", "sigma", "samples", "epsilon", "delta", "delta_low", "delta_high", "delta_upper_bound",
                "delta_pq", "se_pq", "delta_qp", "se_qp", "exact_pq", "exact_qp", "seconds"]
#: columns of :func:`fig4_verdicts` (those of shuffledp.experiments.koskela.VERDICT_COLUMNS, so the report
#: reads both tables with one reader)
FIG4_VERDICT_COLUMNS = ["figure", "curve", "accountant", "compositions", "points", "compared",
                        "max_relative_difference", "median_relative_difference", "tolerance", "verdict", "note",
                        "known_cause"]
#: why no curve of Fig. 4 can be compared (checks in docs/koskela-figures.md, "Fig. 4")
MISSING_PARAMETERS = (
    "not published where we can read it: sigma, d, the eps grid and N are stripped from the paper's text, and the "
    "authors' code (numerical-shuffler-experiments, every commit to 75068f3) has no Fig. 4 script or data; "
    "docs/koskela-figures.md, Fig. 4")
_CHUNK = 1 << 14
_ESTIMATOR = "monte-carlo hockey-stick"


def _check_sigma_dimension(sigma, dimension) -> tuple[float, int]:
    return (check_real(sigma, "sigma", low=0.0, low_open=True),
            check_integer(dimension, "dimension", low=1))


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
    first = a[:, 0] + 1.0 / sigma**2               # the shifted coordinate, in log space
    top_p = np.maximum(top, first)
    sum_p = (sum_q - rest[:, 0]) * np.exp(top - top_p) + np.exp(first - top_p)
    log_p = top_p + np.log(sum_p) - shift
    return log_q, log_p


def _bernstein_upper(mean, variance, samples, alpha) -> np.ndarray:
    """Maurer & Pontil (2009), Thm 4: E[f] <= mean + sqrt(2 V ln(2/alpha) / N) + 7 ln(2/alpha) / (3 (N - 1))
    with probability >= 1 - alpha, for f in [0, 1] and V the unbiased sample variance."""
    log_term = math.log(2.0 / alpha)
    return np.minimum(mean + np.sqrt(2.0 * variance * log_term / samples) + 7.0 * log_term / (3.0 * (samples - 1)), 1.0)


def hockey_stick_monte_carlo(dimension: int, sigma: float, epsilons, *, samples: int, rng: np.random.Generator,
                             confidence: float = 0.95) -> pd.DataFrame:
    """delta(eps) of the shuffled Gaussian pair for every eps in ``epsilons`` from one set of ``samples``
    draws (see the module docstring for the estimator and its bands); columns :data:`FIG4_COLUMNS`
    (``exact_*`` filled for d <= 2)."""
    sigma, dimension = _check_sigma_dimension(sigma, dimension)
    epsilons = check_real_array(epsilons, "epsilons", low=0.0)
    samples = check_integer(samples, "samples", low=2)
    confidence = check_real(confidence, "confidence", low=0.0, high=1.0, low_open=True, high_open=True)
    start = time.perf_counter()
    sums = np.zeros((4, len(epsilons)))  # sum f_pq, sum f_pq^2, sum f_qp, sum f_qp^2
    done = 0
    while done < samples:
        size = min(_CHUNK, samples - done)
        log_q, log_p = _log_ratios(rng.standard_normal((size, dimension)), sigma)
        f_pq = -np.expm1(np.minimum(epsilons[None, :] - log_p[:, None], 0.0))
        f_qp = -np.expm1(np.minimum(epsilons[None, :] + log_q[:, None], 0.0))
        sums += [f_pq.sum(0), (f_pq * f_pq).sum(0), f_qp.sum(0), (f_qp * f_qp).sum(0)]
        done += size
    mean_pq, mean_qp = sums[0] / samples, sums[2] / samples
    var_pq = np.maximum(sums[1] - samples * mean_pq**2, 0.0) / (samples - 1)
    var_qp = np.maximum(sums[3] - samples * mean_qp**2, 0.0) / (samples - 1)
    se_pq, se_qp = np.sqrt(var_pq / samples), np.sqrt(var_qp / samples)
    seconds = time.perf_counter() - start
    alpha = (1.0 - confidence) / 2.0          # Bonferroni over the two directions
    z = norm.ppf(1.0 - alpha / 2.0)
    exact = hockey_stick_exact(dimension, sigma, epsilons) if dimension <= 2 else (np.nan, np.nan)
    frame = pd.DataFrame({
        "dimension": dimension, "sigma": sigma, "samples": samples, "epsilon": epsilons,
        "delta": np.maximum(mean_pq, mean_qp),
        "delta_low": np.maximum(np.maximum(mean_pq - z * se_pq, mean_qp - z * se_qp), 0.0),
        "delta_high": np.minimum(np.maximum(mean_pq + z * se_pq, mean_qp + z * se_qp), 1.0),
        "delta_upper_bound": np.maximum(_bernstein_upper(mean_pq, var_pq, samples, alpha),
                                        _bernstein_upper(mean_qp, var_qp, samples, alpha)),
        "delta_pq": mean_pq, "se_pq": se_pq, "delta_qp": mean_qp, "se_qp": se_qp,
        "exact_pq": exact[0], "exact_qp": exact[1], "seconds": seconds,
    })
    return frame[FIG4_COLUMNS]


def _gaussian_mechanism_delta(sigma: float, epsilons: np.ndarray) -> np.ndarray:
    """Closed form for d = 1 (Gaussian mechanism, sensitivity 1; both directions are equal):
    Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma), the second term in log space."""
    a, b = 0.5 / sigma - epsilons * sigma, -0.5 / sigma - epsilons * sigma
    return norm.cdf(a) - np.exp(epsilons + norm.logcdf(b))


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


def _outer(inner, kink: float, lo: float, hi: float, tau: float, panels: int) -> float:
    """int_lo^hi inner(w) N(w; 0, tau^2) dw, panels on each side of the kink of ``inner``."""
    kink = min(max(kink, lo), hi)
    edges = np.unique(np.concatenate([np.linspace(lo, kink, panels + 1), np.linspace(kink, hi, panels + 1)]))
    w, weights = _gauss_legendre(edges)
    return float(inner(w) @ (weights * norm.pdf(w / tau) / tau))


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
            return np.where(k > 0, c * _lognormal_excess(safe, tau, True), c * (np.exp(w) + growth) - math.exp(e))

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
    """Every curve of Fig. 4 from the ``koskela.fig4`` config slice: one Monte Carlo run per dimension d,
    each on its own stream (seed, "koskela", "fig4", d)."""
    epsilons = _epsilon_grid(section["epsilon"])
    frames = [hockey_stick_monte_carlo(int(d), float(section["sigma"]), epsilons, samples=int(section["samples"]),
                                       rng=job_rng(seed, "koskela", "fig4", int(d)),
                                       confidence=float(section["confidence"]))
              for d in section["dimensions"]]
    return pd.concat(frames, ignore_index=True)


def fig4_verdicts(frame: pd.DataFrame, *, smallest_delta: float = 0.0) -> pd.DataFrame:
    """One verdict per curve (dimension d): *not reproducible as specified* (:data:`MISSING_PARAMETERS`),
    with what we can check instead in the note -- the largest relative half-width of the CLT band and, for
    d <= 2, the largest relative difference from the exact integral and how many points lie inside the band
    (points with exact delta below ``smallest_delta`` excluded)."""
    rows = []
    for dimension, group in frame.groupby("dimension", sort=True):
        delta = group["delta"].to_numpy(float)
        positive = delta > 0
        half = (group["delta_high"] - group["delta_low"]).to_numpy(float) / 2.0
        width = float(np.max(half[positive] / delta[positive])) if positive.any() else math.nan
        samples = int(group["samples"].iloc[0])
        # samples for two significant figures (relative half-width 5%) at every eps, by the 1/sqrt(N) rate
        needed = f"{samples * (width / 0.05) ** 2:.2g}" if math.isfinite(width) else "unknown"
        note = (f"{samples:,} samples, {len(group)} eps in [{group['epsilon'].min():g}, "
                f"{group['epsilon'].max():g}]: delta from {delta.max():.3g} down to {delta.min():.3g}, largest "
                f"relative half-width of the band {width:.2%} (about {needed} samples would make it 5%); "
                f"{group['seconds'].iloc[0]:.2f} s")
        exact = np.maximum(group["exact_pq"].to_numpy(float), group["exact_qp"].to_numpy(float))
        judged = np.isfinite(exact) & (exact > smallest_delta)
        if judged.any():
            relative = np.abs(delta[judged] - exact[judged]) / exact[judged]
            inside = (group["delta_low"].to_numpy(float)[judged] <= exact[judged]) & (
                exact[judged] <= group["delta_high"].to_numpy(float)[judged])
            note += (f"; against the exact integral: largest relative difference {relative.max():.2%}, "
                     f"{int(inside.sum())} of {int(judged.sum())} points inside the band")
        rows.append({"figure": 4, "curve": f"shuffled Gaussian, d = {int(dimension)}", "accountant": _ESTIMATOR,
                     "compositions": "", "points": 0, "compared": 0, "max_relative_difference": math.nan,
                     "median_relative_difference": math.nan, "tolerance": math.nan, "verdict": NOT_REPRODUCIBLE,
                     "note": note, "known_cause": MISSING_PARAMETERS})
    return pd.DataFrame(rows, columns=FIG4_VERDICT_COLUMNS)
