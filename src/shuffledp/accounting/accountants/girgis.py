"""Renyi-DP accountants: the upper bounds of Girgis, Data, Diggavi, Kairouz, Suresh (CCS 2021) for the
shuffle model, and the numerical RDP of the k-RR clones pair (``clones-krr-rdp``).

They hold for every eps0-LDP randomizer (hence shuffled k-RR), replace-one neighbours, both directions;
``k`` is ignored. With n-bar = floor((n - 1) / (2 e^eps0)) + 1:

* ``girgis-rdp`` -- Thm 3.1, integer orders lambda >= 2:
  eps(lambda) <= log(1 + C(lambda, 2) (e^eps0 - 1)^2 / (n-bar e^eps0)
  + sum_{i=3}^{lambda} C(lambda, i) i Gamma(i/2) ((e^(2 eps0) - 1)^2 / (2 n-bar e^(2 eps0)))^(i/2)
  + e^(eps0 lambda - (n - 1) / (8 e^eps0))) / (lambda - 1).
* ``girgis-rdp-simple`` -- Thm 3.3, every real lambda > 1:
  eps(lambda) <= log(e^(lambda^2 (e^eps0 - 1)^2 / n-bar) + e^(eps0 lambda - (n - 1) / (8 e^eps0))) / (lambda - 1).
* ``girgis-rdp-lower`` -- Thm 3.4 (LOWER, k = 2 only): the Renyi divergence at integer orders of shuffled
  binary randomized response on the pair of datasets of its proof (every other user on x0; u on x0 vs
  x1), 1/(lambda - 1) log E[(1 + (e^(2 eps0) - 1)/(n e^eps0) (K - n/(e^eps0 + 1)))^lambda], K ~ Bin(n,
  1/(e^eps0 + 1)); its delta is that pair's exact delta (see the class).
* with ``subsample`` q < 1 (a uniformly random subset of m = q n users out of the population of n
  reports each round; ``n_users`` is the population n, the papers' convention), ``girgis-rdp`` uses
  their subsampled-shuffle bound, as evaluated in Koskela,
  Heikkila, Honkela's comparison code (clones_girgis_comparison_fig3/girgis_upper.py), with n-bar from m:
  log(1 + 4 C(lambda, 2) q^2 (e^eps0 - 1)^2 / (n-bar e^eps0)
  + sum_{j=3}^{lambda} C(lambda, j) q^j j Gamma(j/2) (2 (e^(2 eps0) - 1)^2 / (n-bar e^(2 eps0)))^(j/2) + Y) / (lambda - 1),
  Y = ((1 + q (e^(2 eps0) - 1) / (2 e^eps0))^lambda - 1 - lambda q (e^(2 eps0) - 1) / (2 e^eps0)) e^(-(m - 1) / (8 e^eps0)).

T rounds compose additively in RDP (T eps(lambda)). Conversion to (eps, delta): the improved bound of
Canonne, Kamath, Steinke (2020, Prop. 12), :mod:`shuffledp.accounting.numerics.rdp_conversion`,
minimised over integer orders 2..:data:`MAX_ORDER` (Thm 3.1) or a grid of real orders in (1, MAX_ORDER]
(Thm 3.3). Each minimum over a subset of orders is still a valid bound, so both are UPPER bounds
(they err upwards); all in log space.

``erlingsson-rdp`` -- the earlier RDP bound Girgis et al. compare with, their eq. (9) ("[21, Remark 1]",
"obtained by the standard conversion results from DP to RDP"), every real lambda > 1:
  eps(lambda) <= 2 lambda e^(4 eps0) (e^eps0 - 1)^2 / n.
Our copy of Girgis et al. does not show (9)'s formula; this is our reconstruction (docs/decisions/girgis.md):
Erlingsson et al. (SODA 2019, arXiv:1811.12469v2, Thm 7 and its proof) bound each of the n
steps of the shuffle by eps1 = 2 e^(2 eps0) (e^eps0 - 1) / n (pure DP); the standard conversion eps1-DP =>
(lambda, lambda eps1^2 / 2)-RDP (Bun & Steinke 2016, Prop. 1.4 with zCDP = RDP at every order) composed over
the n steps gives n lambda eps1^2 / 2, the formula above. It matches the two legible facts: it ends in "/ n",
and it is e^(4 eps0) times 2 lambda (e^eps0 - 1)^2 / n, the order of Thm 3.1's leading term ("worse than our
simplified bound ... by a multiplicative factor of e^{4 eps0}"). UPPER bound (checked >= the brute-force RDP
on tiny cases, tests/accounting/test_girgis_lower.py).

``clones-krr-rdp`` -- D_lambda of the pair of ``clones-krr`` (C ~ Bin(n - 1, 2q), weight (e^eps0 + 1) q) at
integer orders 2..256 (Koskela et al.'s delta_shuffler_renyi.py line 137), summed exactly in log space from
the pair's pmf (:mod:`shuffledp.accounting.views.clones.rdp`: an upper bound within e^-50 of the exact
divergence), composed as T D_lambda and converted as above. UPPER bound, all neighbouring datasets
(replace-one), both directions (the pair is symmetric); looser than ``clones-krr`` composed through PLDs
(the conversion loses). It is what Koskela et al.'s Fig. 1 "RDP" curves compute (with the order shifted:
docs/koskela-figures.md). Work ~ n^2 / 50 atoms x 255 orders: refuses n > 20,000.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp._validation import check_integer, check_probability, check_real
from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.numerics.rdp_conversion import rdp_to_epsilon, rdp_to_log_delta
from shuffledp.accounting.params import ShuffleSetting, users_per_round
from shuffledp.accounting.randomizers import Randomizer
from shuffledp.accounting.views.clones import rdp as rdp_view

__all__ = [
    "GirgisRDP",
    "GirgisRDPSimple",
    "GirgisRDPLower",
    "ErlingssonRDP",
    "ClonesKRRRDP",
    "MAX_ORDER",
    "MAX_USERS_CLONES_RDP",
]

#: largest Renyi order used in the conversion
MAX_ORDER = 256
_ALL = "all neighbouring datasets (replace-one), both directions (any eps0-LDP randomizer)"


def _select_orders(name: str, grid: np.ndarray, values: np.ndarray, orders) -> np.ndarray:
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    index = np.searchsorted(grid, orders)
    ok = (index < grid.size) & (grid[np.minimum(index, grid.size - 1)] == orders)
    if not ok.all():
        raise ValueError(
            f"`orders` must be integers in [2, {MAX_ORDER}] for {name!r}; got {float(orders[~ok][0])!r}."
        )
    return values[index]


class _GirgisBase(Accountant):
    """Shared parts: RDP curve (subclass), composition over T rounds, conversion to (eps, delta)."""

    kind = BoundKind.UPPER
    scope = _ALL
    #: takes ``compositions`` and ``subsample`` keywords (the CLI's --compositions / --subsample)
    accepts_compositions = True

    def __init__(
        self,
        *,
        epsilon_local: float | None = None,
        n_users: int,
        k: int | None = None,
        n_x0: int | None = None,
        compositions: int = 1,
        subsample: float = 1.0,
        randomizer: Randomizer | None = None,
    ):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0, randomizer=randomizer)
        self.compositions = check_integer(compositions, "compositions", low=1, high=10**9)
        self.subsample = check_real(subsample, "subsample", low=0.0, high=1.0, low_open=True)
        #: users sampled each round, m = q n (n itself when q = 1)
        self.users_per_round = users_per_round(self.setting.n_users, self.subsample)
        if self.setting.epsilon_local > 50.0:
            raise ValueError(
                f"`epsilon_local` must be in (0, 50] for {self.name!r}; got {self.setting.epsilon_local!r}."
            )

    def _n_bar(self) -> float:
        n, e0 = self.users_per_round, self.setting.epsilon_local
        return math.floor((n - 1) / (2.0 * math.exp(e0))) + 1.0

    def _orders_rdp(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def rdp(self) -> tuple[np.ndarray, np.ndarray]:
        """(orders, composed RDP epsilon at each order)."""
        orders, rdp = self._orders_rdp()
        return orders, self.compositions * rdp

    def rdp_at(self, orders) -> np.ndarray:
        """Composed RDP at the given ``orders`` (each must be one of :meth:`rdp`'s orders)."""
        return _select_orders(self.name, *self.rdp(), orders)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        orders, rdp = self.rdp()
        return rdp_to_log_delta(orders, rdp, epsilons)

    def epsilon_for_delta(self, delta: float, *, tolerance: float = 1e-10) -> float:
        """Closed form: minimum over orders of the conversion (an upper bound on the true epsilon)."""
        delta = check_probability(delta, "delta", allow_zero=False, allow_one=True)
        orders, rdp = self.rdp()
        return rdp_to_epsilon(orders, rdp, delta)


class GirgisRDP(_GirgisBase):
    """Girgis et al. (2021) Thm 3.1 (or their subsampled-shuffle bound when ``subsample`` < 1)."""

    name = "girgis-rdp"
    randomizers = (Randomizer,)  # Thm 3.1 holds for every eps0-LDP randomizer
    label = "girgis-rdp"
    colour = "#004488"
    reference = (
        "Girgis, Data, Diggavi, Kairouz, Suresh (CCS 2021) Thm 3.1 (subsampled: their subsampled-shuffle "
        "bound as evaluated in Koskela et al.'s girgis_upper.py); RDP -> (eps, delta) by Canonne, Kamath, "
        "Steinke (2020)"
    )

    def _orders_rdp(self):
        e0, n = self.setting.epsilon_local, self.users_per_round
        n_bar = self._n_bar()
        orders = np.arange(2, MAX_ORDER + 1, dtype=float)
        q = self.subsample
        log_e2 = 2.0 * math.log(math.expm1(2.0 * e0)) if e0 > 0 else -np.inf  # log (e^(2 eps0) - 1)^2
        out = np.empty(orders.size)
        for idx, lam in enumerate(orders):
            i = np.arange(3, int(lam) + 1, dtype=float)
            log_choose_i = gammaln(lam + 1.0) - gammaln(i + 1.0) - gammaln(lam - i + 1.0)
            log_two = (
                math.log(lam * (lam - 1.0) / 2.0) + 2.0 * math.log(math.expm1(e0)) - math.log(n_bar) - e0
            )
            if q == 1.0:
                log_base = log_e2 - math.log(2.0 * n_bar) - 2.0 * e0
                series = log_choose_i + np.log(i) + gammaln(i / 2.0) + (i / 2.0) * log_base
                tail = e0 * lam - (n - 1.0) / (8.0 * math.exp(e0))
                terms = np.concatenate([[0.0, log_two, tail], series])
            else:
                log_base = math.log(2.0) + log_e2 - math.log(n_bar) - 2.0 * e0
                series = log_choose_i + i * math.log(q) + np.log(i) + gammaln(i / 2.0) + (i / 2.0) * log_base
                x = q * math.expm1(2.0 * e0) / (2.0 * math.exp(e0))
                # (1 + x)^lam - 1 - lam x >= 0, formed without cancellation for small x
                y_inner = math.expm1(lam * math.log1p(x)) - lam * x
                y_inner = max(y_inner, 0.0)
                log_y = (math.log(y_inner) if y_inner > 0 else -np.inf) - (n - 1.0) / (8.0 * math.exp(e0))
                terms = np.concatenate([[0.0, math.log(4.0) + 2.0 * math.log(q) + log_two, log_y], series])
            out[idx] = float(logsumexp(terms)) / (lam - 1.0)
        return orders, out


class _ClosedFormRDP(_GirgisBase):
    """An RDP bound in closed form at every real order > 1 (subclasses give ``_formula``, one round's RDP, and
    ``no_subsampled_form``, why ``subsample`` < 1 is refused)."""

    no_subsampled_form: str = ""
    randomizers = (Randomizer,)  # Thm 3.3 and eq. (9) hold for every eps0-LDP randomizer

    def __init__(self, **parameters):
        super().__init__(**parameters)
        if self.subsample != 1.0:
            raise ValueError(
                f"`subsample` must be 1 for {self.name!r} ({self.no_subsampled_form}); "
                f"got {self.subsample!r}."
            )

    def _formula(self, orders: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _orders_rdp(self):
        orders = np.concatenate([1.0 + np.geomspace(1e-3, 1.0, 60)[:-1], np.linspace(2.0, MAX_ORDER, 1000)])
        return orders, self._formula(orders)

    def rdp_at(self, orders) -> np.ndarray:
        """Composed RDP of the closed form at any real ``orders`` > 1."""
        orders = np.atleast_1d(np.asarray(orders, dtype=float))
        if not np.all(orders > 1.0):
            raise ValueError(
                f"`orders` must be in (1, inf) for {self.name!r}; got {float(orders[orders <= 1.0][0])!r}."
            )
        return self.compositions * self._formula(orders)


class GirgisRDPSimple(_ClosedFormRDP):
    """Girgis et al. (2021) Thm 3.3 (real orders); refuses ``subsample`` < 1 (no subsampled form given)."""

    name = "girgis-rdp-simple"
    label = "girgis-rdp-simple"
    colour = "#997700"
    reference = (
        "Girgis, Data, Diggavi, Kairouz, Suresh (CCS 2021) Thm 3.3; RDP -> (eps, delta) by Canonne, Kamath, "
        "Steinke (2020)"
    )

    no_subsampled_form = "Thm 3.3 has no subsampled form; use 'girgis-rdp'"

    def _formula(self, orders: np.ndarray) -> np.ndarray:
        e0, n = self.setting.epsilon_local, self.setting.n_users
        first = orders**2 * math.expm1(e0) ** 2 / self._n_bar()
        second = e0 * orders - (n - 1.0) / (8.0 * math.exp(e0))
        return np.logaddexp(first, second) / (orders - 1.0)


class ErlingssonRDP(_ClosedFormRDP):
    """Girgis et al.'s eq. (9), the earlier bound of their comparison: 2 lambda e^(4 eps0) (e^eps0 - 1)^2 / n at
    every real order > 1 (module docstring: our reconstruction and its source); refuses ``subsample`` < 1."""

    name = "erlingsson-rdp"
    label = "erlingsson-rdp"
    colour = "#0077FF"
    reference = (
        "Girgis et al. (CCS 2021) eq. (9) ([21, Remark 1]), reconstructed as Erlingsson et al. (SODA 2019) Thm 7's "
        "per-step eps1 = 2 e^(2 eps0)(e^eps0 - 1)/n converted to RDP (Bun & Steinke 2016) and composed over n steps"
    )

    no_subsampled_form = "eq. (9) has no subsampled form"

    def _formula(self, orders: np.ndarray) -> np.ndarray:
        e0, n = self.setting.epsilon_local, self.setting.n_users
        log_scale = math.log(2.0) + 4.0 * e0 + 2.0 * math.log(math.expm1(e0)) - math.log(n)
        return orders * math.exp(log_scale)


#: relative bound on the rounding of a log ratio of :func:`_lower_pair_logs` (a logaddexp of two logs and a
#: subtraction of log n: a few ulp of the largest magnitude involved, eps0 + log n + 1), with a factor 4 to spare
_RATIO_ROUNDING = 16.0 * 2.0**-52


def _lower_pair_logs(epsilon_local: float, n_users: int):
    """(log Bin(n, p)(K), log ratio_K, d_K = ratio_K - 1) over a window of K ~ Bin(n, p), p = 1/(e^eps0 + 1).

    Binary RR, every user on x0 except that u holds x0 (P0) or x1 (P1); K counts the reports of x1. Under
    P0, K ~ Bin(n, p), and P1(k) / P0(k) = ratio_k = 1 + d_k, d_k = (e^(2 eps0) - 1)/(n e^eps0) (k - n p)
    (Girgis et al., Thm 3.4's proof). Terms outside the window are dropped, which only lowers every sum
    below (the values stay lower bounds). Window: the whole support for n <= 2 10^5, else 60 standard
    deviations plus the largest tilt that order MAX_ORDER gives to the law.
    """
    n = float(n_users)
    log_p = -float(np.logaddexp(epsilon_local, 0.0))  # log 1/(e^eps0 + 1)
    # log(1 - p) = -log1p(e^-eps0), not eps0 + log p: that difference of two numbers of size eps0 has ~eps0 ulp of
    # absolute error in a result of size e^-eps0, and n log(1 - p) is log Pr(K = 0) (at eps0 = 25,
    # n = 10^6 that error puts the lower bound 3.9e-10 in log delta above the weak adversary, an upper bound)
    log_1mp = -float(np.logaddexp(0.0, -epsilon_local))
    if n_users <= 200_000:
        k = np.arange(0.0, n + 1.0)
    else:
        mean, sd = n * math.exp(log_p), math.sqrt(n * math.exp(log_p + log_1mp))
        tilt = MAX_ORDER * math.expm1(2.0 * epsilon_local) * math.exp(log_1mp + log_p - epsilon_local)
        lo, hi = max(0.0, math.floor(mean - 60.0 * sd)), min(n, math.ceil(mean + 60.0 * sd + tilt * 60.0))
        k = np.arange(lo, hi + 1.0)
    log_pmf = log_binom_pmf_loader(k, n, log_p, log_1mp)
    d = math.expm1(2.0 * epsilon_local) * math.exp(-epsilon_local) / n * (k - n * math.exp(log_p))
    with np.errstate(
        divide="ignore"
    ):  # log ratio from its two positive parts (d alone rounds to -1 at large eps0)
        log_ratio = np.logaddexp(-epsilon_local + np.log(n - k), epsilon_local + np.log(k)) - math.log(n)
    return log_pmf, log_ratio, d


def _log_convex_excess(order: float, log_ratio: np.ndarray, d: np.ndarray) -> np.ndarray:
    """log(r^lambda - 1 - lambda (r - 1)) >= 0-argument, r = 1 + d, without cancellation (series for small
    lambda d, log1p form for large lambda log r); -inf where it is 0."""
    x = order * log_ratio
    out = np.full(d.shape, -np.inf)
    small = np.abs(order * d) < 1e-2
    if small.any():  # sum_{j=2}^{9} C(lambda, j) d^j: truncation error ~ (lambda d)^10 / 10! relative
        ds, total, coefficient = d[small], np.zeros(int(small.sum())), 1.0
        for j in range(2, 10):
            coefficient = order * (order - 1.0) / 2.0 if j == 2 else coefficient * (order - j + 1.0) / j
            total += coefficient * ds**j
        with np.errstate(divide="ignore"):
            out[small] = np.log(np.maximum(total, 0.0))
    large = (~small) & (x > 1.0)
    out[large] = x[large] + np.log1p(-(1.0 + order * d[large]) * np.exp(-x[large]))
    middle = (~small) & (x <= 1.0)
    with np.errstate(divide="ignore"):
        out[middle] = np.log(np.maximum(np.expm1(x[middle]) - order * d[middle], 0.0))
    return out


class GirgisRDPLower(Accountant):
    """Girgis et al. (2021) Thm 3.4: the RDP of shuffled binary randomized response on one pair of datasets.

    ``rdp()`` gives (orders 2..MAX_ORDER, Thm 3.4's lower bound on the Renyi DP at each integer order),
    evaluated as the sum it expands, 1/(lambda - 1) log E_{K ~ Bin(n, p)}[ratio_K^lambda] (equation (10)
    is its binomial expansion in the central moments of K; a test checks the two agree). What it
    lower-bounds: the order-lambda Renyi DP of the shuffled 2-RR histogram (sup over neighbouring datasets),
    hence also the worst case over all eps0-LDP randomizers that Thm 3.1 and 3.3 bound from above. It is
    NOT a lower bound on the RDP of shuffled k-RR for k >= 3 (a different channel), so k must be 2.
    ``log_delta_for_epsilon``: the exact delta (max of both directions) of the same pair of datasets, a
    lower bound on the worst-case delta of shuffled 2-RR. Composes over T rounds (T times the RDP; the
    delta is then refused: a composed RDP lower bound gives no delta lower bound through a conversion).
    """

    name = "girgis-rdp-lower"
    label = "girgis-rdp-lower"
    colour = "#CC11CC"
    kind = BoundKind.LOWER
    scope = (
        "k = 2 only (binary randomized response, the mechanism of the theorem's proof): lower bound on the "
        "worst case over neighbouring datasets (replace-one) -- the exact divergences of the pair 'every "
        "other user on x0, u on x0 vs x1'; rdp(): Thm 3.4's Renyi DP at integer orders 2..256"
    )
    reference = "Girgis, Data, Diggavi, Kairouz, Suresh (CCS 2021) Thm 3.4 (eq. (10)) and its proof's pair"
    accepts_compositions = True

    def __init__(
        self,
        *,
        epsilon_local: float,
        n_users: int,
        k: int,
        n_x0: int | None = None,
        compositions: int = 1,
        subsample: float = 1.0,
    ):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        if self.setting.k != 2:
            raise ValueError(
                f"`k` must be an integer in [2, 2] for {self.name!r} (Thm 3.4 is about binary "
                f"randomized response); got {k!r}."
            )
        if self.setting.n_users > 10**9:
            raise ValueError(
                f"`n_users` must be an integer in [1, 1000000000] for {self.name!r} (its window "
                f"grows as sqrt(n)); got {n_users!r}."
            )
        if self.setting.epsilon_local > 50.0:
            raise ValueError(f"`epsilon_local` must be in (0, 50] for {self.name!r}; got {epsilon_local!r}.")
        self.compositions = check_integer(compositions, "compositions", low=1, high=10**9)
        self.subsample = check_real(subsample, "subsample", low=1.0, high=1.0)

    def rdp(self) -> tuple[np.ndarray, np.ndarray]:
        """(orders 2..MAX_ORDER, T times Thm 3.4's lower bound on the Renyi DP at each order).

        Since E[ratio] = 1, E[ratio^lambda] = 1 + E[f(ratio)] with f(r) = r^lambda - 1 - lambda (r - 1) >= 0
        (convexity): summed in log space with no cancellation, so the RDP keeps full relative precision
        down to 1e-300 (it is ~ lambda (e^eps0 - 1)^2 / (2 n e^eps0))."""
        log_pmf, log_ratio, d = _lower_pair_logs(self.setting.epsilon_local, self.setting.n_users)
        orders = np.arange(2, MAX_ORDER + 1, dtype=float)
        values = np.array(
            [
                float(np.logaddexp(0.0, logsumexp(log_pmf + _log_convex_excess(lam, log_ratio, d))))
                for lam in orders
            ]
        ) / (orders - 1.0)
        return orders, self.compositions * values

    def rdp_at(self, orders) -> np.ndarray:
        """Composed Thm 3.4 RDP at the given integer ``orders`` in [2, MAX_ORDER]."""
        return _select_orders(self.name, *self.rdp(), orders)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        if self.compositions != 1:
            raise ValueError(
                f"`compositions` must be an integer in [1, 1] for the delta of {self.name!r} (an RDP "
                f"lower bound converts to no delta lower bound); got {self.compositions}."
            )
        eps0 = self.setting.epsilon_local
        log_pmf, log_ratio, _ = _lower_pair_logs(eps0, self.setting.n_users)
        # A lower bound rounds down: each log ratio is moved by a bound on its rounding error towards
        # the side that shrinks its term (down for the forward terms, up for the backward ones), inside
        # [-eps0, eps0], where the true ratio lies (a mixture of e^-eps0 and e^eps0). Without this the term
        # K = n, whose log ratio is eps0 up to 1 ulp, gave delta(eps0) = 2.9e-17 > 0 = the truth at
        # eps0 = 0.5, n = 2 (tests/accounting/test_validity_sweep.py).
        slack = _RATIO_ROUNDING * (eps0 + math.log(self.setting.n_users) + 1.0)
        ratio_down = np.clip(log_ratio - slack, -eps0, eps0)
        ratio_up = np.clip(log_ratio + slack, -eps0, eps0)
        out = np.empty(epsilons.shape)
        for i, eps in np.ndenumerate(epsilons):
            if not np.isfinite(eps):
                out[i] = -np.inf
                continue
            up = ratio_down > eps  # H(P1 || P0) = sum P0 (ratio - e^eps)_+
            down = ratio_up < -eps  # H(P0 || P1) = sum P0 (1 - e^eps ratio)_+
            forward = log_pmf[up] + ratio_down[up] + log1mexp(eps - ratio_down[up])
            backward = log_pmf[down] + log1mexp(eps + ratio_up[down])
            values = [float(logsumexp(t)) for t in (forward, backward) if t.size]
            out[i] = min(0.0, max(values)) if values else -np.inf
        return out


#: largest n accepted (the exact sum has ~n^2 / 50 atoms at eps0 = 4)
MAX_USERS_CLONES_RDP = 20_000


@lru_cache(maxsize=32)
def _rdp(epsilon_local: float, n_users: int, k: int):
    return rdp_view.clones_rdp(ShuffleSetting(epsilon_local=epsilon_local, n_users=n_users, k=k), False)


class ClonesKRRRDP(_GirgisBase):
    """Numerical RDP of the k-RR clones pair, composed in RDP and converted (module docstring)."""

    name = "clones-krr-rdp"
    label = "clones, k-RR by joint convexity (ours), numerical RDP (upper bound)"
    colour = "#996655"
    scope = (
        "all neighbouring datasets (replace-one), both directions (k-RR; the pair of clones-krr, our "
        "derivation, not Feldman et al.'s 2023 pair; at k = 2 the 2021 clones pair itself)"
    )
    reference = (
        "Renyi divergence of clones-krr's pair (the clones reduction of Feldman, McMillan, Talwar 2021, Sec. 3, "
        "specialised to k-RR by joint convexity; Koskela, Heikkila, Honkela's delta_shuffler_renyi.py computes "
        "the k = 2 pair) at orders 2..256; RDP -> (eps, delta) by Canonne, Kamath, Steinke (2020)"
    )

    def __init__(self, **parameters):
        super().__init__(**parameters)
        if self.subsample != 1.0:
            raise ValueError(
                f"`subsample` must be 1 for {self.name!r} (no subsampled RDP here); got {self.subsample!r}."
            )
        if self.setting.n_users > MAX_USERS_CLONES_RDP:
            raise ValueError(
                f"`n_users` must be in [2, {MAX_USERS_CLONES_RDP}] for {self.name!r} (exact sum over ~n^2 "
                f"atoms); got {self.setting.n_users!r}."
            )

    def _orders_rdp(self):
        s = self.setting
        return _rdp(float(s.epsilon_local), int(s.n_users), int(s.k))
