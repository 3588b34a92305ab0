"""Theorem IV.1 of Biswas, Jung & Palamidessi: delta of one bin's count, as printed and exact.

Where the delta is computed: the single-bin view, :class:`~shuffledp.accounting.views.single_bin.view.SingleBinView`
(count law, cached blocks, tail sums); this module states what each delta is and derives the law.

Setting (paper, Section IV): n users apply k-RR with local parameter eps0, p = e^eps0 / (e^eps0 + k - 1)
(report the true value), q = 1 / (e^eps0 + k - 1) (each other value). User u holds x0 in D(x0) and
x1 in D(x1); ``n_x0`` of the other n - 1 users hold x0 and the remaining N - 1 = n - 1 - n_x0 hold
values other than x0 (which ones does not matter for this query). The released statistic is the
count S of reports equal to x0:

    S = I + R + T,  R ~ Bin(n_x0, p),  T ~ Bin(N - 1, q),  I ~ Bern(p) under D(x0), Bern(q) under D(x1).

Under D(x1), S = R + T' with T' ~ Bin(N, q) (u is then one more user off x0), so P1 is the
convolution of Bin(n_x0, p) and Bin(N, q); and with the identity C(N - 1, j - 1) = (j / N) C(N, j)
the paper's eq. (11)-(13) give the likelihood ratio

    P0(s) / P1(s) = kappa_2 + (e^eps0 - kappa_2) * E[(s - R) / N | S = s]          (exact)

where the expectation is under P1 (R given R + T' = s). Theorem IV.1 *as printed* multiplies by
(s - r)/(n - n_x0) **and** keeps C(n - 1 - n_x0, s - 1 - r), i.e. applies the identity twice, which
gives

    v_s(printed) = ln(kappa_2 + (e^eps0 - kappa_2) * E[((s - R) / N)^2 | S = s]).

Since 0 <= (s - R)/N <= 1 the printed v_s is <= the true privacy loss, so the printed delta is never
larger than the exact one (it understates by many orders of magnitude in Tables II and IV). The
weights of eq. (6), kappa_3 / (n - n_x0) * sum_r mu(s, r) tau_r, equal the correct P0(s) (eq. 12).

Numerics. Both ratios are conditional expectations of non-negative quantities, so everything is
computed as log-sum-exp of positive terms: no cancellation. For each s the conditional law of R
given S = s is log-concave in r (a product of two binomial pmfs), so it is summed over a window
around its mode whose ends are at least ``_WINDOW_DROP`` nats below the mode (the omitted mass is
< 1e-15 relative, by log-concavity). The privacy loss L_s is non-decreasing in s (Efron's theorem for
sums of log-concave variables), so delta(eps) = sum_{s >= s*} P0(s) (1 - e^(eps - L_s)) is a tail
sum: s* is found by bisection and the tail is summed in blocks until the remaining mass (bounded by
a geometric series, P0 being log-concave) is ``_TAIL_DROP`` nats below the running sum. Each term
is ``log P0(s) + log1mexp(eps - L_s)``. No FFT anywhere (it cannot resolve 1e-300 tails).

Memory and extremes. No table of size n is ever built: the binomial log-pmfs are evaluated on the
windows in use (Loader's saddle-point formula, full relative precision at any n; along the rows of
scattered s by exact ratio recurrences), so memory follows the windows, O(sqrt(n)) values, and chunks
of at most ``_MAX_CELLS`` (s, r) cells. A window sum costs O(sd_R) cells per s; from n = 10^7 on,
runs of consecutive s (the bulk, the tail walks) are instead evaluated by the three-term recurrence
of the convolution's pmf (:mod:`shuffledp.accounting.numerics.convolution`) from two
window sums per anchor every 1,024 or 8,192 counts, O(1) per s where its rounding bound holds
(window sums elsewhere), with the losses formed from neighbouring pmf ratios (views.single_bin).
From n = 10^7 on, too, the threshold search takes Illinois steps on the smooth loss (one window
sum each) and a walk starting inside the cached bulk sums it in one call. n is limited to
:data:`MAX_USERS_SINGLE_BIN` = 10^9 (a clear error beyond; epsilon at delta = 1e-6 takes about 3.5 CPU
seconds at 10^9 for eps0 = 1, k = 10, n_x0 = 0.8 n, against more than 5 minutes before). Every finite eps0 is accepted: all
quantities are logs (log kappa_1 instead of kappa_1, the mode of r -> g(s, r) found by bisection
on the log-ratio g(r + 1) - g(r), which stays finite where g itself underflows). For eps0 large the report is near-deterministic and the laws
concentrate on s = n_x0 (+1 under D(x0)); log-probabilities below the smallest double (-1.8e308,
e.g. two users misreporting at eps0 = 1e308) are -inf, and such outputs s are dropped: their mass is
below e^-1e308, invisible at any delta >= 1e-300 (dropping it errs low, the safe side for a lower
bound). Where P1(s) underflows the loss is set to its bound on that side (eps0 above the mean,
log kappa_2 below), which keeps the loss monotone for the threshold search and adds nothing.

Edge cases: the loss never exceeds eps0 (L_n = eps0 exactly: all users reported x0), so the forward
delta is 0 for eps >= eps0; the reverse loss never exceeds -ln kappa_2 = ln((e^eps0 + k - 2)/(k - 1)),
so the reverse delta is 0 beyond it (for k = 2 that is eps0 as well).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.params import Direction
from shuffledp.accounting.views.single_bin.view import (
    DIRECTIONS,
    MAX_USERS_SINGLE_BIN,
    SingleBinView,
    check_size,
)

__all__ = ["BiswasPrinted", "BiswasExact", "DIRECTIONS", "MAX_USERS_SINGLE_BIN"]

#: a certified bound decides a search step only when it is this far (in log delta) below the target
_BOUND_MARGIN = 1e-6


class _SingleBinAccountant(Accountant):
    """An accountant whose delta is the single-bin view's (its count law, cached blocks and tail sums)."""

    needs_n_x0 = True

    def __init__(self, **parameters):
        super().__init__(**parameters)
        check_size(self.name, self.setting.n_users)
        self._single_bin: SingleBinView | None = None

    def view(self) -> SingleBinView:
        """The single-bin view of the setting, built once (its cached blocks serve every later epsilon; not a
        ``view_class``: these bounds do not compose).

        Returns:
            the view.
        """
        if self._single_bin is None:
            self._single_bin = SingleBinView(self.setting)
        return self._single_bin


