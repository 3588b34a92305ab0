"""One k = 2 pair sum: S = Bin(a, p) + Bin(l, q) (+ Bin(blanket, 1/2)), with its epsilon-free pieces
kept across epsilons, and certified upper and lower bounds on G(a, l) = H_{e^eps}(S + Bern(p) || S + Bern(q))
(the method, its margins and the keys: :mod:`~shuffledp.accounting.worst_case.k2.pair_search`)."""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log1mexp, log_expm1, logsumexp
from shuffledp.accounting.numerics.binomial import LogPmfRange
from shuffledp.accounting.numerics.windows import log_window
from shuffledp.accounting.worst_case.k2.binomial_pieces import (
    WINDOW_SDS,
    key_window,
    log_tail_above,
    window_size,
)
from shuffledp.accounting.worst_case.k2.boundary import Boundary
from shuffledp.accounting.worst_case.k2.log_sums import log_sum_scalars
from shuffledp.accounting.worst_case.k2.tilted import boundary_margin, convolve_window, direct_window
from shuffledp.accounting.worst_case.k2.window_sums import WindowSums

__all__ = ["KEY_CUSHION", "PairSum", "shared"]

_DIRECT_UP_TO = 16_384  # blanket windows up to this are convolved directly (every n <= 5 x 10^7)
_DIRECT_UP_TO_KEY = 4_096  # the same for keys (their last bits do not matter)
#: keys are raised by this (in log), far above the rounding of either bound
KEY_CUSHION = math.log1p(1e-9)


def shared(memo: dict, key: tuple, make):
    """memo[key], made by ``make()`` the first time (pieces that depend on key alone: the same arrays)."""
    if key not in memo:
        memo[key] = make()
    return memo[key]


