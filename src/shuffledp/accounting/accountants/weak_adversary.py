"""Koskela et al.'s *weak adversary* for shuffled k-RR: exact delta of its view, an UPPER bound for all data.

The adversary (Koskela, Heikkila, Honkela 2021, Def. 3 and Thm 4) sees the shuffled reports, the data
of the other n - 1 users and which of them drew their report from the blanket (k-RR as a mixture:
with probability gamma = k / (e^eps0 + k - 1) a user reports a uniform value, otherwise its own). It
does *not* learn whether the differing user drew from the blanket (the strong adversary of
:class:`shuffledp.accounting.accountants.blanket.StrongAdversary` does). It sees more than the analyst, so its
delta bounds the histogram's delta for every pair of neighbouring datasets (replace-one) in both
directions. Against brute force over every dataset (483 tiny cases, n = 2..8, k = 2..4) it equals the
true worst case to 12 digits in 280 and exceeds it by up to 41% in the others (tests, reproduction notes).

**The view.** Removing the known truthful reports leaves the b blanket reports of the others and the
differing user's report; by symmetry only the counts (a, c, m) of x0, x1 and of the other k - 2 values
among these b + 1 reports matter (the split of m over the other values has the same law under both
hypotheses). Writing Mult_n for the multinomial law over n trials with probabilities
(q, q, (k - 2) q, 1 - gamma), q = 1 / (e^eps0 + k - 1), and beta = e^eps0 - 1, a direct computation
(trinomial ratios; derivation in docs/reproduction-notes.md) gives

    P(a, c, m) = Mult_n(a, c, m) (a + c + m + beta a) / n,
    Q(a, c, m) = Mult_n(a, c, m) (a + c + m + beta c) / n,

so the privacy loss is log((j + beta a) / (j + beta c)) with j = a + c + m and

    delta(eps) = (1 / n) E[(lambda A - c_S - nu M)_+],
    lambda = beta (1 + e^eps),  c_s = s (e^(eps + eps0) - 1),  nu = e^eps - 1,

with S = A + C ~ Bin(n, 2q), A | S ~ Bin(S, 1/2) and M | S ~ Bin(n - S, rho), rho = (k - 2) / (e^eps0 +
k - 3), A and M independent given S. The loss is at most eps0 (at a = j, c = 0), so delta = 0 for
eps >= eps0 comes out of the sum (lambda a - c_s <= 0 for every a <= s). Both directions are equal (A and
C are exchangeable).

**Evaluation.** For each total s in a window around the mean of S, the sum over a splits into
(i) a *high* range where nu M cannot exceed lambda a - c_s except with negligible probability: there
E_M[(.)_+] = lambda a - c_s - nu E[M] up to a certified remainder, summed over a in closed form;
(ii) a *middle* range summed term by term with the exact expected excess E[(tau - M)_+] of the
binomial M (:mod:`shuffledp.accounting.numerics.binomial`); (iii) a *low* range bounded by its largest
term times its probability. Windows reach K^2 / 2 nats below the modes of S, A and M; everything outside
them is bounded above with exact binomial tails. The dropped mass is *added* to the returned delta
(so it stays an upper bound), and K grows until that certified remainder is below 1e-11 of the sum
(or K reaches 40: windows then reach e^-800 below each mode; below that the remainder is capped by
the strong adversary's exact delta, itself an upper bound on the weak one). The totals S outside the
window and the low range of each row are bounded with Chernoff (moment-generating-function) bounds
that fall with delta (:mod:`shuffledp.accounting.numerics.chernoff`), so the window stays at K = 8 down to
delta ~ 1e-19 at n = 10^6. The same bound on the whole delta decides "delta <= target" without the
sum when it already meets the target, and is returned as the (certified) value when it is below
e^-700 -- which bounds the work at n = 10^8 for epsilons far in the tail (seconds, not minutes). Windows are defined on
the log-pmf (:func:`_window`), so skewed binomials are covered as far out as Gaussian ones. Work per epsilon: O(K sigma_S x min(K sigma_M / lambda', K sigma_A))
incomplete-beta evaluations, independent of n otherwise; memory O(that) as well.

Accuracy: relative error ~1e-10 for delta >= 1e-300 at n up to a few thousand (checked against mpmath
in the tests); log-gamma rounding adds about 1e-16 n log n absolute error to log delta at larger n.
"""

from __future__ import annotations


import numpy as np

from shuffledp._numerics import log_sub
from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.numerics.chernoff import ChernoffBound
from shuffledp.accounting.params import KrrParams, check_epsilon_local_finite
from shuffledp.accounting.views.binned import weak_view
from shuffledp.accounting.views.weak_rows import _LOG_NEGLIGIBLE, _WeakRows
from shuffledp.accounting.accountants.blanket import StrongAdversary

__all__ = ["WeakAdversary"]

_LOG_BEYOND_PROMISE = -700.0  # below e^-700 (~1e-304) the Chernoff bound is returned as the value
_BATCH_MIN = 4  # from this many epsilons on, they are evaluated together (shared tables)
_BATCH_K = 8.0  # the window of the joint evaluation (the mixin's first window)