class BiswasPrinted(_SingleBinAccountant):
    """Eq. (6) with v_s exactly as printed in Theorem IV.1 (arXiv 2022), in log space.

    ``delta_hat(eps) = sum_s 1{v_s > eps} (1 - e^(eps - v_s)) P0(s)``, with the printed v_s (see the
    module docstring: it understates the privacy loss, so this delta is <= ``biswas-exact``'s).
    Reproduces the paper's Tables II ("Our delta", n = 100) and IV. Refuses n > :data:`MAX_USERS_SINGLE_BIN`
    = 10^9 (work ~ n p q); every finite eps0 is accepted (module docstring, "Memory and extremes").
    """

    name = "biswas-printed"
    label = "as printed (eq. 6)"
    colour = "#D55E00"
    kind = BoundKind.AS_PRINTED
    scope = (
        "the paper's eq. (6) with Theorem IV.1's v_s as printed (erroneous): x0-bin count only, "
        "one dataset (n_x0 others on x0), direction D(x0) vs D(x1); understates the exact value"
    )
    reference = "Biswas, Jung, Palamidessi (arXiv 2022), Theorem IV.1, Definition IV.2, eq. (3)-(6)"

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        return self.view().log_delta_one_direction(epsilons, "forward", printed=True)


class BiswasExact(_SingleBinAccountant):
    """Exact delta of the x0-bin count: hockey-stick divergence of its laws under D(x0) and D(x1).

    ``direction=Direction.REMOVE`` (default, the paper's): H_{e^eps}(P0 || P1); ``Direction.ADD``:
    H_{e^eps}(P1 || P0); ``Direction.BOTH``: the larger (the command line's strings are accepted too). Exact for the stated dataset (n_x0 others on x0, the
    rest anywhere off x0). As a delta of the whole k-bin histogram it is a *lower bound* (the x0
    count is a post-processing of the histogram), not a DP guarantee. Refuses n > :data:`MAX_USERS_SINGLE_BIN`
    = 10^9 (work ~ n p q); every finite eps0 is accepted (module docstring, "Memory and extremes").
    """

    name = "biswas-exact"
    label = "exact single-bin (forward)"
    variants: ClassVar[dict[str, tuple[str, str]]] = {
        "biswas-exact-both": ("exact single-bin (max of both directions)", "#77AADD")
    }
    colour = "#332288"
    kind = BoundKind.EXACT
    scope = (
        "x0-bin count only, one dataset (n_x0 other users on x0, the rest off x0), the chosen "
        "direction; a lower bound on the full histogram's delta for that dataset"
    )
    reference = (
        "hockey-stick divergence of the count law of Biswas et al. (arXiv 2022) eq. (11)-(13), corrected"
    )

    def __init__(self, *, epsilon_local, n_users, k, n_x0=None, direction: Direction = Direction.REMOVE):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        self.direction = Direction.parse(direction)

    def _certainly_below(self, epsilon: float, log_target: float) -> bool:
        return (
            self.direction is Direction.REMOVE
            and self.view().log_delta_bound(epsilon) < log_target - _BOUND_MARGIN
        )

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        if self.direction is Direction.BOTH:
            return self.view().log_delta(epsilons)
        return self.view().log_delta_one_direction(epsilons, self.direction)

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", direction={self.direction.value!r})"
