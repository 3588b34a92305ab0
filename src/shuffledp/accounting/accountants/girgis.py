"""Renyi-DP accountants: the upper bounds of Girgis, Data, Diggavi, Kairouz, Suresh (CCS 2021) for the
shuffle model, and the numerical RDP of the k-RR clones pair (``clones-krr-rdp``, issue 21).

They hold for every eps0-LDP randomizer (hence shuffled k-RR), replace-one neighbours, both directions;
``k`` is ignored. With n-bar = floor((n - 1) / (2 e^eps0)) + 1:

* ``girgis-rdp`` -- Thm 3.1, integer orders lambda >= 2:
  eps(lambda) <= log(1 + C(lambda, 2) (e^eps0 - 1)^2 / (n-bar e^eps0)
  + sum_{i=3}^{lambda} C(lambda, i) i Gamma(i/2) ((e^(2 eps0) - 1)^2 / (2 n-bar e^(2 eps0)))^(i/2)
  + e^(eps0 lambda - (n - 1) / (8 e^eps0))) / (lambda - 1).
* ``girgis-rdp-simple`` -- Thm 3.3, every real lambda > 1:
  eps(lambda) <= log(e^(lambda^2 (e^eps0 - 1)^2 / n-bar) + e^(eps0 lambda - (n - 1) / (8 e^eps0))) / (lambda - 1).
* with ``subsample`` q < 1 (a uniformly random subset of m = q n users out of the population of n
  reports each round; ``n_users`` is the population n, the papers' convention), ``girgis-rdp`` uses
  their subsampled-shuffle bound, as evaluated in Koskela,
  Heikkila, Honkela's comparison code (clones_girgis_comparison_fig3/girgis_upper.py), with n-bar from m:
  log(1 + 4 C(lambda, 2) q^2 (e^eps0 - 1)^2 / (n-bar e^eps0)
  + sum_{j=3}^{lambda} C(lambda, j) q^j j Gamma(j/2) (2 (e^(2 eps0) - 1)^2 / (n-bar e^(2 eps0)))^(j/2) + Y) / (lambda - 1),
  Y = ((1 + q (e^(2 eps0) - 1) / (2 e^eps0))^lambda - 1 - lambda q (e^(2 eps0) - 1) / (2 e^eps0)) e^(-(m - 1) / (8 e^eps0)).

T rounds compose additively in RDP (T eps(lambda)). Conversion to (eps, delta): the improved bound of
Canonne, Kamath, Steinke (2020, Prop. 12; also Asoodeh et al. 2021), the one used by dp_accounting's
RDP accountant and by Koskela et al.'s code:

    delta(eps) = min_lambda exp((lambda - 1)(T eps(lambda) - eps)) / lambda * (1 - 1/lambda)^(lambda - 1),
    eps(delta) = min_lambda T eps(lambda) + (log(1/delta) + (lambda - 1) log(1 - 1/lambda) - log lambda) / (lambda - 1),

minimised over integer orders 2..:data:`MAX_ORDER` (Thm 3.1) or a grid of real orders in (1, MAX_ORDER]
(Thm 3.3). Each minimum over a subset of orders is still a valid bound, so both are UPPER bounds
(they err upwards); all in log space.

``clones-krr-rdp`` -- D_lambda of the pair of ``clones-krr`` (C ~ Bin(n - 1, 2q), weight (e^eps0 + 1) q) at
integer orders 2..256 (Koskela et al.'s delta_shuffler_renyi.py line 137), summed exactly in log space from
the pair's pmf (:mod:`shuffledp.accounting.views.rdp`: an upper bound within e^-50 of the exact
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

from shuffledp._numerics import logsumexp
from shuffledp._validation import check_integer, check_probability, check_real
from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.params import users_per_round
from shuffledp.accounting.views import rdp as rdp_view

__all__ = ["GirgisRDP", "GirgisRDPSimple", "ClonesKRRRDP", "rdp_to_log_delta", "rdp_to_epsilon", "MAX_ORDER",
           "MAX_USERS_CLONES_RDP"]

#: largest Renyi order used in the conversion
MAX_ORDER = 256
_ALL = "all neighbouring datasets (replace-one), both directions (any eps0-LDP randomizer)"


def rdp_to_log_delta(orders, rdp, epsilons) -> np.ndarray:
    """log delta(eps) from RDP values by Canonne-Kamath-Steinke's conversion (module docstring)."""
    orders = np.asarray(orders, dtype=float)[:, None]
    rdp = np.asarray(rdp, dtype=float)[:, None]
    eps = np.asarray(epsilons, dtype=float)[None, :]
    with np.errstate(invalid="ignore", over="ignore"):
        log_delta = (orders - 1.0) * (rdp - eps) - np.log(orders) + (orders - 1.0) * np.log1p(-1.0 / orders)
    log_delta = np.where(np.isnan(log_delta), np.inf, log_delta)
    return np.minimum(0.0, np.min(log_delta, axis=0))