class WeakAdversary(BracketedMixin, Accountant):
    """Exact delta of Koskela et al.'s weak adversary (Def. 3, Thm 4) plus a certified remainder; see module."""

    name = "weak-adversary"
    label = "upper bound, all datasets (weak adversary)"
    colour = "#AA4499"
    kind = BoundKind.UPPER
    scope = "all neighbouring datasets (replace-one), both directions"
    reference = (
        "Koskela, Heikkila, Honkela (2021), Def. 3 and Thm 4 (weak adversary: knows the other users' data "
        "and blanket bits, not the differing user's); view reduced to (a, c, m) counts, evaluated exactly"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._logs = KrrParams.of(self.setting.epsilon_local, self.setting.k)
        self._chernoff = ChernoffBound(n=self.setting.n_users, k=self.setting.k, epsilon_local=self.setting.epsilon_local)

    def binned_views(self, *, interval: float, pessimistic: bool, K: float) -> list:
        s = self.setting
        return [weak_view(epsilon_local=s.epsilon_local, n_users=s.n_users, k=s.k, interval=interval,
                          pessimistic=pessimistic, K=K)]

    def _rows(self, K: float) -> _WeakRows:
        """The epsilon-independent rows for window K, kept across calls (the search and repeated calls
        reuse them; at most the two most recent K)."""
        cache = self.__dict__.setdefault("_rows_cache", {})
        if K not in cache:
            if len(cache) >= 2:
                cache.pop(next(iter(cache)))
            s = self.setting
            cache[K] = _WeakRows(n=s.n_users, k=s.k, epsilon_local=s.epsilon_local, K=K, logs=self._logs)
        return cache[K]

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:
        if eps >= self.setting.epsilon_local:
            return -np.inf, -np.inf
        return self._rows(K).log_delta(eps, self._chernoff)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """As in the mixin, but many epsilons are evaluated together (:meth:`_WeakRows.log_deltas`:
        tables of M's law shared between the epsilons) at the first window; an epsilon whose certified
        remainder is not yet below 1e-11 of its sum is then redone alone with the widening windows."""
        epsilons = self._checked_epsilons(epsilons)
        flat = epsilons.ravel()
        out = np.full(flat.shape, np.nan)
        todo = []
        for i, eps in enumerate(flat):
            bound = self._chernoff.log_delta(float(eps))
            if bound == -np.inf or bound < _LOG_BEYOND_PROMISE:  # eps >= eps0, or beyond the promise (see below)
                out[i] = self._value((-np.inf, bound))
            else:
                todo.append(i)
        if len(todo) >= _BATCH_MIN:
            parts = self._rows(_BATCH_K).log_deltas(flat[todo], self._chernoff)
            redo = []
            for i, (log_main, log_dropped) in zip(todo, parts):
                if log_dropped == -np.inf or log_dropped - log_main <= _LOG_NEGLIGIBLE:
                    out[i] = self._value((log_main, log_dropped))
                else:
                    redo.append(i)
            todo = redo
        start = _BATCH_K
        for i in sorted(todo, key=lambda j: flat[j]):
            out[i] = self._value(self.log_delta_parts(float(flat[i]), start_K=start))
            start = getattr(self, "last_K", _BATCH_K)
        return out.reshape(epsilons.shape)

    def _epsilon_hint(self, log_target: float) -> float | None:
        """Where the Chernoff bound meets the target (to 1e-4, rounded up): a certified upper end for the
        search (0.0 when delta(0) is already certified below the target). The bound is non-increasing
        in epsilon (X falls pointwise as epsilon grows)."""
        return self._chernoff.crossing(log_target, 1e-4)

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        """The Chernoff bound exceeds delta by a factor that varies slowly with epsilon: where the bound
        equals the target times that factor at the hint, delta is close to the target (a guess only)."""
        if not np.isfinite(log_value):
            return None
        slack = self._chernoff.log_delta(eps) - log_value
        return self._chernoff.crossing(log_target + max(slack, 0.0), 1e-8)

    def log_delta_parts(self, eps: float, log_target: float | None = None, start_K: float = 8.0) -> tuple[float, float]:
        """As in the mixin, with two shortcuts and a cap.

        Shortcuts (certified, :mod:`shuffledp.accounting.numerics.chernoff`): when the Chernoff bound on delta is
        already <= ``log_target`` the question is decided without the exact sum, and when it is below
        e^-700 (outside the accuracy promise) it is returned as the value (sum -inf, remainder = bound).
        Cap: where the certified remainder is not negligible (delta below about e^-800), the remainder
        is capped so that the total does not exceed ``strong-adversary``'s exact delta, which bounds the
        weak adversary's delta from above (it sees less)."""
        bound = self._chernoff.log_delta(float(eps))
        if bound < _LOG_BEYOND_PROMISE or (log_target is not None and bound <= log_target):
            self.last_K = start_K
            return -np.inf, bound
        log_main, log_dropped = super().log_delta_parts(eps, log_target, start_K)
        if log_dropped - log_main > _LOG_NEGLIGIBLE:
            s = self.setting
            strong = float(StrongAdversary(epsilon_local=s.epsilon_local, n_users=s.n_users, k=s.k)
                           .log_delta_for_epsilon(eps)[0])
            total = float(np.logaddexp(log_main, log_dropped))
            if min(strong, bound) < total:
                cap = min(strong, bound)
                log_dropped = float(log_sub(cap, log_main)) if cap > log_main else -np.inf
        return log_main, log_dropped
