"""Delta of the full shuffled k-RR histogram: exact for one dataset, and a lower bound for many.

Where the delta is computed: the accountants' views, :class:`~shuffledp.accounting.views.histogram.view.HistogramView`
and :class:`~shuffledp.accounting.views.histogram.view.PairCountsView` (for k = 2, ``histogram-exact`` is
the single-bin view, :class:`~shuffledp.accounting.views.single_bin.view.SingleBinView`); this module states
what each delta is.

Setting as in :mod:`shuffledp.accounting.accountants.base`: u holds x0 in D(x0) and x1 in D(x1); ``n_x0`` of
the other n - 1 users hold x0. k-RR reports the true value w.p. p = e^eps0/(e^eps0 + k - 1) and each
other value w.p. q = 1/(e^eps0 + k - 1). Values are numbered x0 = 0, x1 = 1, x2 = 2, ...

``histogram-exact`` (EXACT, for the dataset "the other n - 1 - n_x0 users all hold one third value
x2"; for k = 2 no third value exists and they hold x1, so the histogram is (h0, n - h0) and its delta
is ``biswas-exact``'s). **Sufficient statistic.** Let Q be the law of the others' histogram and F the
joint law of the others' counts (G0, G2) in bins x0 and x2. Every other user reports each bin
outside {x0, x2} w.p. q whatever its value, so given (G0, G2) the others' reports outside {x0, x2}
are uniform multinomial over those k - 2 bins: Q(g) = F(g0, g2) mu(g_rest), mu the uniform
multinomial pmf. With h = u's report + others' and m = n - h0 - h2 (reports outside {x0, x2}):

    P0(h) = mu(h_rest) [p F(h0-1, h2) + q F(h0, h2-1) + q (k-2) F(h0, h2)]
    P1(h) = mu(h_rest) [q F(h0-1, h2) + q F(h0, h2-1) + (k-2) F(h0, h2) (q + (p - q) h1 / m)]

(using sum_{y outside {x0,x2}} mu(h_rest - e_y) = (k-2) mu(h_rest) and mu(h_rest - e_1) =
(k - 2)(h1/m) mu(h_rest)). The ratio P0/P1 depends on h only through (h0, h1, h2) -- equivalently
the counts of x0, x1, x2 and the total of the remaining k - 3 bins, n - h0 - h1 - h2 -- so the
hockey-stick divergence of the histogram equals that of the law of (h0, h1, h2), which is the
bracket times Bin(m, 1/(k-2))(h1) (the marginal of mu). F is built by exact dynamic programming
over the other users in log space; each cell's privacy loss comes from O(1) ratios of the same law
with the k-RR powers divided out (not log P0 - log P1); the cells are
sorted by privacy loss once, and each delta is a
log-sum-exp of ``log P0 + log1mexp(eps - L)`` over the cells with L > eps. Cost O(n^3): n is limited
to :data:`MAX_USERS_HISTOGRAM_EXACT` (clear error beyond).

``histogram-pair-lower`` (LOWER bound on the full histogram's delta). The pair (h0, h1) is a
post-processing of the histogram, so its hockey-stick divergence is <= the histogram's (data
processing). Its law depends only on n_x0 for every dataset in which no other user holds x1 (for
k >= 3; each such user reports x0 and x1 w.p. q each whatever its value); for k = 2 the others off
x0 necessarily hold x1 and the pair is the whole histogram. Hence it lower-bounds the histogram
delta for *any* spread of the remaining users over x2, ..., x_{k-1}.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.params import Direction
from shuffledp.accounting.views.histogram.view import MAX_USERS_HISTOGRAM_EXACT, HistogramView, PairCountsView
from shuffledp.accounting.views.single_bin.blocks import FirstBulks
from shuffledp.accounting.views.single_bin.view import SingleBinView, check_size

__all__ = ["HistogramExact", "HistogramPairLower", "MAX_USERS_HISTOGRAM_EXACT"]


class _HistogramAccountant(Accountant):
    """An accountant whose delta is its cell view's, in the chosen direction (``Direction.BOTH``: the view's own
    ``log_delta``, the larger of the two)."""

    needs_n_x0 = True
    #: the view of the cells (built on first use: its size is checked then)
    cell_view: type

    def __init__(self, *, epsilon_local, n_users, k, n_x0=None, direction: Direction = Direction.REMOVE):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        self.direction = Direction.parse(direction)
        self._cells = None
        #: the first bulks of counts shared by the single-bin views of histogram-exact at k = 2
        self._first_bulks: FirstBulks = {}

    def view(self):
        """The accountant's view (built once; not a ``view_class``: these bounds do not compose).

        Returns:
            the cell view of the setting.
        """
        if self._cells is None:
            self._cells = self.cell_view(self.setting)
        return self._cells

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """The view's delta in the chosen direction."""
        epsilons = self._checked_epsilons(epsilons)
        view = self.view()
        if self.direction is Direction.BOTH:
            return view.log_delta(epsilons)
        return view.log_delta_one_direction(epsilons, self.direction)

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + f", direction={self.direction.value!r})"


class HistogramExact(_HistogramAccountant):
    """Exact delta of the whole k-bin histogram for the dataset "n_x0 others on x0, the rest on x2".

    For k = 2 (no x2) the rest hold x1 and this equals ``biswas-exact``. ``direction`` as in
    ``biswas-exact``. n is limited to :data:`MAX_USERS_HISTOGRAM_EXACT` = 300 (O(n^3) work) except for k = 2, where
    ``biswas-exact``'s limit (10^9) applies. Every finite eps0 is accepted (log space throughout).
    """

    name = "histogram-exact"
    label = "full histogram, exact (n_x0 on x0, rest on a third value)"
    colour = "#44AA99"
    kind = BoundKind.EXACT
    scope = (
        "full k-bin histogram, one dataset: n_x0 other users on x0 and the remaining n - 1 - n_x0 "
        "on one third value x2 (on x1 when k = 2); the chosen direction"
    )
    reference = "hockey-stick divergence of the shuffled k-RR histogram via the sufficient statistic (h_x0, h_x1, h_x2)"
    cell_view = HistogramView

    def view(self):
        """The view: the histogram's cells for k >= 3; for k = 2 the x0 count is the whole histogram, and the
        view is the single-bin view (a new one per call, as the single-bin law was, whose first bulk of counts
        is the first call's: the same values a new view computes; its limit, 10^9, applies).

        Returns:
            the view of the setting.

        Raises:
            ValueError: k = 2 and ``n_users`` above the single-bin limit.
        """
        if self.setting.k == 2:
            check_size(self.name, self.setting.n_users)  # the single-bin law's limit (work ~ n p q)
            return SingleBinView(self.setting, self._first_bulks)
        return super().view()


class HistogramPairLower(_HistogramAccountant):
    """Exact delta of the pair (count of x0, count of x1): a LOWER bound on the histogram's delta.

    Valid for every dataset with n_x0 other users on x0 and none of the others on x1 (any spread of
    the rest over x2..x_{k-1}); for k = 2 the only such dataset. n <= :data:`MAX_USERS_HISTOGRAM_EXACT`.
    """

    name = "histogram-pair-lower"
    label = "full histogram, lower bound (pair counts)"
    colour = "#999933"
    kind = BoundKind.LOWER
    scope = (
        "lower bound on the full histogram's delta for every dataset with n_x0 other users on x0 and "
        "none of the others on x1 (any spread of the rest; k = 2: the rest on x1); the chosen direction"
    )
    reference = (
        "data processing: hockey-stick divergence of the (h_x0, h_x1) marginal of the shuffled k-RR histogram"
    )
    cell_view = PairCountsView
