"""The blanket convolution of a k = 2 pair sum's window, by a certified tilted FFT for the large keys,
and the margins that certify a key's bounds with it (used by :mod:`shuffledp.accounting.worst_case.k2.pair_search`).

A key's window is w = (window of the narrow binomial) * (window of Bin(beta, 1/2)); at n = 10^8 that
convolution is ~55,000 x 8,000 products, three quarters of the search's time when done directly.
Above ``FFT_FROM`` products a key's window is computed by
:func:`~shuffledp.accounting.numerics.tilted_fft.tilted_convolve` with the tilt theta = the
likelihood-ratio threshold log(beta / alpha) of the epsilon at which the key is made (the tilt that puts
the mode of the tilted S at the boundary h0, where the sums that matter are taken; at least one over
the standard deviation of S). Full bounds (two per search step) keep the direct convolution, so the
values the search returns are unchanged.

**What the FFT costs in certainty, and where it is paid.** The window w~ satisfies |w~[t] - w_w[t]|
<= E e^(-theta t) + r w_w[t] (w_w: the window convolved exactly, r: ``relative``, added to the pair
sum's rounding allowance). With L the other binomial (S = lo + t + L), every f~(h) = sum_t w~[t] L(h - lo - t)
and every Pr~(S >= x) = sum_t w~[t] Pr(L >= x - lo - t) then differs from the exact window's by at most
(besides r)

    E_f(h)  = E e^(-theta (h - lo)) M_L(theta),
    E_sf(x) = E e^(-theta (x - lo)) M_L(theta) / (1 - e^(-theta)),   M_L(theta) = E[e^(theta L)]

(the sum over t of e^(-theta t) L(h - lo - t) is e^(-theta (h - lo)) times a partial sum of M_L; for the tail,
sum over y of e^(theta y) Pr(L >= y) = M_L(theta) / (1 - e^(-theta)), theta > 0). These are added to the
upper bound (alpha E_f(h0 - 1) + (e^eps - 1) E_sf(h0)) and taken off the lower value.

**The boundary.** The exact window's f_w is log-concave (a convolution of truncated binomial pmfs), so
its terms alpha f_w(h - 1) - beta f_w(h) change sign once, at h0_w, and G_w = phi(h0_w), phi(h) = alpha
f_w(h - 1) - (e^eps - 1) Pr_w(S >= h). The search's h0 comes from f~. :func:`boundary_margin` bounds the
difference: going down from h0 - 1 until a term is certified <= 0 and up from h0 until one is certified
> 0 (certified: |term~ - term_w| <= err = alpha (E_f(h - 1) + r f~(h - 1)) + beta (E_f(h) + r f~(h)),
plus rounding, is below |term~|), h0_w lies between, and phi(h0_w) - phi(h0) is at most the sum of
|term~| + err over the terms met that were not certified (usually none). If no certified term is found
within ``_STEPS`` steps either way, the pair sum falls back to the direct convolution.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.numerics.binomial import LogPmfRange
from shuffledp.accounting.numerics.tilted_fft import tilted_convolve
from shuffledp.accounting.worst_case.k2.log_sums import convolve_positive, log_sum_scalars

__all__ = ["FFT_FROM", "Tilted", "convolve_window", "boundary_margin"]

#: keys whose blanket convolution has more products than this use the tilted FFT (n above ~10^7;
#: every n <= 10^6 stays direct, bit for bit)
FFT_FROM = 20_000_000
_STEPS = 8
_U = 2.0**-53


class Tilted:
    """The error bounds of a tilted-FFT window (module doc): E = e^log_error, theta, r, the other binomial."""

    __slots__ = ("inputs", "lo", "log_error", "log_mgf", "log_tail_factor", "relative", "theta")

    def __init__(self, theta: float, log_error: float, relative: float, lo: int, other: LogPmfRange, inputs):
        self.theta, self.log_error, self.relative, self.lo, self.inputs = (
            theta,
            log_error,
            relative,
            lo,
            inputs,
        )
        # log M_L(theta), L ~ Bin(N, pi): N log(1 + pi (e^theta - 1))
        self.log_mgf = other.n_trials * math.log1p(math.exp(other.log_pi) * math.expm1(theta))
        self.log_tail_factor = -math.log(-math.expm1(-theta))

    def log_f_error(self, h: int) -> float:
        """log E_f(h) (module doc), raised by a relative 1e-9 of the terms for their own rounding."""
        shift = self.theta * (h - self.lo)
        return self.log_error - shift + self.log_mgf + 1e-9 * (1.0 + abs(shift) + abs(self.log_mgf))

    def log_sf_error(self, x: int) -> float:
        """log E_sf(x) (module doc)."""
        return self.log_f_error(x) + self.log_tail_factor * (1.0 + 1e-9)


def convolve_window(
    log_w: np.ndarray, log_c: np.ndarray, direct_up_to: int, lo: int, other: LogPmfRange, tilt: float | None
) -> tuple[np.ndarray, Tilted | None]:
    """(log of the window convolved with the blanket window, its :class:`Tilted` or None): the tilted FFT
    when ``tilt`` (theta) is given and the product count exceeds ``FFT_FROM``, else the direct convolution
    (chunked above ``direct_up_to``; :func:`direct_window`)."""
    if tilt is not None and log_w.size * log_c.size > FFT_FROM:
        log_z, log_error, relative = tilted_convolve(log_w, log_c, tilt)
        return log_z, Tilted(tilt, log_error, relative, lo, other, (log_w, log_c, direct_up_to))
    return direct_window(log_w, log_c, direct_up_to), None


def direct_window(log_w: np.ndarray, log_c: np.ndarray, direct_up_to: int) -> np.ndarray:
    """log of the direct convolution of e^log_w and e^log_c (sums of positive products: no cancellation)."""
    top_w, top_c = float(log_w.max()), float(log_c.max())
    with np.errstate(divide="ignore"):
        product = convolve_positive(np.exp(log_w - top_w), np.exp(log_c - top_c), direct_up_to)
        return np.log(product) + top_w + top_c


def boundary_margin(
    pair, tilted: Tilted, h0: int, log_alpha: float, log_beta: float, rounding: float
) -> float | None:
    """log of the most phi(h0_w) can exceed phi(h0) (module doc, "The boundary"); -inf when both neighbours of
    the boundary are certified, None when no certified term is found within ``_STEPS`` steps (or the
    scan leaves 1 .. total + 1)."""
    scale = max(log_alpha, log_beta)
    alpha, beta = math.exp(log_alpha - scale), math.exp(log_beta - scale)
    extras = []
    for start, step, wanted in ((h0 - 1, -1, -1), (h0, 1, 1)):
        h = start
        for _ in range(_STEPS):
            if h < 2 or h > pair.total + 1:
                return None
            lf = pair.log_f(np.array([h - 1, h]))
            errors = (tilted.log_f_error(h - 1), tilted.log_f_error(h))
            ref = max(float(lf.max()), *errors)
            f0, f1 = (math.exp(v - ref) for v in lf)
            e0, e1 = (math.exp(v - ref) for v in errors)
            term = alpha * f0 - beta * f1
            err = (
                alpha * (e0 + rounding * f0)
                + beta * (e1 + rounding * f1)
                + 4.0 * _U * (alpha * f0 + beta * f1)
            )
            if (term > err) if wanted > 0 else (term + err <= 0.0):
                break
            extras.append(math.log(abs(term) + err) + ref + scale)
            h += step
        else:
            return None
    return log_sum_scalars(extras) if extras else -math.inf
