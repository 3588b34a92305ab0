"""Convolution of two positive arrays by an exponentially tilted FFT, with a certified bound on its error.

z[k] = sum_i x[i] y[k - i] for x = e^log_x, y = e^log_y (positive). An FFT convolution has an
*absolute* error of about u log2 N ||x||_2 ||y||_2 per output (u = 2^-53), so entries far below the
peak lose every digit. Tilting moves the peak: with x'[i] = x[i] e^(theta i - s_x) and y'[j] =
y[j] e^(theta j - s_y) (s_x, s_y: the largest exponents, so both peak at 1),

    z'[k] = sum_i x'[i] y'[k - i] = z[k] e^(theta k - s_x - s_y),

so the FFT's absolute error E on z' becomes E e^(s_x + s_y - theta k) on z: small relative to z[k]
where the tilted z' is near its peak (k near the tilted mean), growing away from it. A caller picks
theta so that the entries its sums weight most sit there (:mod:`shuffledp.accounting.worst_case.k2.pair_search`:
the likelihood-ratio threshold), and carries the per-entry bound ``exp(log_error - theta k)`` into its
own margins.

**The bound on E** (:func:`fft_error_bound`). Lengths are padded to N = 2^t. For the radix-2
Cooley-Tukey FFT with twiddle factors accurate to mu, Higham (Accuracy and Stability of Numerical
Algorithms, 2nd ed., 2002, Thm 24.2) gives ||fl(F v) - F v||_2 <= rho ||F v||_2 with

    rho = t eta / (1 - t eta),  eta = mu + gamma_4 (sqrt 2 + mu),  gamma_k = k u / (1 - k u).

numpy's FFT (pocketfft) works on N = 2^t by radix-4 passes (and one radix-2 pass): a radix-4 pass is
two levels of additions with one twiddle multiplication per element, less arithmetic than the two
radix-2 levels it replaces, so the same form holds; we take mu = 8u (pocketfft computes its twiddles to
about u) and multiply the final bound by ``_SAFETY`` = 4. That is the one assumption of this module; the
tests measure the actual error against the bound on many cases (far below it). With X = F x', Y = F y',
the computed product C^ = X^ Y^ (1 + d), |d| <= sqrt 2 gamma_2 (one complex multiplication, Higham
Lemma 3.5), and z' = F^-1 C (F^-1 = F* / N, the 1 / N exact for N = 2^t),

    |z'~[k] - z'[k]| <= ||F^-1 (C^ - C)||_inf + ||fl(F^-1 C^) - F^-1 C^||_2
                     <= (1 / N) ||C^ - C||_1 + rho ||C^||_2 / sqrt N,
    (1 / N) ||C^ - C||_1 <= ||x'||_2 ||y'||_2 (sqrt 2 gamma_2 (1 + rho)^2 + rho (2 + rho)),
    ||C^||_2 / sqrt N <= (1 + sqrt 2 gamma_2)(1 + rho)(||x'||_1 + rho sqrt N ||x'||_2) ||y'||_2

(Cauchy-Schwarz, ||F v||_2 = sqrt N ||v||_2, ||F v||_inf <= ||v||_1; the last with x' and y' in either
role, the smaller taken). Norms are computed in floating point and raised by a relative 2 len u.

**The tilt's own rounding.** Forming x', y' (an exp of a sum) and undoing the tilt (a log and a sum)
are elementwise with relative error at most ``relative`` (returned: 8 u (4 + the largest absolute
exponent involved, |log z~| <= 745 included)); as every product of the convolution is positive, the computed arrays' exact
convolution is within that relative error of z's (twice, with the undoing): the caller adds it to its
relative rounding allowance.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["fft_error_bound", "tilted_convolve"]

_U = 2.0**-53
_MU = 8.0 * _U  # twiddle factors' error (module doc)
_SAFETY = 4.0


def _gamma(k: int) -> float:
    return k * _U / (1.0 - k * _U)


def fft_error_bound(x: np.ndarray, y: np.ndarray, size: int) -> float:
    """A bound on max_k |computed - exact| of the FFT convolution of the non-negative arrays x, y with
    transforms of length ``size`` = 2^t (module doc, "The bound on E")."""
    t = int(size).bit_length() - 1
    if size != 1 << t:
        raise ValueError(f"`size` must be a power of two; got {size!r}.")
    eta = _MU + _gamma(4) * (math.sqrt(2.0) + _MU)
    rho = max(t, 1) * eta / (1.0 - max(t, 1) * eta)
    g2 = math.sqrt(2.0) * _gamma(2)
    norms = []
    for v in (x, y):
        raise_by = 1.0 + 2.0 * v.size * _U
        norms.append(
            (math.sqrt(float(np.sum(v * v))) * raise_by, float(np.sum(v)) * raise_by)
        )  # not BLAS: no threads
    (x2, x1), (y2, y1) = norms
    root = math.sqrt(size)
    product_part = x2 * y2 * (g2 * (1.0 + rho) ** 2 + rho * (2.0 + rho))
    inverse_part = (
        rho * (1.0 + g2) * (1.0 + rho) * min((x1 + rho * root * x2) * y2, (y1 + rho * root * y2) * x2)
    )
    return _SAFETY * (product_part + inverse_part)


def tilted_convolve(log_x: np.ndarray, log_y: np.ndarray, theta: float) -> tuple[np.ndarray, float, float]:
    """(log z~, log_error, relative): log of the tilted FFT convolution of e^log_x and e^log_y (-inf where
    the computed value is <= 0), with |z~[k] - z[k]| <= e^(log_error - theta k) + relative z[k] for every
    k = 0 .. len(x) + len(y) - 2 (module doc). ``theta`` finite; entries of -inf allowed."""
    theta = float(theta)
    if not math.isfinite(theta):
        raise ValueError(f"`theta` must be finite; got {theta!r}.")
    tilted, shifts, largest = [], [], 0.0
    for log_v in (log_x, log_y):
        exponent = log_v + theta * np.arange(log_v.size)
        shift = float(np.max(exponent))
        tilted.append(np.exp(exponent - shift))
        shifts.append(shift)
        finite = log_v[np.isfinite(log_v)]
        largest = max(largest, float(np.max(np.abs(finite))) if finite.size else 0.0, abs(shift))
    x, y = tilted
    length = x.size + y.size - 1
    size = 1 << max(0, (length - 1).bit_length())
    spectrum = np.fft.fft(x.astype(complex), size) * np.fft.fft(y.astype(complex), size)
    z = np.fft.ifft(spectrum).real[:length]
    error = fft_error_bound(x, y, size)
    k = np.arange(length)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_z = (
            np.where(z > 0.0, np.log(np.where(z > 0.0, z, 1.0)), -np.inf)
            - theta * k
            + (shifts[0] + shifts[1])
        )
    largest += abs(theta) * length + abs(shifts[0] + shifts[1]) + 745.0  # |log z~| <= 745 (z~ >= 2^-1074)
    relative = 8.0 * _U * (4.0 + largest)
    return log_z, math.log(error) + shifts[0] + shifts[1], relative