def rdp_to_epsilon(orders, rdp, delta: float) -> float:
    """Smallest eps over the orders for a target delta (module docstring); >= 0."""
    orders = np.asarray(orders, dtype=float)
    rdp = np.asarray(rdp, dtype=float)
    eps = rdp + (-math.log(delta) + (orders - 1.0) * np.log1p(-1.0 / orders) - np.log(orders)) / (orders - 1.0)
    return float(max(0.0, np.min(eps)))


class _GirgisBase(Accountant):
    """Shared parts: RDP curve (subclass), composition over T rounds, conversion to (eps, delta)."""

    kind = BoundKind.UPPER
    scope = _ALL
    #: takes ``compositions`` and ``subsample`` keywords (the CLI's --compositions / --subsample)
    accepts_compositions = True

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None,
                 compositions: int = 1, subsample: float = 1.0):
        super().__init__(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        self.compositions = check_integer(compositions, "compositions", low=1, high=10**9)
        self.subsample = check_real(subsample, "subsample", low=0.0, high=1.0, low_open=True)
        #: users sampled each round, m = q n (n itself when q = 1)
        self.users_per_round = users_per_round(self.setting.n_users, self.subsample)
        if self.setting.epsilon_local > 50.0:
            raise ValueError(f"`epsilon_local` must be in (0, 50] for {self.name!r}; got {epsilon_local!r}.")

    def _n_bar(self) -> float:
        n, e0 = self.users_per_round, self.setting.epsilon_local
        return math.floor((n - 1) / (2.0 * math.exp(e0))) + 1.0

    def _orders_rdp(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def rdp(self):
        """(orders, composed RDP epsilon at each order)."""
        orders, rdp = self._orders_rdp()
        return orders, self.compositions * rdp

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
            log_two = math.log(lam * (lam - 1.0) / 2.0) + 2.0 * math.log(math.expm1(e0)) - math.log(n_bar) - e0
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


class GirgisRDPSimple(_GirgisBase):
    """Girgis et al. (2021) Thm 3.3 (real orders); refuses ``subsample`` < 1 (no subsampled form given)."""

    name = "girgis-rdp-simple"
    label = "girgis-rdp-simple"
    colour = "#997700"
    reference = (
        "Girgis, Data, Diggavi, Kairouz, Suresh (CCS 2021) Thm 3.3; RDP -> (eps, delta) by Canonne, Kamath, "
        "Steinke (2020)"
    )

    def __init__(self, **parameters):
        super().__init__(**parameters)
        if self.subsample != 1.0:
            raise ValueError(
                f"`subsample` must be 1 for {self.name!r} (Thm 3.3 has no subsampled form; use 'girgis-rdp'); "
                f"got {self.subsample!r}."
            )

    def _orders_rdp(self):
        e0, n = self.setting.epsilon_local, self.setting.n_users
        orders = np.concatenate([1.0 + np.geomspace(1e-3, 1.0, 60)[:-1], np.linspace(2.0, MAX_ORDER, 1000)])
        first = orders**2 * math.expm1(e0) ** 2 / self._n_bar()
        second = e0 * orders - (n - 1.0) / (8.0 * math.exp(e0))
        return orders, np.logaddexp(first, second) / (orders - 1.0)


#: largest n accepted (the exact sum has ~n^2 / 50 atoms at eps0 = 4)
MAX_USERS_CLONES_RDP = 20_000


@lru_cache(maxsize=32)
def _rdp(epsilon_local: float, n_users: int, k: int):
    return rdp_view.clones_rdp(epsilon_local, n_users, k)


class ClonesKRRRDP(_GirgisBase):
    """Numerical RDP of the k-RR clones pair, composed in RDP and converted (module docstring)."""

    name = "clones-krr-rdp"
    label = "clones, k-RR specific, numerical RDP (upper bound)"
    colour = "#996655"
    scope = "all neighbouring datasets (replace-one), both directions (k-RR)"
    reference = (
        "Renyi divergence of the k-RR clones pair (Feldman, McMillan, Talwar 2021, Sec. 3; as in Koskela, "
        "Heikkila, Honkela's delta_shuffler_renyi.py) at orders 2..256; RDP -> (eps, delta) by Canonne, "
        "Kamath, Steinke (2020)"
    )

    def __init__(self, **parameters):
        super().__init__(**parameters)
        if self.subsample != 1.0:
            raise ValueError(f"`subsample` must be 1 for {self.name!r} (no subsampled RDP here); got {self.subsample!r}.")
        if self.setting.n_users > MAX_USERS_CLONES_RDP:
            raise ValueError(f"`n_users` must be in [2, {MAX_USERS_CLONES_RDP}] for {self.name!r} (exact sum over ~n^2 "
                             f"atoms); got {self.setting.n_users!r}.")

    def _orders_rdp(self):
        s = self.setting
        return _rdp(float(s.epsilon_local), int(s.n_users), int(s.k))
