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
from collections.abc import Callable
from typing import ClassVar

import numpy as np

from shuffledp._validation import check_probability, check_real
from shuffledp.accounting.numerics.safe_side import widen
from shuffledp.accounting.numerics.search import InterpolatingSearch
from shuffledp.accounting.params import BoundKind, ShuffleSetting

__all__ = ["BracketedMixin"]

_START_K = 8.0
_MAX_K = 40.0
_LOG_RELATIVE_TARGET = math.log(1e-11)
_LOG_BEYOND_PROMISE = -700.0


def _phi(log_value: float) -> float:
    """sqrt(-log delta): close to linear in eps where log delta ~ -c eps^2 (0 for delta >= 1)."""
    return math.sqrt(max(-log_value, 0.0))


class BracketedMixin:
    """Mixin for :class:`shuffledp.accounting.accountants.base.Accountant` subclasses with certified windows."""

    # what the Accountant it is mixed into provides (annotations only: nothing here shadows it)
    kind: ClassVar[BoundKind]
    relative_rounding: ClassVar[float]
    setting: ShuffleSetting
    _checked_epsilons: Callable[[object], np.ndarray]

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def log_delta_parts(
        self, eps: float, log_target: float | None = None, start_K: float = _START_K
    ) -> tuple[float, float]:
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

    def _raw_value(self, parts: tuple[float, float]) -> float:
        log_main, log_dropped = parts
        value = np.logaddexp(log_main, log_dropped) if self.kind is BoundKind.UPPER else log_main
        return min(0.0, float(value))

    def _value(self, parts: tuple[float, float]) -> float:
        """The reported value as the search sees it: on its safe side, as ``log_delta_for_epsilon`` returns it
        (the accountant base widens that one; :mod:`shuffledp.accounting.numerics.safe_side`)."""
        return float(widen(self.kind, self._raw_value(parts), self.relative_rounding))

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        out = np.empty(epsilons.shape)
        flat = epsilons.ravel()
        # ascending epsilon: delta falls, so the window needed only widens; start each from the last
        start = _START_K
        for i in np.argsort(flat, kind="stable"):
            out.flat[i] = self._raw_value(self.log_delta_parts(float(flat[i]), start_K=start))
            start = getattr(self, "last_K", _START_K)
        return out

    def _meets(self, eps: float, log_target: float) -> tuple[bool, float]:
        """(whether the reported delta at eps is <= target, its log estimate for interpolation)."""
        parts = self.log_delta_parts(eps, log_target, start_K=getattr(self, "_search_K", _START_K))
        self._search_K = self.last_K  # the next point of the search is close: start from this window
        value = self._value(parts)
        return value <= log_target, value

    def _epsilon_hint(self, log_target: float) -> float | None:
        """An epsilon in (0, eps0] at which delta is certified to be <= the target, or None (no hint)."""
        return None

    def epsilon_for_delta(
        self, delta: float, *, tolerance: float = 1e-9, above: float | None = None
    ) -> float:
        """Epsilon at which the reported delta reaches ``delta`` (see the module docstring for rounding).

        delta(eps) is 0 from eps0 on, so the answer lies in [0, eps0]. Every step keeps a bracket
        [low, high] with delta(low) > target >= delta(high), each decided with certified bounds. New
        points come from secant / inverse quadratic interpolation on phi = sqrt(-log delta), which is close
        to linear in eps (log delta ~ -c eps^2 in the Gaussian regime), so few evaluations are needed;
        while a value at an end is not finite the bracket is split geometrically instead
        (:class:`~shuffledp.accounting.numerics.search.InterpolatingSearch`). An accountant may supply a
        certified upper end (``_epsilon_hint``, e.g. from a Chernoff bound); its exact value is then
        computed once. ``tolerance`` is relative to the upper end of the bracket.

        ``above``: an epsilon at which this accountant's delta is known, by a certified argument outside it,
        to exceed the target -- e.g. the epsilon that a LOWER bound on the same worst case returns for the
        same target (its delta exceeds the target there, and this accountant's is at least as large). It
        becomes the bracket's lower end without an evaluation, and the search first tries the point just
        within ``tolerance`` above it: where the two ends agree (the bracket of a tight guarantee), that one
        evaluation closes the search (:meth:`_probe_above`). The returned epsilon is still an evaluated
        point answered yes (UPPER) or the certified end below the answer (LOWER).

        Args:
            delta: the target delta, in [0, 1].
            tolerance: the final bracket's width relative to its upper end, > 0.
            above: an epsilon certified to lie below the answer (delta above the target there), >= 0, or
                None.

        Returns:
            The end of the final bracket on the accountant's safe side.

        Raises:
            ValueError: ``delta`` outside [0, 1], ``tolerance`` not > 0 or ``above`` not a real >= 0.
        """
        delta = check_probability(delta, "delta", allow_zero=True, allow_one=True)
        tolerance = check_real(tolerance, "tolerance", low=0.0, low_open=True)
        if above is not None:
            above = check_real(above, "above", low=0.0)
        log_target = math.log(delta) if delta > 0 else -math.inf
        self._search_K = _START_K
        target_phi = _phi(log_target) if log_target > -math.inf else math.inf
        epsilon_local = self.setting.epsilon_local
        if epsilon_local is None:  # as float(None) did, in words: the windows are those of k-RR's sums
            raise TypeError(f"{type(self).__name__} needs a randomizer with an `epsilon_local`.")
        # delta(0) not evaluated yet; delta(eps0) = 0
        search = InterpolatingSearch(_phi, target_phi, 0.0, float(epsilon_local), -np.inf)
        if above is not None and 0.0 < above < search.high:
            self._probe_above(search, above, log_target, tolerance)
        if search.high - search.low <= tolerance * search.high:  # closed by the probe
            return search.high if self.kind is BoundKind.UPPER else search.low
        hint = self._epsilon_hint(log_target) if log_target > -math.inf else None
        if hint == 0.0:
            return 0.0
        if hint is not None and search.low < hint < search.high:
            self._search_from_hint(search, hint, log_target)
        search.run(lambda eps: self._meets(eps, log_target), tolerance)
        return search.high if self.kind is BoundKind.UPPER else search.low

    def _probe_above(
        self, search: InterpolatingSearch, above: float, log_target: float, tolerance: float
    ) -> None:
        """Take ``above`` (certified below the answer, not evaluated) as the bracket's lower end and evaluate
        x = above (1 + tolerance), rounded down until x - above <= tolerance x: a yes there closes the search
        at once; a no moves the lower end to x, with its value for the interpolation."""
        search.low = above
        probe = min(above * (1.0 + tolerance), search.high)
        while probe - above > tolerance * probe:
            probe = math.nextafter(probe, 0.0)
        if above < probe < search.high:
            search.record(probe, *self._meets(probe, log_target))

    def _search_from_hint(self, search: InterpolatingSearch, hint: float, log_target: float) -> None:
        """Record the exact value at the hint, and at the accountant's refined guess from it."""
        value = self._value(self.log_delta_parts(hint, None, start_K=self._search_K))
        search.record(hint, value <= log_target, value)
        guess = self._epsilon_refine(log_target, hint, value)
        if guess is not None and search.low < guess < search.high:
            search.record(guess, *self._meets(guess, log_target))

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        """A second guess for the search from the value at the hint, or None (see ``_epsilon_hint``)."""
        return None
