"""log f(h) and log Pr(S >= x) of a k = 2 pair sum S over its summed window, each kept per h (or x)
across epsilons: one row's own sum, so a value read back is the one a new evaluation would give."""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.numerics.binomial import LogPmfRange, log_sf
from shuffledp.accounting.worst_case.k2.binomial_pieces import log_tail_below
from shuffledp.accounting.worst_case.k2.log_sums import log_sum_rows

__all__ = ["WindowSums"]


class WindowSums:
    """log f(h) and log Pr(S >= x) of a pair sum over its summed window
    (:class:`~shuffledp.accounting.worst_case.k2.pair_sum.PairSum`: its ``log_w``, ``lo``, ``_other``,
    ``exact_tail``, ``_log_f`` and ``_log_sf``)."""

    __slots__ = ()
    # the host's attributes (declared for the type checker only: no slots, no class attributes)
    log_w: np.ndarray
    lo: int
    _other: LogPmfRange
    exact_tail: bool
    _log_f: dict[int, float]
    _log_sf: dict[int, float]

    def log_f(self, h: np.ndarray) -> np.ndarray:
        """log Pr(S = h) over the summed window (a lower value by at most the mass outside it).

        Values are kept per h: each is one row's own sum (:func:`log_sum_rows` reduces each row
        separately), so a value read back is the one a new evaluation would give, bit for bit."""
        h = np.asarray(h, dtype=np.int64)
        known = self._log_f
        missing = np.array(sorted({int(v) for v in h if int(v) not in known}), dtype=np.int64)
        if missing.size:
            known.update(zip(missing.tolist(), self._log_f_rows(missing).tolist()))
        return np.array([known[int(v)] for v in h], dtype=float)

    def _log_f_rows(self, h: np.ndarray) -> np.ndarray:
        """log Pr(S = h) for each h, evaluated (one row of window terms per h).

        Term (h, t) is log_w[t] + log Pr(L = h - lo - t): read from the other binomial's log pmf
        reversed, where t runs forwards, as a strided view (no index array; the same sums)."""
        width = self.log_w.size
        lo_all = int(h.min()) - self.lo - width + 1
        hi_all = int(h.max()) - self.lo
        reversed_other = self._other(lo_all, hi_all)[::-1]  # position i: L = hi_all - i
        windows = np.lib.stride_tricks.sliding_window_view(reversed_other, width)
        return log_sum_rows(self.log_w[None, :] + windows[hi_all - (h - self.lo)])

    def log_sf(self, x: int) -> float:
        """log Pr(S >= x) over the summed window (a lower value), kept per x (epsilon-free)."""
        x = int(x)
        if x not in self._log_sf:
            self._log_sf[x] = self._log_sf_of(x)
        return self._log_sf[x]

    def _log_sf_of(self, x: int) -> float:
        """log Pr(S >= x) over the summed window, evaluated.

        The other binomial's tails at x - i (i over the window: consecutive integers y_lo..y_hi) are
        suffix sums of its pmf plus one tail Pr(L > y_hi) from ``log_sf``, summed in linear space relative
        to their largest term (positive terms: relative error <= width x 1e-16; terms below e^-700 of
        the largest underflow to 0, which only lowers the tail, i.e. raises the bound)."""
        width = self.log_w.size
        y_lo, y_hi = x - self.lo - width + 1, x - self.lo
        other = self._other
        if not self.exact_tail:  # a key: a lower value of the tail (the bound only rises)
            top = log_tail_below(y_hi + 1, other)
        else:
            top = float(log_sf(y_hi + 1, other.n_trials, other.log_pi, other.log_1mpi))
        logs = np.concatenate([self._other(max(y_lo, 0), y_hi) if y_hi >= 0 else np.empty(0), [top]])
        ref = float(np.max(logs))
        if ref == -np.inf:
            return -np.inf
        tails = np.cumsum(np.exp(logs - ref)[::-1])[::-1][:-1]  # Pr(L >= y) / e^ref, y = max(y_lo, 0)..y_hi
        with np.errstate(divide="ignore"):
            log_tails = np.log(tails) + ref
        if y_lo < 0:  # Pr(L >= y) = 1 for y <= 0
            log_tails = np.concatenate([np.zeros(min(-y_lo, width)), log_tails])
        # window position t pairs with y = x - lo - t: reverse
        return float(log_sum_rows((self.log_w + log_tails[::-1])[None, :])[0])
