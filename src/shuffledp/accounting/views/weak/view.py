"""Koskela et al.'s *weak adversary* for shuffled k-RR as a view (:class:`WeakView`, the view of
``weak-adversary``): its outcomes, and as overrides on the view its exact certified delta, its binned privacy
loss distribution for composition (:meth:`WeakView.binned`), its certified epsilon search
(:meth:`WeakView.epsilon_for_delta`) and its composed tail.

The adversary (Koskela, Heikkila, Honkela 2021, Def. 3 and Thm 4) sees the shuffled reports, the data
of the other n - 1 users and which of them drew their report from the blanket (k-RR as a mixture:
with probability gamma = k / (e^eps0 + k - 1) a user reports a uniform value, otherwise its own). It
does *not* learn whether the differing user drew from the blanket (the strong adversary of
:mod:`shuffledp.accounting.views.strong.view` does). It sees more than the analyst, so its delta bounds the
histogram's delta for every pair of neighbouring datasets (replace-one) in both directions. Against
brute force over every dataset (483 tiny cases, n = 2..8, k = 2..4) it equals the true worst case to
12 digits in 280 and exceeds it by up to 41% in the others (tests; docs/decisions/weak-adversary.md).

**The view.** Removing the known truthful reports leaves the b blanket reports of the others and the
differing user's report; by symmetry only the counts (a, c, m) of x0, x1 and of the other k - 2 values
among these b + 1 reports matter (the split of m over the other values has the same law under both
hypotheses). Writing Mult_n for the multinomial law over n trials with probabilities
(q, q, (k - 2) q, 1 - gamma), q = 1 / (e^eps0 + k - 1), and beta = e^eps0 - 1, a direct computation
(trinomial ratios; docs/decisions/weak-adversary.md) gives

    P(a, c, m) = Mult_n(a, c, m) (a + c + m + beta a) / n,
    Q(a, c, m) = Mult_n(a, c, m) (a + c + m + beta c) / n,

so the privacy loss is log((j + beta a) / (j + beta c)) with j = a + c + m and

    delta(eps) = (1 / n) E[(lambda A - c_S - nu M)_+],
    lambda = beta (1 + e^eps),  c_s = s (e^(eps + eps0) - 1),  nu = e^eps - 1,

with S = A + C ~ Bin(n, 2q), A | S ~ Bin(S, 1/2) and M | S ~ Bin(n - S, rho), rho = (k - 2) / (e^eps0 +
k - 3), A and M independent given S. The loss is at most eps0 (at a = j, c = 0), so delta = 0 for
eps >= eps0 comes out of the sum (lambda a - c_s <= 0 for every a <= s). Both directions are equal (A and
C are exchangeable).

**The stream.** :class:`WeakView` is a :class:`~shuffledp.accounting.views.base.View`: its
outcomes (a, c, m) and their windows are written once in :mod:`shuffledp.accounting.views.weak.outcomes`
(read by :meth:`WeakView.outcomes`, by the binned PLD and by the certified composed tail of
:mod:`shuffledp.accounting.views.weak.tail`, :meth:`WeakView.tail_rounds`). The exact delta and the
binned PLD are fast overrides of what the generic layer would derive from that stream, held to it
by tests/accounting/test_view_streams_weak_worst.py.

**Exact delta** (:class:`WeakView`; rows in :mod:`shuffledp.accounting.views.weak.rows`, per-row tables
in :mod:`shuffledp.accounting.views.weak.tables`). For each total s in a window around the mean of S,
the sum over a splits into (i) a *high* range where nu M cannot exceed lambda a - c_s except with
negligible probability: there E_M[(.)_+] = lambda a - c_s - nu E[M] up to a certified remainder, summed
over a in closed form; (ii) a *middle* range summed term by term with the exact expected excess
E[(tau - M)_+] of the binomial M (:mod:`shuffledp.accounting.numerics.binomial`); (iii) a *low* range
bounded by its largest term times its probability. The windows of S, A and M are Bernstein windows
(:func:`~shuffledp.accounting.numerics.windows.bernstein_window`: at most e^(-K^2 / 2) outside each
side, skewed binomials covered as far out as Gaussian ones); everything outside them is bounded above.
The dropped mass is *added* to the returned delta (so it stays an upper bound), and K grows until that
certified remainder is below 1e-11 of the sum (or K reaches 40: e^-800 outside each side; below that
the remainder is capped by the strong adversary's exact delta, itself an upper bound on the weak one).
The totals S outside the window and the low range of each row are bounded with Chernoff
(moment-generating-function) bounds that fall with delta (:mod:`shuffledp.accounting.numerics.chernoff`),
so the window stays at K = 8 down to delta ~ 1e-19 at n = 10^6. The same bound on the whole delta
decides "delta <= target" without the sum when it already meets the target, and is returned as the
(certified) value when it is below e^-700 -- which bounds the work at n = 10^8 for epsilons far in the
tail (seconds, not minutes). The windows of S and the lower ends of M's are centred on each epsilon's
Chernoff-tilted law (:meth:`ChernoffBound.tilt`), where the summand puts its mass:
deltas down to e^-700 certify at K = 8 (a row's low range, deep in A's tail there, gets a row-wise tilted
Chernoff bound, :func:`~shuffledp.accounting.numerics.chernoff.log_low_range`). The epsilons are evaluated
together (tables of M's law shared between them, one per block of rows stepped down row by row,
:mod:`~shuffledp.accounting.views.weak.tables`), those that need a wider window together again; per batch,
tables or one incomplete-beta function per (s, a) pair, whichever is less work
(:data:`~shuffledp.accounting.views.weak.rows` ``_CELLS_PER_PAIR``). Work per epsilon: O(K sigma_S x
K sigma_M nu / lambda) (s, a) pairs, O(1) each. Accuracy: relative error ~1e-10 for
delta >= 1e-300 at n up to a few thousand (checked against mpmath in the tests); log-gamma rounding adds
about 1e-16 n log n absolute error to log delta at larger n.

**Binned PLD**: :meth:`WeakView.binned`, by :func:`shuffledp.accounting.views.weak.pld.binned_by_runs` (runs
of m, one side mirrored; its module docstring).

**Epsilon for delta**: :meth:`WeakView.epsilon_for_delta`, the certified bracketing search of
:class:`~shuffledp.accounting.numerics.remainder.BracketedMixin` on the widening windows, started from the
Chernoff bound's certified upper end (:meth:`WeakView.epsilon_hint`) and its refined guess.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import log_sub
from shuffledp.accounting.numerics.chernoff import ChernoffBound
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.numerics.safe_side import DEFAULT_RELATIVE_ROUNDING
from shuffledp.accounting.params import BoundKind, KrrParams, ShuffleSetting
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View, log_delta_from_outcomes
from shuffledp.accounting.views.own_report import OwnReportView
from shuffledp.accounting.views.split_pair import check_size
from shuffledp.accounting.views.strong.view import StrongView
from shuffledp.accounting.views.weak import pld as weak_pld
from shuffledp.accounting.views.weak import tail as weak_tail
from shuffledp.accounting.views.weak.outcomes import WeakGrid, outcome_chunks
from shuffledp.accounting.views.weak.rows import LOG_NEGLIGIBLE, ExcessMemo, WeakRows

__all__ = ["WeakView"]

_LOG_BEYOND_PROMISE = -700.0  # below e^-700 (~1e-304) the Chernoff bound is returned as the value
_BATCH_MIN = 1  # from this many epsilons on, they are evaluated together (shared tables)
_BATCH_K = 8.0  # the window of the joint evaluation (the first window of the widening loop)
_BATCH_ROUNDS = 3  # joint evaluations at widening windows before the epsilons left are redone alone
_MAX_K = 40.0  # the widest window (as the widening loop's)


def _wider(K: float, log_main: float, log_dropped: float) -> float:
    """The window the widening loop (:meth:`BracketedMixin.log_delta_parts`) jumps to from K (the remainder
    falls roughly like exp(-K^2 / 2)); at most _MAX_K."""
    reference = log_main if log_main > -np.inf else -700.0
    excess = log_dropped - (reference + LOG_NEGLIGIBLE)
    return min(_MAX_K, max(K + 0.5, math.sqrt(K * K + 2.0 * excess + 4.0)))


def _upper(parts: tuple[float, float]) -> float:
    """log of sum + certified remainder (an upper bound), at most 0."""
    return min(0.0, float(np.logaddexp(*parts)))


class WeakView(BracketedMixin, View):
    """The weak adversary's view of one setting: its outcomes (a, c, m) as a :class:`View`
    (:meth:`outcomes`, :meth:`left_out`, windows of :class:`~shuffledp.accounting.views.weak.outcomes.WeakGrid`),
    and documented overrides of quantities derived from them:

    * the exact certified delta (module docstring, "Exact delta": :meth:`log_deltas`,
      :meth:`log_delta_parts`, and :meth:`log_delta` with ``upper=True``), by the rows of
      :class:`~shuffledp.accounting.views.weak.rows.WeakRows`;
    * the binned PLD (:meth:`binned`), by runs of m on the same windows as the stream;
    * epsilon for delta (:meth:`epsilon_for_delta`, from :class:`BracketedMixin`), the certified search on
      the exact delta with the Chernoff hints.

    The first two are held to the stream by tests/accounting/test_view_streams_weak_worst.py. The certified
    composed tail (:meth:`tail_rounds`) is formed from the stream's blocks
    (:mod:`shuffledp.accounting.views.weak.tail`).

    Keeps the epsilon-independent rows of the two most recent windows K (the search and repeated calls
    reuse them) and, after :meth:`log_delta_parts`, the window K finally used in ``last_K``."""

    name = "weak"
    symmetric = True  # a and c are exchangeable: (Q, P) is (P, Q) relabelled
    #: what :meth:`log_delta` (``upper=True``) is, for the certified epsilon search of
    #: :class:`~shuffledp.accounting.numerics.remainder.BracketedMixin` (:meth:`epsilon_for_delta`), which
    #: rounds to this side by :attr:`relative_rounding` as ``weak-adversary`` reports its values
    kind = BoundKind.UPPER
    relative_rounding = DEFAULT_RELATIVE_ROUNDING

    def __init__(self, setting: ShuffleSetting):
        super().__init__(setting)
        self.krr = KrrParams.of(setting.epsilon_local, setting.required_k)
        self.chernoff = ChernoffBound(
            n_users=setting.n_users, k=setting.required_k, epsilon_local=setting.epsilon_local
        )
        self._rows_cache: dict[tuple, WeakRows] = {}
        self.excess_memo = ExcessMemo()  # expected excesses shared by the rows of successive K (weak_rows)

    def rows(self, K: float, epsilons=()) -> WeakRows:
        """The rows for window K, centred on the tilted laws of ``epsilons`` (:meth:`ChernoffBound.tilt`; none:
        on the view's own law). At most the two most recent (K, epsilons) are kept."""
        cache = self._rows_cache
        key = (K, tuple(float(e) for e in epsilons))
        if key not in cache:
            if len(cache) >= 2:
                cache.pop(next(iter(cache)))
            s = self.setting
            tilts = tuple(dict.fromkeys(self.chernoff.tilt(e) for e in key[1]))
            cache[key] = WeakRows(
                n_users=s.n_users,
                k=s.required_k,
                epsilon_local=s.epsilon_local,
                K=K,
                logs=self.krr,
                memo=self.excess_memo,
                tilts=tilts,
            )
        return cache[key]

    def log_parts(self, eps: float, K: float) -> tuple[float, float]:
        """(log summed delta, log certified remainder) with windows of half-width K."""
        if eps >= self.setting.epsilon_local:
            return -np.inf, -np.inf
        return self.rows(K, (eps,)).sums.log_parts(eps, self.chernoff)

    def log_delta_parts(
        self, eps: float, log_target: float | None = None, start_K: float = 8.0
    ) -> tuple[float, float]:
        """(log summed delta, log certified remainder), windows widened as in
        :meth:`BracketedMixin.log_delta_parts`, with two shortcuts and a cap.

        Shortcuts (certified, :mod:`shuffledp.accounting.numerics.chernoff`): when the Chernoff bound on delta is
        already <= ``log_target`` the question is decided without the exact sum, and when it is below
        e^-700 (outside the accuracy promise) it is returned as the value (sum -inf, remainder = bound).
        Cap: where the certified remainder is not negligible (delta below about e^-800), the remainder
        is capped so that the total does not exceed the strong adversary's exact delta, which bounds the
        weak adversary's delta from above (it sees less)."""
        bound = self.chernoff.log_delta(float(eps))
        if bound < _LOG_BEYOND_PROMISE or (log_target is not None and bound <= log_target):
            self.last_K = start_K
            return -np.inf, bound
        log_main, log_dropped = BracketedMixin.log_delta_parts(self, eps, log_target, start_K)
        if log_dropped - log_main > LOG_NEGLIGIBLE:
            s = self.setting
            check_size("strong-adversary", s.n_users)
            capped = float(StrongView(s).log_delta(np.array([float(eps)]))[0])
            total = float(np.logaddexp(log_main, log_dropped))
            if min(capped, bound) < total:
                cap = min(capped, bound)
                log_dropped = float(log_sub(cap, log_main)) if cap > log_main else -np.inf
        return log_main, log_dropped

    def log_deltas(self, epsilons: np.ndarray) -> np.ndarray:
        """log delta (sum + certified remainder) at each of ``epsilons`` (checked, any shape).

        As the widening loop, but the epsilons are evaluated together (:meth:`RowSums.log_parts_many <shuffledp.accounting.views.weak.rows.RowSums.log_parts_many>`: tables
        of M's law shared between the epsilons) at the first window; those whose certified remainder is not
        yet below 1e-11 of their sum are evaluated together again at the wider window the widening loop
        would jump to for the farthest of them (the deep-tail epsilons need K ~ 25-38; one at a time
        they would take most of the time), as long as the tables stay in range; what is left is redone alone
        with the widening windows."""
        flat = epsilons.ravel()
        out = np.full(flat.shape, np.nan)
        todo = []
        for i, eps in enumerate(flat):
            bound = self.chernoff.log_delta(float(eps))
            if bound == -np.inf or bound < _LOG_BEYOND_PROMISE:  # eps >= eps0, or beyond the promise
                out[i] = _upper((-np.inf, bound))
            else:
                todo.append(i)
        need = {i: _BATCH_K for i in todo}  # the window each epsilon is evaluated at next
        for _ in range(_BATCH_ROUNDS):
            K, group = self._joint_window(sorted({need[i] for i in todo}), need, todo, flat)
            if len(group) < (_BATCH_MIN if K == _BATCH_K else 2):
                break
            assert K is not None, "a non-empty group comes with its window (_joint_window)"
            for i, (log_main, log_dropped) in zip(
                group, self.rows(K, flat[group]).sums.log_parts_many(flat[group], self.chernoff)
            ):
                if log_dropped == -np.inf or log_dropped - log_main <= LOG_NEGLIGIBLE:
                    out[i] = _upper((log_main, log_dropped))
                    todo.remove(i)
                else:
                    need[i] = _wider(K, log_main, log_dropped)
        for i in sorted(todo, key=lambda j: flat[j]):
            out[i] = _upper(self.log_delta_parts(float(flat[i]), start_K=need[i]))
        # u's own report's delta bounds the histogram's for every dataset too: the smaller of two certified
        # upper bounds (the sum is the smaller wherever the shuffle amplifies; they agree to rounding elsewhere)
        return np.minimum(out, self._local(flat)).reshape(epsilons.shape)

    def _joint_window(self, windows: list, need: dict, todo: list, flat) -> tuple[float | None, list]:
        """The widest K of ``windows`` (ascending) at which the tables of the rows centred on the epsilons that
        need at most K fit (:meth:`WeakRows.tables_fit`), and those epsilons; (None, []) if none."""
        for K in reversed(windows):
            group = [i for i in todo if need[i] <= K]
            if self.rows(K, flat[group]).tables_fit():
                return K, group
        return None, []

    # ------------------------------------------------------------------ the stream (View interface)
    def grid(self, K: float = DEFAULT_K) -> WeakGrid:
        """The windows of half-width K (shared by the stream, the binned PLD and the composed tail)."""
        return WeakGrid(self.setting.n_users, self.krr, K)

    def outcomes(self, K: float = DEFAULT_K):
        """The REMOVE direction's outcomes (s, a, m) inside the windows, one chunk per total s."""
        beta = math.expm1(self.setting.epsilon_local)
        for log_p, log_q in outcome_chunks(self.grid(K), beta):
            yield OutcomeChunk(log_p, log_q)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        """Certified bound on the P-mass and the Q-mass outside the windows (the same: they are symmetric)."""
        log_dropped = self.grid(K).log_dropped(math.expm1(self.setting.epsilon_local))
        return LeftOut(log_dropped, log_dropped)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: with ``upper`` the exact certified delta of :meth:`log_deltas` (it picks its own
        windows, K is not used); without it the generic lower bound from the stream."""
        if not upper:
            return log_delta_from_outcomes(self, epsilons, K=K, upper=False)
        return self.log_deltas(np.atleast_1d(np.asarray(epsilons, dtype=float)))

    def binned(self, *, interval: float, pessimistic: bool, K: float = DEFAULT_K, log_masses: bool = False):
        """Override: the binned PLD by runs of m (:func:`~shuffledp.accounting.views.weak.pld.binned_by_runs`;
        held to the stream's binning by tests), the same windows as the stream.

        Args:
            interval: the width of the loss grid, > 0.
            pessimistic: losses rounded up and the left-out mass to infinity (True), or rounded down and dropped.
            K: half-width of the windows, in standard deviations.
            log_masses: must be False (the runs form masses as prefix-sum differences, not per outcome).

        Returns:
            the :class:`~shuffledp.accounting.views.binned.BinnedView`.

        Raises:
            ValueError: ``log_masses`` is True.
        """
        if log_masses:
            raise ValueError(
                f"`log_masses` must be False for the {self.name!r} view (its masses are not formed per "
                "outcome); got True."
            )
        return weak_pld.binned_by_runs(self.setting, interval=interval, pessimistic=pessimistic, K=K)

    def has_tail(self, *, subsample: float = 1.0) -> bool:
        """Whether :meth:`tail_rounds` forms the certified composed tail for this setting at rate ``subsample``
        on the finest tail grid (:func:`~shuffledp.accounting.views.weak.tail.has_boxes`: its windows hold at
        most :data:`~shuffledp.accounting.views.weak.tail.MAX_PAIRS` (s, a) pairs, or beyond, at most
        :data:`~shuffledp.accounting.views.weak.tail.MAX_BOXES` boxes of (s, d, m))."""
        return weak_tail.has_boxes(self.setting, subsample, weak_tail.FINEST_WIDTH, weak_tail.K_TAIL)

    def tail_rounds(
        self, *, interval: float, subsample: float = 1.0, count: int = 1, K: float = weak_tail.K_TAIL
    ):
        """Override: (REMOVE, ADD) rounds of the certified composed tail from the weak view's own outcomes in
        log space (:mod:`shuffledp.accounting.views.weak.tail`: its run-reduced PLD forms masses as prefix-sum
        differences, which cannot certify a tail), or None where :meth:`has_tail` is False (for a grid at least as fine)."""
        return weak_tail.tail_rounds(self.setting, subsample, interval, count, K=K)

    def _local(self, epsilons: np.ndarray) -> np.ndarray:
        """u's own report's log delta (:class:`~shuffledp.accounting.views.own_report.OwnReportView`), a certified
        upper bound too."""
        return OwnReportView(self.setting).log_delta(epsilons)

    def epsilon_hint(self, log_target: float) -> float | None:
        """A certified upper end for the epsilon search (:meth:`ChernoffBound.epsilon_hint`)."""
        return self.chernoff.epsilon_hint(log_target)

    def epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        """A guess near the crossing (:meth:`ChernoffBound.epsilon_refine`)."""
        return self.chernoff.epsilon_refine(log_target, eps, log_value)

    # the hooks of BracketedMixin: the widening loop (log_delta_parts) and the epsilon search (epsilon_for_delta)
    _log_parts = log_parts
    _epsilon_hint = epsilon_hint
    _epsilon_refine = epsilon_refine
