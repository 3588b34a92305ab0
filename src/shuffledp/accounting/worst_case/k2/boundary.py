"""The boundary h0 of a k = 2 pair sum: the first h at which P - e^eps Q turns positive (the gap
log f(h - 1) - log f(h) of a log-concave pmf crosses log(beta / alpha)), found near a guess or by an
exponential search and bisection."""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.numerics.search import first_high_integer

__all__ = ["Boundary"]

_GUESS_HALF = 24
_NEAR_STEPS = 5  # windows tried around the guessed boundary before the search


class Boundary:
    """The boundary h0 of a pair sum (:class:`~shuffledp.accounting.worst_case.k2.pair_sum.PairSum`: its ``log_f``,
    ``total``, ``mean``, ``var``, ``skew`` and ``_last``)."""

    __slots__ = ()
    # the host's attributes (declared for the type checker only: no slots, no class attributes)
    total: int
    mean: float
    var: float
    skew: float
    _last: tuple[float, int] | None

    def log_f(self, h: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # the host's (WindowSums.log_f, first in PairSum's bases)

    def boundary(self, log_ratio: float) -> int:
        """Smallest h with log f(h - 1) - log f(h) > log_ratio (h in 1 .. total + 1).

        The gap g(h) = log f(h - 1) - log f(h) is non-decreasing (log-concavity), so the answer is the
        h of a window where g crosses log_ratio. First a window of three values around a guess (the last
        boundary moved by var x the change of log_ratio, or the normal-approximation guess with its
        skewness term) is tried and widened towards the crossing (:meth:`_boundary_near`); if g does not
        cross there, an exponential search from the normal guess brackets the answer, bisection narrows
        the bracket to 2 ``_GUESS_HALF`` values (:func:`~shuffledp.accounting.numerics.search.first_high_integer`),
        and one vectorised window of log f settles it. Either way the answer is the first h whose computed
        gap exceeds
        log_ratio after one that does not, from the same values of log f."""
        total = self.total
        if total < 1:
            return 1
        x = self.var * log_ratio
        if self._last is not None:
            guess = self._last[1] + int(round(self.var * (log_ratio - self._last[0])))
        else:
            guess = int(round(self.mean + 0.5 + x + self.skew * (x * x - self.var) / (2.0 * self.var**2)))
        found = self._boundary_near(min(max(guess, 1), total), log_ratio)
        if found is None:
            found = self._boundary_search(log_ratio)
        self._last = (log_ratio, found)  # type: ignore[misc]  # a slot of the host (PairSum.__slots__)
        return found

    def _boundary_near(self, guess: int, log_ratio: float) -> int | None:
        """The boundary if the gap crosses log_ratio near the guess (else None): a window of three values
        around it, widened (doubling) towards the crossing up to ``_NEAR_STEPS`` times."""
        first, last = guess - 1, guess + 1
        for _ in range(_NEAR_STEPS):
            if first < 2 or last > self.total:
                return None
            lf = self.log_f(np.arange(first - 2, last + 1))  # from h0 - 2 (log_bound reads it)
            with np.errstate(invalid="ignore"):
                above = lf[1:-1] - lf[2:] > log_ratio  # g(h) > log_ratio at h = first .. last
            if not above[0] and above[-1]:
                return first + int(np.flatnonzero(above)[0])
            if above[0]:
                first -= last - first + 1
            else:
                last += last - first + 1
        return None

    def _boundary_search(self, log_ratio: float) -> int:
        """The boundary by exponential search and bisection from the normal guess (see :meth:`boundary`)."""
        total = self.total

        def above(h):  # g(h) > log_ratio, for 1 <= h <= total
            lf = self.log_f(np.array([h - 1, h]))
            with np.errstate(invalid="ignore"):
                return bool(lf[0] - lf[1] > log_ratio)

        guess = min(max(int(round(self.mean + 0.5 + self.var * log_ratio)), 1), total)
        # bracket: g(low) <= log_ratio < g(high), with low = 0 and high = total + 1 as sentinels
        low, high = first_high_integer(
            above, guess, first=1, last=total, step=_GUESS_HALF, width=2 * _GUESS_HALF
        )
        # g(low) <= log_ratio < g(high) (sentinels aside): the answer is in low + 1 .. high
        first, last = max(low, 0), min(high, total)
        if last < first + 1:
            return high
        lf = self.log_f(np.arange(first, last + 1))
        with np.errstate(invalid="ignore"):
            gaps = lf[:-1] - lf[1:]  # g(h) at h = first + 1 .. last
        hits = np.flatnonzero(gaps > log_ratio)
        return first + 1 + int(hits[0]) if hits.size else high