class PairSum(WindowSums, Boundary):
    """S = Bin(a, p) + Bin(l, q) (+ Bin(blanket, 1/2)) with its pmf pieces cached across epsilons;
    ``log_bound(eps)`` is a certified upper bound on log G(a, l) (log G_blanket; module doc)."""

    __slots__ = (
        "_last",
        "_log_f",
        "_log_sf",
        "_other",
        "a",
        "exact_tail",
        "key",
        "l",
        "lo",
        "log_out",
        "log_p",
        "log_q",
        "log_w",
        "mean",
        "rounding_width",
        "skew",
        "tilted",
        "total",
        "var",
    )

    def __init__(
        self,
        a: int,
        l: int,  # noqa: E741 -- the papers' name for the other binomial's count; callers pass it by position
        log_p: float,
        log_q: float,
        blanket: int = 0,
        memo: dict | None = None,
        sds: float = WINDOW_SDS,
        key: bool = False,
        tilt: float | None = None,
    ):
        self.a, self.l, self.log_p, self.log_q, self.key, self.tilted = a, l, log_p, log_q, key, None
        self.exact_tail = not key  # a key's other tail beyond the window: bounded until refined
        window = key_window if key else log_window  # a key's window: its outside mass bounded, not exact
        p, q = math.exp(log_p), math.exp(log_q)
        memo = {} if memo is None else memo  # epsilon-free pieces shared by pair sums (module doc, "Reuse")
        # sum over the binomial with fewer trials (both have variance N p q), convolved with the blanket
        # reports Bin(blanket, 1/2) of a block's users (module doc)
        if a <= l:
            N_s, lp_s, lq_s, (N_o, lp_o, lq_o) = a, log_p, log_q, (l, log_q, log_p)
        else:
            N_s, lp_s, lq_s, (N_o, lp_o, lq_o) = l, log_q, log_p, (a, log_p, log_q)
        self._other = shared(memo, ("pmf", N_o, lp_o, lq_o), lambda: LogPmfRange(N_o, lp_o, lq_o))
        lo, log_w, log_out = shared(
            memo, ("window", N_s, lp_s, lq_s, sds, key), lambda: window(N_s, lp_s, lq_s, sds)
        )
        if blanket > 0:
            half = math.log(0.5)
            lo_c, log_c, out_c = shared(
                memo, ("window", blanket, half, half, sds, key), lambda: window(blanket, half, half, sds)
            )
            direct = _DIRECT_UP_TO_KEY if key else _DIRECT_UP_TO  # chunked above (module doc, "Cost")
            theta = (
                max(tilt, 1.0 / math.sqrt((a + l) * p * q + 0.25 * blanket))
                if key and tilt is not None
                else None
            )
            log_w, self.tilted = convolve_window(log_w, log_c, direct, lo + lo_c, self._other, theta)
            lo, log_out = lo + lo_c, float(np.logaddexp(log_out, out_c))
        self.lo, self.log_w, self.log_out = lo, log_w, log_out
        # the rounding allowance's width: a key's is the width of the bound it stands for (so its margin
        # is at least that bound's)
        self.rounding_width = (
            log_w.size
            if not key
            else window_size(N_s, lp_s, lq_s)
            + (window_size(blanket, math.log(0.5), math.log(0.5)) - 1 if blanket > 0 else 0)
        )
        self.mean = a * p + l * q + 0.5 * blanket
        self.var = (a + l) * p * q + 0.25 * blanket
        self.skew = (l - a) * p * q * (p - q)  # third cumulant (a guess of the boundary only)
        self.total = a + l + blanket  # largest value of S
        # epsilon-free values already computed, reused by every search step: log f(h), log Pr(S >= x),
        # and the last (log ratio, boundary) found
        self._log_f: dict[int, float] = {}
        self._log_sf: dict[int, float] = {}
        self._last: tuple[float, int] | None = None

    def refine(self) -> None:
        """A key's other tail beyond the window from ``log_sf`` instead of its bounds (module doc,
        "Deciding with keys"): both of :meth:`log_bounds` tighten; the windows are kept."""
        if not self.exact_tail:
            self.exact_tail, self._log_sf = True, {}

    def log_bound(self, eps: float) -> float:
        """Certified upper bound on log G(a, l) at eps (module doc)."""
        return self._log_bounds(eps, lower=False)[0]

    def log_bounds(self, eps: float) -> tuple[float, float]:
        """(:meth:`log_bound`, a certified LOWER bound on log G(a, l)) at eps, for keys (module doc, "Deciding
        with keys"): the same pieces, the other binomial's tail beyond the window from above
        (:func:`log_tail_above`), the mass outside the windows added to the tail, the rounding allowance
        taken off, and a relative 1e-9 below."""
        return self._log_bounds(eps, lower=True)

    def _log_bounds(self, eps: float, lower: bool) -> tuple[float, float]:
        e0 = self.log_p - self.log_q
        if eps >= e0:
            return -np.inf, -np.inf
        log_alpha = self.log_q + e0 + float(log1mexp(eps - e0))  # p - e^eps q = q e^eps0 (1 - e^(eps - eps0))
        log_beta = self.log_q + float(log_expm1(eps + e0))  # e^eps p - q = q (e^(eps + eps0) - 1)
        h0 = self.boundary(log_beta - log_alpha)
        total = self.total
        lf = self.log_f(np.array([max(h0 - 2, 0), h0 - 1]))
        log_f_prev, log_f_h0m1 = (lf[0] if h0 >= 2 else -np.inf), lf[1]
        first = log_alpha + log_f_h0m1
        tail = h0 <= total and eps > 0
        second = (float(log_expm1(eps)) + self.log_sf(h0)) if tail else -np.inf
        # rounding: each piece is a sum of `width` positive terms (relative error <= width x 2^-52 each
        # way) times special-function values good to ~1e-14; the allowance is 4x that, on both pieces
        rounding = 1e-13 + 4.0 * (self.rounding_width + 64) * 2.0**-52
        fft = [
            -np.inf,
            -np.inf,
        ]  # a tilted-FFT window's errors on both pieces (k2_tilted), its boundary's margin
        if self.tilted is not None:
            rounding += 2.0 * self.tilted.relative
            extra = boundary_margin(self, self.tilted, h0, log_alpha, log_beta, rounding)
            if extra is None:  # no certified term near h0: the direct convolution instead
                self._untilt()
                return self._log_bounds(eps, lower)
            fft = [
                log_alpha + self.tilted.log_f_error(h0 - 1),
                float(log_expm1(eps)) + self.tilted.log_sf_error(h0) if tail else -np.inf,
                extra,
            ]
        low = self._log_lower(eps, h0, first, second, rounding, fft[:2]) if lower else -np.inf
        if second >= first:  # rounding only (the difference is positive): the margin below carries it
            value = -np.inf
        else:
            value = first + float(log1mexp(second - first))
        log_rounding = math.log(rounding)
        # truncation: the window's f falls short of the true f by at most the mass outside it in total
        # (sum over h), so alpha f(h0 - 1) by at most alpha out, and the terms alpha f(h - 1) - beta f(h)
        # that the truncation moves across 0 (h0 off) add up to at most (alpha + beta) out
        log_truncation = float(np.logaddexp(log_alpha + math.log(2.0), log_beta)) + self.log_out
        margins = [float(np.logaddexp(first, second)) + log_rounding, log_truncation, *fft]
        if np.isfinite(log_f_prev):
            margins.append(log_alpha + log_f_prev + log_rounding)
        if self.key:  # its last bits do not matter (module doc, "Lazy bounds")
            return log_sum_scalars([value, *margins]), low
        return float(logsumexp(np.array([value, *margins]))), low

    def _untilt(self) -> None:
        """The window by the direct convolution instead of the tilted FFT (values kept so far dropped)."""
        assert self.tilted is not None, "called only for a window made by the tilted FFT"
        self.log_w, self.tilted = direct_window(*self.tilted.inputs), None
        self._log_f, self._log_sf, self._last = {}, {}, None

    def _log_lower(self, eps: float, h0: int, first: float, second: float, rounding: float, fft) -> float:
        """A lower bound on log G(a, l): G >= sum_{h >= h0} (alpha f(h - 1) - beta f(h)) = alpha f(h0 - 1)
        - (e^eps - 1) Pr(S >= h0) for every h0. The window's f(h0 - 1) is below the true one (computed
        within ``rounding`` relative); Pr(S >= h0) is at most the window's (within ``rounding``), plus
        the mass outside the windows, plus the other binomial's tail beyond the window from above
        (the window's pmf sums to at most 1; twice that, for its rounding)."""
        if first == -np.inf:
            return -np.inf
        low_first = first + math.log1p(-rounding)
        if fft[0] >= low_first:  # a tilted-FFT window's error on the first piece (k2_tilted)
            return -np.inf
        low_first += float(log1mexp(fft[0] - low_first))
        if second == -np.inf and h0 > self.total:  # Pr(S >= h0) = 0
            low_second = -np.inf
        else:
            ups = [self.log_sf(h0) + math.log1p(rounding), self.log_out]
            if fft[1] > -np.inf:  # a tilted-FFT window's error on the tail (k2_tilted)
                ups.append(fft[1] - float(log_expm1(eps)))
            if (
                not self.exact_tail
            ):  # log_sf's window reaches L = h0 - lo; beyond it (L > h0 - lo) a lower value
                ups.append(math.log(2.0) + log_tail_above(h0 - self.lo + 1, self._other))
            up = log_sum_scalars(ups)
            low_second = float(log_expm1(eps)) + up if eps > 0 else -np.inf
        if low_second >= low_first:
            return -np.inf
        return low_first + float(log1mexp(low_second - low_first)) - KEY_CUSHION
