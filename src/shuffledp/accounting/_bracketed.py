"""Shared machinery of accountants that compute a sum plus a certified bound on what they dropped.

Such an accountant implements ``_log_parts(eps, K)`` -> (log of the summed delta, log of a certified
bound on the mass left out by windows of half-width K standard deviations). This mixin

* widens K until the remainder is below 1e-11 of the sum (one jump, sized from the first pass), or
  until a yes/no question "is delta(eps) <= target?" is already decided, or until sum + remainder is
  certified below e^-700 (~1e-304: beyond the accuracy promise, the certified upper value is returned);
* reports an UPPER accountant as sum + remainder (still an upper bound) and a LOWER one as the sum
  alone (the dropped part only makes the true value larger);
* finds epsilon for a target delta by a bracketing search in which every step is decided with
  certified bounds, and returns the end of the final bracket that errs on the safe side: the upper
  end for an UPPER bound (the returned epsilon always meets the target) and the lower end for a LOWER
  bound (the returned epsilon never exceeds the true one).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._validation import check_probability, check_real
from shuffledp.accounting._base import BoundKind

__all__ = ["BracketedMixin"]

_START_K = 8.0
_MAX_K = 40.0
_LOG_RELATIVE_TARGET = math.log(1e-11)
_LOG_BEYOND_PROMISE = -700.0


class BracketedMixin:
    """Mixin for :class:`shuffledp.accounting._base.Accountant` subclasses with certified windows."""

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def log_delta_parts(self, eps: float, log_target: float | None = None,
                        start_K: float = _START_K) -> tuple[float, float]:
        """(log delta summed, log certified remainder); windows widen until the remainder is negligible.

        With ``log_target``, stops as soon as ``delta <= target`` is decided by the bounds
        (sum > target: no; sum + remainder <= target: yes). ``start_K`` is the first half-width tried
        (a warm start from a neighbouring epsilon); the K finally used is kept in ``self.last_K``.
        """
        K = max(_START_K, min(_MAX_K, float(start_K)))
        while True:
            self.last_K = K
            log_main, log_dropped = self._log_parts(float(eps), K)
            if log_dropped == -np.inf or K >= _MAX_K or log_dropped - log_main <= _LOG_RELATIVE_TARGET:
                return log_main, log_dropped
            if np.logaddexp(log_main, log_dropped) < _LOG_BEYOND_PROMISE:
                # certified: delta < e^-700 (~1e-304), outside the accuracy promise; the sum plus the
                # remainder is returned as it is (a valid upper bound) instead of widening further
                return log_main, log_dropped
            if log_target is not None and (
                log_main > log_target or np.logaddexp(log_main, log_dropped) <= log_target
            ):
                return log_main, log_dropped
            # the remainder falls roughly like exp(-K^2 / 2): jump to the K that should reach the target
            reference = log_main if log_main > -np.inf else (log_target if log_target is not None else -700.0)
            excess = log_dropped - (reference + _LOG_RELATIVE_TARGET)
            K = min(_MAX_K, max(K + 0.5, math.sqrt(K * K + 2.0 * excess + 4.0)))

    def _value(self, parts: tuple[float, float]) -> float:
        log_main, log_dropped = parts
        value = np.logaddexp(log_main, log_dropped) if self.kind is BoundKind.UPPER else log_main
        return min(0.0, float(value))

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        out = np.empty(epsilons.shape)
        flat = epsilons.ravel()
        # ascending epsilon: delta falls, so the window needed only widens; start each from the last
        start = _START_K
        for i in np.argsort(flat, kind="stable"):
            out.flat[i] = self._value(self.log_delta_parts(float(flat[i]), start_K=start))
            start = getattr(self, "last_K", _START_K)
        return out

    def _meets(self, eps: float, log_target: float) -> tuple[bool, float]:
        """(whether the reported delta at eps is <= target, its log estimate for interpolation)."""
        parts = self.log_delta_parts(eps, log_target, start_K=getattr(self, "_search_K", _START_K))
        self._search_K = self.last_K  # the next point of the search is close: start from this window
        value = self._value(parts)
        return value <= log_target, value

    def epsilon_for_delta(self, delta: float, *, tolerance: float = 1e-9) -> float:
        """Epsilon at which the reported delta reaches ``delta`` (see the module docstring for rounding).

        delta(eps) is 0 from eps0 on, so the answer lies in [0, eps0]. The search halves the bracket
        geometrically while the values are far apart, then uses the Illinois variant of regula falsi
        on log delta (smooth in eps); ``tolerance`` is relative to the upper end of the bracket.
        """
        delta = check_probability(delta, "delta", allow_zero=True, allow_one=True)
        tolerance = check_real(tolerance, "tolerance", low=0.0, low_open=True)
        log_target = math.log(delta) if delta > 0 else -math.inf
        self._search_K = _START_K
        ok, f_low = self._meets(0.0, log_target)
        if ok:
            return 0.0
        low, high = 0.0, float(self.setting.epsilon_local)
        f_high = -np.inf  # delta(eps0) = 0
        side = 0
        while high - low > tolerance * high:
            if not (np.isfinite(f_low) and np.isfinite(f_high)):
                middle = math.sqrt(low * high) if low > 0 else high / 16.0
            else:
                g_low, g_high = f_low - log_target, f_high - log_target
                width = high - low
                middle = high - g_high * width / (g_high - g_low)
                middle = min(max(middle, low + 1e-3 * width), high - 1e-3 * width)
            ok, value = self._meets(middle, log_target)
            if ok:
                high, f_high = middle, value
                if side == 1:
                    f_low = log_target + 0.5 * (f_low - log_target)  # Illinois step
                side = 1
            else:
                low, f_low = middle, value
                if side == -1:
                    f_high = log_target + 0.5 * (f_high - log_target)
                side = -1
        return high if self.kind is BoundKind.UPPER else low
