"""``worst-case-upper``: a certified UPPER bound on the worst case over datasets, tight for k = 2.

**k = 2.** With two values every dataset of the other n - 1 users is "j of them hold x0, the rest x1"
(j = n_x0 in 0..n - 1), and the histogram is (h0, n - h0), so the worst case over datasets and both
directions is max_j max(H(P_j || Q_j), H(Q_j || P_j)), where P_j, Q_j are the laws of h0 when u holds
x0 or x1: h0 = Y_j + I, Y_j = Bin(j, p) + Bin(n - 1 - j, q), I ~ Bern(p) under P_j and Bern(q) under
Q_j (p = e^eps0 / (e^eps0 + 1), q = 1 - p). Swapping the labels x0 and x1 maps the reverse direction
of j to the forward direction of n - 1 - j, so the worst case is max_j F(j) with F(j) = H(P_j || Q_j).
F(j) is evaluated as sum_h ((p - e^eps q) f(h - 1) - (e^eps p - q) f(h))_+ over the pmf f of Y_j
(positive terms only).

**Certified maximum over j without evaluating every j (branch and bound).** For a block of datasets
j in [a, b], let an adversary know the data and, for the w = b - a users whose value differs between
the datasets of the block, whether each drew its report from the blanket (k-RR as a mixture: with
probability gamma = 2q a uniform report, otherwise the true value). Given those bits the truthful
block users' reports are known and can be removed, and what remains has the law
Bin(a, p) + Bin(n - 1 - b, q) + Bin(beta, 1/2) + I whatever j is (beta = number of blanket block users),
so the delta of that view,

    U(a, b) = sum_beta Bin(w, gamma)(beta) H_{e^eps}(law of Y_beta + Bern(p) || Y_beta + Bern(q)),

bounds F(j) from above for every j in the block (the histogram is a function of the view and the
known data: post-processing). U(j, j) = F(j), and U(0, n - 1) is Koskela et al.'s weak adversary. The
search keeps blocks covering 0..n - 1 in a priority queue by U, splits the block with the largest U
in two, and stops when that largest U is within a relative 1e-9 of the largest F(j) evaluated so far
(or the block is a single dataset); the largest U is returned: it is >= F(j) for every j. Every pmf
is summed over a window of at least 12 standard deviations (and the whole support for small n); the
mass left out is bounded with exact binomial tails and *added* (removing mass r from the laws changes
the hockey-stick divergence by at most (1 + e^eps)|r|). Deep in the tail that mass can exceed the
maximum itself (issue 34: e^-97 against e^-118.6 at n = 1000, eps0 = 0.5, eps = 0.25, rising with eps
through the factor e^eps), so the search is repeated with wider windows until the 1e-9 stop is met
(:func:`~shuffledp.accounting.views.worst.k2_blocks.binary_forward_delta`). A relative
1e-12 + 256 ulp x |log delta| is added for rounding (the pmfs are exponentiated logs).

Cost: the block convolutions are cached across epsilons; about 0.1-1 s per epsilon at n = 10^4
(an epsilon search at delta = 1e-6: 0.2 s for eps0 = 4, 4 s for eps0 = 0.5). Against brute force over
every dataset (both directions) on all tiny cases: equal to 1e-9.

**Large n (k = 2, :data:`MAX_USERS_K2` < n <= :data:`MAX_USERS_K2_LARGE`).** The convolutions above cost
O(n) per block (an epsilon search took ~1 min at n = 10^5, eps0 = 0.5), so above ``MAX_USERS_K2`` the
same branch and bound runs over cheaper bounds (:mod:`shuffledp.accounting.views.worst.k2_pair_search`): each block's
bound is the delta of Bin(a, p) + Bin(n - 1 - b, q) + Bin(beta_min, 1/2) (a lower quantile beta_min of
the block's blanket count, which can only overstate: fewer blanket reports is less noise) plus the
probability of fewer, computed in O(sqrt(n)) from closed-form binomial pieces, and the search stops at
a relative 1e-3 or after 200 bounds, returning the largest bound still open (valid wherever it stops).
The result is min(that, ``weak-adversary``), both certified. Measured (epsilon at delta = 1e-6 and
1e-12 over ``worst-case-lower``): 1.0013 / 1.0008 at n = 10^6, eps0 = 0.5 (~0.5 CPU s per search since
issue 24, was 7); 1.0017 / 1.0013 at n = 10^7, eps0 = 0.5 (~1.5 s, was ~50); 1.0020 / 1.0011 at
n = 10^7, eps0 = 4 (~0.7 s, was 5); n = 10^8, eps0 = 0.5: ~4 s (~8 s before issue 35's tilted FFT for
the keys, > 4 min before issue 24; the pair-sum module's "Cost"). Above
``MAX_USERS_K2_LARGE`` the accountant returns ``weak-adversary``'s value (loose for k = 2: its ratio
tends to sqrt(2p), 1.41 at eps0 = 4).

**k = 3, n <= :data:`MAX_USERS_K3`.** The exact worst case over every dataset and both directions:
with three values the histogram is a function of (h0, h1), so the maximum over every (n_x0, n_x1) of
the exact pair delta is the worst case (:func:`shuffledp.accounting.views.worst.enumeration.k3_worst_case`;
its rounding is bounded and added). Against brute force over every dataset: equal to 1e-12 relative.
For MAX_USERS_K3 < n <= :data:`~shuffledp.accounting.views.worst.k3_blocks.MAX_USERS_K3_BLOCKS` the same maximum
is found by branch and bound over blocks of datasets (:mod:`shuffledp.accounting.views.worst.k3_blocks`: a
block is bounded by revealing the blanket bits of the users whose value differs within it), so it is
still the exact worst case; equal to the enumeration, bit for bit, where both run.

**k >= 4, n <= :data:`~shuffledp.accounting.views.worst.own_hits.MAX_USERS_OWN_HITS`.** The certified maximum
over every (n_x0, n_x1) of the own-value-hit views (:mod:`shuffledp.accounting.views.worst.own_hits`): each
reveals, besides a share theta of the outside users' blanket bits, only whether the reports that stand
between "u landed in {x0, x1}" and "it did not" hit their sender's own value, so it bounds every
spread of the outside users at once; min(that, ``weak-adversary``) is returned. On the brute-force
tiny cases it is at most the weak adversary and up to 10 points closer to the truth (k = 5, n = 5,
eps0 = 0.5, eps = 0.25: weak 1.165 x the truth, this 1.065 x).

**k >= 5, n <= :data:`~shuffledp.accounting.views.worst.k4_blocks.MAX_USERS_K4_BLOCKS`; k = 4, n <=
:data:`~shuffledp.accounting.views.worst.k4_blocks.MAX_USERS_K4_ONLY` (issue 34).** Also a
branch and bound over blocks of every dataset (:mod:`shuffledp.accounting.views.worst.k4_blocks`; a node fixes
the counts of x0, x1 and the first outside values and is bounded by revealing the blanket bits of the users it
leaves free; docs/worst-case-k4.md). Where it closes it is the exact worst case (on every cell of the k = 4, 5
enumeration grid: <= 1 + 6e-11 times the truth, was up to 1.568); where a node is too large to expand it returns
the largest bound left open. The minimum of it, the own-value-hit bound (n <= 32) and ``weak-adversary`` is
returned. At k = 4 every view of the search has at most three axes, so it runs up to n = 50 there (laws cropped
at their thin edges and the blanket count's far tails left out, each dropped mass added to the bound).

**k = 3 above MAX_USERS_K3_BLOCKS, where the laws are narrow (issue 34).** Where
:func:`~shuffledp.accounting.views.worst.k3_large.searched` (200 < n <= 10^4 and 2 q (n - 1) <= 48 expected landings
in {x0, x1}), the same blocks run on windowed laws (:mod:`shuffledp.accounting.views.worst.k3_large`: closed pieces,
the mass the windows leave out added, views for the likely blanket counts only) and stop within 1% of the best
dataset found; the smaller of that and ``weak-adversary`` is returned. At n = 1000, eps0 = 4, delta = 1e-9 the
bracket goes from 1.0107 to 1.00015.

**k >= 4 above that n, or k = 3 above MAX_USERS_K3_BLOCKS elsewhere.** This accountant returns ``weak-adversary``'s value
(a certified upper bound for every dataset; on tiny cases it exceeds the true worst case by up to 41%
in delta). Two sufficient-statistic views that make the bound depend on (n_x0, n_x1) only were tried
and rejected (docs/worst-case-k3.md): revealing which outside users' reports fell in {x0, x1} (up to
12x the truth in delta) and revealing only the outside users' blanket bits (its maximum is at
n_x0 = n_x1 = 0, where it IS the weak adversary).

**No privacy loss distribution is exported (issue 32).** This bound is a maximum over datasets, taken
separately at each epsilon (the worst dataset changes with epsilon), so its privacy profile
eps -> max_D delta_D(eps) is not the profile of one pair of distributions, and composing it as if it
were is not valid: the T-fold worst case is not the composition of the per-round maxima. A pair that
dominates every dataset at once is Koskela et al.'s weak adversary; its pessimistic PLD is valid for
every dataset and is what ``compose("weak-adversary", ...)`` composes. It is not handed out under this
accountant's name, because it is not this accountant's value (it is looser wherever the searches above
run: k = 2, k = 3, k >= 4 at small n), and a PLD named ``worst-case-upper`` would suggest that tightness
survives composition. So ``worst-case-upper`` is not composable (it has no ``binned_views``; composition
refuses it with one line); for composed guarantees over every dataset use ``weak-adversary``.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.remainder import BracketedMixin
from shuffledp.accounting.params import check_epsilon_local_finite
from shuffledp.accounting.views.own_report import OwnReportView
from shuffledp.accounting.views.weak.view import WeakView
from shuffledp.accounting.views.worst import k3_large
from shuffledp.accounting.views.worst.enumeration import K3_CACHE_USERS
from shuffledp.accounting.views.worst.k2_blocks import binary_forward_delta
from shuffledp.accounting.views.worst.k2_pair_search import large_forward_delta
from shuffledp.accounting.views.worst.k3_blocks import MAX_USERS_K3_BLOCKS, exact_worst
from shuffledp.accounting.views.worst.k4_blocks import K4BlockSearch
from shuffledp.accounting.views.worst.k4_blocks import max_users as k4_max_users
from shuffledp.accounting.views.worst.own_hits import MAX_USERS_OWN_HITS, OwnHitsSearch

__all__ = ["WorstCaseUpper", "MAX_USERS_K2", "MAX_USERS_K2_LARGE", "MAX_USERS_K3", "binary_forward_delta"]

#: largest n for which k = 2 is searched with the blanket-bit block views (tight to 1e-9 relative)
MAX_USERS_K2 = 10_000
#: largest n for which k = 2 is searched with the pair-sum blocks of ``_pair_sum`` (above: weak-adversary)
MAX_USERS_K2_LARGE = 100_000_000
#: largest n for which k = 3 is the maximum over every dataset by enumeration (every pair law cached: ~n^4 / 2
#: doubles); the block search of views.k3_blocks takes over above it, up to MAX_USERS_K3_BLOCKS
MAX_USERS_K3 = K3_CACHE_USERS


def _log(value: float) -> float:
    return math.log(value) if value > 0 else -np.inf


class WorstCaseUpper(BracketedMixin, Accountant):
    """Certified upper bound on the worst case over datasets: exact max over n_x0 for k = 2 (see module)."""

    name = "worst-case-upper"
    label = "worst-case-upper"
    colour = "#EE3377"
    kind = BoundKind.UPPER
    scope = (
        "all neighbouring datasets (replace-one), both directions; for k = 2 the certified maximum over every "
        "dataset by branch and bound over n_x0 (within 1e-9 relative above it for n <= 10000 wherever "
        "weak-adversary's Chernoff bound is above e^-700, weak-adversary's value below that; within ~0.3% in "
        "epsilon for n <= 1e8); for k = 3 and n <= 200 the exact maximum over every (n_x0, n_x1) (1e-12 "
        "relative; by branch and bound over blocks of datasets above n = 64); for k >= 5 and n <= 24, and for k = 4 "
        "and n <= 50, the "
        "smallest of: a branch and bound over blocks of every dataset (n_x0, n_x1 and the spread of the rest; "
        "the exact maximum, within its rounding allowance, wherever the search closes, which it did on every "
        "enumerated k = 4, 5 case; above n = 24 its laws' dropped edges are added; otherwise the largest bound it "
        "left open), the own-value-hit bound (n <= 32) and "
        "weak-adversary's value; for k >= 5 and 24 < n <= 32 the certified maximum over every (n_x0, n_x1) of "
        "the own-value-hit views, valid for every spread of the rest (at most weak-adversary's value); for k = 3 and "
        "200 < n <= 10000 where 2 q (n - 1) <= 48 the smaller of weak-adversary's value and a branch and bound over "
        "blocks of every (n_x0, n_x1) on windowed laws, within 1% of the best dataset it found; otherwise "
        "(k >= 5 above n = 32, k = 4 above n = 50, or k = 3 above n = 200 elsewhere) weak-adversary's value"
    )
    reference = (
        "this package: exact histogram delta of k = 2 datasets and partial-knowledge views (post-processing) "
        "bounding blocks of datasets (k = 2 and k = 3); own-value-hit views for k >= 4 at small n "
        "(docs/worst-case-k3.md); blocks of datasets for k >= 5 at n <= 24 and k = 4 at n <= 50 (docs/worst-case-k4.md); "
        "Koskela, Heikkila, Honkela (2021) Def. 3 for k >= 4 beyond"
    )

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        check_epsilon_local_finite(self.setting.epsilon_local, self.name)
        self._weak = WeakView(self.setting)
        self._binary = self.setting.k == 2 and self.setting.n_users <= MAX_USERS_K2
        self._large = self.setting.k == 2 and MAX_USERS_K2 < self.setting.n_users <= MAX_USERS_K2_LARGE
        self._k3 = self.setting.k == 3 and self.setting.n_users <= MAX_USERS_K3_BLOCKS
        self._k3_large = self.setting.k == 3 and k3_large.searched(
            self.setting.n_users, self.setting.epsilon_local
        )
        self._own = self.setting.k >= 4 and self.setting.n_users <= MAX_USERS_OWN_HITS
        self._k4 = self.setting.k >= 4 and self.setting.n_users <= k4_max_users(self.setting.k)
        # a search of its own runs (else this accountant is weak-adversary's value)
        self._searched = self._binary or self._large or self._k3 or self._k3_large or self._own or self._k4
        self._cache: dict = {}

    def _log_parts(self, eps: float, K: float) -> tuple[float, float]:  # pragma: no cover - not used
        raise NotImplementedError

    def log_delta_parts(
        self, eps: float, log_target: float | None = None, start_K: float = 8.0
    ) -> tuple[float, float]:
        """(-inf, log certified upper value): the value is one certified number, no separate remainder."""
        self.last_K = start_K
        bound = self._weak.chernoff.log_delta(float(eps))
        if not self._searched or bound < -700.0 or (log_target is not None and bound <= log_target):
            weak_parts = self._weak.log_delta_parts(eps, log_target, start_K)
            if not self._searched:
                return weak_parts
            return -np.inf, float(np.logaddexp(*weak_parts))
        s = self.setting
        if self._k3:
            return -np.inf, min(
                _log(exact_worst(float(eps), n_users=s.n_users, epsilon_local=s.epsilon_local).upper), 0.0
            )
        if self._k3_large:
            # k = 3 above n = 200 where the laws are narrow: blocks within 1% of the best dataset (issue 34)
            top = k3_large.large_worst(float(eps), n_users=s.n_users, epsilon_local=s.epsilon_local).upper
            return -np.inf, min(_log(top), self._weak_log(eps, start_K), 0.0)
        if self._own or self._k4:
            # k >= 4, small n: block search and own-value-hit views; every value is a certified upper bound
            return -np.inf, min(self._k4_logs(float(eps)) + [self._weak_log(eps, start_K), 0.0])
        if self._large:
            # pair-sum blocks (looser per block, O(sqrt(n)) each); both values are certified upper
            # bounds, so the smaller one is returned
            top, _, _ = large_forward_delta(
                float(eps), n_users=s.n_users, epsilon_local=s.epsilon_local, cache=self._cache
            )
            return -np.inf, min(top, self._weak_log(eps, start_K), 0.0)
        upper, _, _ = binary_forward_delta(
            float(eps), n_users=s.n_users, epsilon_local=s.epsilon_local, cache=self._cache
        )
        # capped by u's own report's delta (valid for every dataset; the search's rounding allowance could put it
        # 1.2e-12 above that: eps0 = 29, n = 2, eps = 14.5, the issue-34 sweep's slow profile)
        return -np.inf, min(_log(upper), float(OwnReportView(s).log_delta([float(eps)])[0]), 0.0)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """Where no search runs (this accountant is ``weak-adversary``'s value there: k >= 4 above
        MAX_USERS_OWN_HITS, k = 3 above MAX_USERS_K3_BLOCKS, k = 2 above MAX_USERS_K2_LARGE) all epsilons are
        evaluated together by the weak view (:meth:`~shuffledp.accounting.views.weak.view.WeakView.log_deltas`:
        tables shared between the epsilons, and the smaller of the sum and the differing user's own k-RR
        delta, both certified upper bounds, as ``weak-adversary`` reports); elsewhere one epsilon at a time."""
        if self._searched:
            return super().log_delta_for_epsilon(epsilons)
        return self._weak.log_deltas(self._checked_epsilons(epsilons))

    def _k4_logs(self, eps: float) -> list:
        """log of the k >= 4 searches' certified values at ``eps``: the block search (n <= k4_blocks.max_users(k))
        and the own-value-hit views (n <= MAX_USERS_OWN_HITS)."""
        s, out = self.setting, []
        if self._own and "own" not in self._cache:
            self._cache["own"] = OwnHitsSearch(n_users=s.n_users, k=s.k, epsilon_local=s.epsilon_local)
        if self._k4:
            if "k4" not in self._cache:
                self._cache["k4"] = K4BlockSearch(
                    n_users=s.n_users, k=s.k, epsilon_local=s.epsilon_local, own_hits=self._cache.get("own")
                )
            out.append(_log(self._cache["k4"].worst(eps).upper))
        if self._own:
            out.append(_log(self._cache["own"].worst(eps).upper))
        return out

    def _weak_log(self, eps: float, start_K: float) -> float:
        """log of ``weak-adversary``'s certified value (its two parts added): the fallback each search is capped by."""
        return float(np.logaddexp(*self._weak.log_delta_parts(eps, None, start_K)))

    def _epsilon_hint(self, log_target: float) -> float | None:
        return self._weak.epsilon_hint(log_target)

    def _epsilon_refine(self, log_target: float, eps: float, log_value: float) -> float | None:
        return self._weak.epsilon_refine(log_target, eps, log_value)
