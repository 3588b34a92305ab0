"""The parameters of the shuffled k-RR query, validated once and derived once (bottom layer of ``accounting``).

* :class:`ShuffleSetting`: n users, local epsilon_0, domain size k, and the dataset (``n_x0``).
* :class:`KrrParams`: every quantity of k-RR that a view uses, in logs, computed once without
  cancellation and named the same in every module (docs/adding-an-accountant.md lists them).
* :class:`BoundKind`: what an accountant's delta is relative to the tight delta it targets.
* :class:`LaplaceBlanket`: the blanket quantities of the eps0-LDP Laplace randomizer on [0, 1] (Balle et
  al. 2019, Lemmas 5.1 (2) and 5.8), the one non-k-RR randomizer of their Figure 3.

k-RR with local epsilon_0 over k values reports its true value with probability
p = e^eps0 / (e^eps0 + k - 1) and each other value with probability q = 1 / (e^eps0 + k - 1). As a
mixture (Balle et al. 2019, Sec. 4), it reports a uniform value (the *blanket*) with probability
gamma = k q and its true value otherwise; beta = e^eps0 - 1 = (p - q) / q.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from shuffledp._numerics import log1mexp, log_expm1
from shuffledp._validation import check_integer, check_real

__all__ = ["BoundKind", "ShuffleSetting", "KrrParams", "MAX_N_USERS", "MAX_K", "MAX_EPSILON_LOCAL",
           "check_epsilon_local_finite", "users_per_round", "LaplaceBlanket"]

#: largest number of users accepted by every accountant (integers up to 2^53 are exact floats)
MAX_N_USERS = 10**15
#: largest domain size accepted (k - 1 and k - 2 stay exact floats)
MAX_K = 10**15

#: e^(eps + eps0) with eps < eps0 must stay finite in double precision (the view is formed from it)
MAX_EPSILON_LOCAL = 350.0


def check_epsilon_local_finite(epsilon_local: float, name: str) -> None:
    """Refuse eps0 whose e^eps0 overflows (the view's probabilities would not be representable)."""
    if epsilon_local > MAX_EPSILON_LOCAL:
        raise ValueError(
            f"`epsilon_local` must be in (0, {MAX_EPSILON_LOCAL:g}] for {name!r} (e^(eps + eps0) must be finite); "
            f"got {epsilon_local!r}."
        )


def users_per_round(population: int, subsample: float) -> int:
    """m = q n: the users sampled each round from a population of ``population`` at rate ``subsample``.

    The papers' convention (Girgis et al. 2021; Koskela et al. 2023 "n = 10^5 users, subsampling ratio
    q = 0.01"): n is the population and each round a uniformly random subset of exactly m = q n users
    reports. A setting where q n is below 1 or not a whole number has no such m and is refused.
    """
    population = check_integer(population, "n_users", low=1, high=MAX_N_USERS)
    q = check_real(subsample, "subsample", low=0.0, high=1.0, low_open=True)
    m = q * population
    whole = round(m)
    if whole < 1 or abs(m - whole) > 1e-9 * max(1.0, m):
        raise ValueError(
            f"`subsample` x `n_users` must be a whole number >= 1 of users sampled per round (`n_users` is the "
            f"population); got subsample={q!r} x n_users={population} = {m:.10g}."
        )
    return int(whole)


class BoundKind(enum.Enum):
    """What an accountant's delta is, relative to the true (tight) delta it targets."""

    AS_PRINTED = "as printed"  # a formula exactly as printed in a paper, right or wrong
    EXACT = "exact"  # the tight delta for the stated dataset(s) and direction(s)
    UPPER = "upper bound"  # >= the tight delta for every dataset in its scope
    LOWER = "lower bound"  # <= the tight delta of the full histogram for datasets in its scope
    RATE = "asymptotic rate"  # an order-of-magnitude rate with constant 1; not a bound


@dataclass(frozen=True)
class ShuffleSetting:
    """Validated parameters of the shuffled k-RR histogram query."""

    epsilon_local: float
    n_users: int
    k: int
    n_x0: int | None = None

    def __post_init__(self):
        object.__setattr__(
            self,
            "epsilon_local",
            check_real(self.epsilon_local, "epsilon_local", low=0.0, low_open=True, high=math.inf, high_open=True),
        )
        object.__setattr__(self, "n_users", check_integer(self.n_users, "n_users", low=1, high=MAX_N_USERS))
        object.__setattr__(self, "k", check_integer(self.k, "k", low=2, high=MAX_K))
        if self.n_x0 is not None:
            object.__setattr__(
                self, "n_x0", check_integer(self.n_x0, "n_x0", low=0, high=self.n_users - 1)
            )

    @property
    def krr(self) -> "KrrParams":
        return KrrParams.of(self.epsilon_local, self.k)


def _log_beta(e0: float) -> float:
    """log(e^eps0 - 1): log(expm1) where expm1 is finite (2 ulp), the overflow-free form beyond."""
    return float(np.log(np.expm1(e0))) if e0 <= 700.0 else float(log_expm1(e0))


@dataclass(frozen=True)
class KrrParams:
    """Every derived quantity of k-RR(eps0, k), in logs (see the module docstring for p, q, gamma, beta).

    ``log_den`` = log(e^eps0 + k - 1); ``log_p``, ``log_q``, ``log_1mp``, ``log_1mq``; ``log_gamma``, ``log_1mgamma``;
    ``log_beta``; ``log_2q`` and ``log_1m2q`` (a blanket report lands on x0 or x1: 2q, and its
    complement (e^eps0 + k - 3) / (e^eps0 + k - 1)); ``log_rest`` = log(1 - p - q) = log((k - 2) q) and ``log_ppq`` = log(p + q);
    ``log_rho``, ``log_1mrho``: rho = (k - 2) / (e^eps0 + k - 3), the chance that a blanket report not
    on {x0, x1} is not the user's own value either (k = 2: rho = 0); ``log_alpha``, ``log_1malpha``:
    alpha = e^eps0 / (e^eps0 + 1), the binary randomized response of the clones pair.
    """

    epsilon_local: float
    k: int
    log_den: float = field(init=False)
    log_beta: float = field(init=False)
    log_p: float = field(init=False)
    log_q: float = field(init=False)
    log_1mp: float = field(init=False)
    log_1mq: float = field(init=False)
    log_gamma: float = field(init=False)
    log_1mgamma: float = field(init=False)
    log_2q: float = field(init=False)
    log_1m2q: float = field(init=False)
    log_rest: float = field(init=False)
    log_ppq: float = field(init=False)
    log_rho: float = field(init=False)
    log_1mrho: float = field(init=False)
    log_alpha: float = field(init=False)
    log_1malpha: float = field(init=False)

    def __post_init__(self):
        e0, k = float(self.epsilon_local), int(self.k)
        log_den = float(np.logaddexp(e0, math.log(k - 1.0)))
        log_beta = _log_beta(e0)
        # e^eps0 + k - 3, without cancellation
        log_den3 = log_beta if k == 2 else e0 if k == 3 else float(np.logaddexp(e0, math.log(k - 3.0)))
        # Each pair (x, 1 - x) is formed from the smaller of the two: its log is a difference of logs that
        # keeps its digits (the smaller is <= 1/2), and the other is log1mexp of it, accurate for every x.
        # Both were once differences of logs of size ~eps0: an absolute error of ~1e-16 eps0 in a log
        # near 0 (log(1 - 2q) at large eps0, log gamma at small eps0), which n - 1 users multiply into a
        # relative error of ~1e-16 eps0 n in every likelihood (1e-9 at n = 1e6, eps0 = 11), and 100 % of
        # log(1 - 2q) itself at eps0 = 32: enough to put upper bounds below lower bounds (issue 34).
        log_q = -log_den
        log_p, log_1mp = _complements(e0 - log_den, math.log(k - 1.0) - log_den)
        log_gamma, log_1mgamma = _complements(math.log(k) - log_den, log_beta - log_den)
        log_2q, log_1m2q = _complements(math.log(2.0) - log_den, log_den3 - log_den)
        log_rho, log_1mrho = (_complements(math.log(k - 2.0) - log_den3, log_beta - log_den3) if k > 2
                              else (-np.inf, 0.0))
        # a user on x0 reports x0 or x1 (p + q) or another value (1 - p - q = (k - 2) q)
        log_ppq, log_rest = (_complements(float(np.logaddexp(e0, 0.0)) - log_den, math.log(k - 2.0) - log_den)
                             if k > 2 else (0.0, -np.inf))
        values = {
            "log_den": log_den,
            "log_beta": log_beta,
            "log_p": log_p,
            "log_q": log_q,
            "log_1mp": log_1mp,
            "log_1mq": float(log1mexp(log_q)),
            "log_gamma": log_gamma,
            "log_1mgamma": log_1mgamma,
            "log_2q": log_2q,
            "log_1m2q": log_1m2q,
            "log_rest": log_rest,
            "log_ppq": log_ppq,
            "log_rho": log_rho,
            "log_1mrho": log_1mrho,
            "log_alpha": -float(np.logaddexp(0.0, -e0)),
            "log_1malpha": -float(np.logaddexp(0.0, e0)),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, epsilon_local: float, k: int) -> "KrrParams":
        """The (cached) parameters of k-RR(epsilon_local, k)."""
        return _cached(float(epsilon_local), int(k))

    @property
    def rho(self) -> float:
        return math.exp(self.log_rho)


def _complements(log_x: float, log_1mx: float) -> tuple[float, float]:
    """(log x, log(1 - x)) from two direct evaluations: the smaller of x and 1 - x is kept (its log keeps its
    digits) and the other is formed from it by log1mexp (see KrrParams.__post_init__)."""
    if log_x <= log_1mx:
        return log_x, float(log1mexp(log_x))
    return float(log1mexp(log_1mx)), log_1mx


def _cached(epsilon_local: float, k: int, _cache: dict = {}) -> KrrParams:  # noqa: B006 - a deliberate cache
    key = (epsilon_local, k)
    if key not in _cache:
        if len(_cache) > 4096:
            _cache.clear()
        _cache[key] = KrrParams(epsilon_local, k)
    return _cache[key]


@dataclass(frozen=True)
class LaplaceBlanket:
    """The eps0-LDP Laplace randomizer on [0, 1], R(x) = x + Lap(1 / eps0), as a blanket mixture, in logs.

    Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemma 5.1 (2) and its proof (appendix): the total
    variation similarity is ``gamma = e^(-eps0 / 2)`` and the blanket is Lap(1/2, 1/eps0) (inf over x of
    the densities is (eps0 / 2) e^(-eps0 / 2) e^(-eps0 |y - 1/2|)). With h = eps0 / 2 and
    r_x(y) = p_x(y) / blanket(y) = e^(eps0 (|y - 1/2| - |y - x|)) in [e^-h, e^h], the privacy amplification
    variable L = r_x(W) - e^eps r_x'(W), W ~ blanket, satisfies for every x, x' in [0, 1] (Lemma 5.8):

    * ``max L <= e^h (1 - e^(eps - eps0))`` and ``min L >= e^-h - e^(eps + h)`` (both attained at
      {x, x'} = {0, 1}), hence the range ``(e^eps + 1)(e^h - e^-h)``;
    * ``E L^2 <= (e^(2 eps) + 1) / 3 (2 e^h + e^-eps0) - 2 e^eps (2 e^-h - e^-eps0)`` (equality at
      {x, x'} = {0, 1}: E r_0^2 = (2 e^h + e^-eps0) / 3 and E r_0 r_1 = 2 e^-h - e^-eps0), evaluated
      here without cancellation as ``(e^eps - 1)^2 A + (4/3) e^(eps + h) (1 - e^-h)^2 (1 + 2 e^-h)``
      with A = E r_0^2 (the identity E r_0^2 - E r_0 r_1 = (2/3) e^h (1 - e^-h)^2 (1 + 2 e^-h)).

    These equal the authors' ``LaplaceMechanism`` (github.com/BorjaBalle/amplification-by-shuffling,
    shuffleddp/mechanisms.py) and numerical integration (tests/accounting/test_laplace_blanket.py).
    Methods take eps (array) with 0 <= eps < eps0 for ``log_max`` (the maximum is <= 0 beyond).
    """

    epsilon_local: float

    @property
    def log_gamma(self) -> float:
        return -0.5 * float(self.epsilon_local)

    def log_max(self, eps):
        """log of the maximum of L (eps < eps0)."""
        return 0.5 * self.epsilon_local + log1mexp(np.asarray(eps, dtype=float) - self.epsilon_local)

    def log_range(self, eps):
        """log of max L - min L = (e^eps + 1)(e^h - e^-h)."""
        h = 0.5 * self.epsilon_local
        return np.logaddexp(np.asarray(eps, dtype=float), 0.0) + h + log1mexp(-2.0 * h)

    def log_second_moment(self, eps):
        """log of the largest E L^2 over x, x' (see the class docstring)."""
        eps = np.asarray(eps, dtype=float)
        return 2.0 * eps + 0.5 * self.epsilon_local + self.log_second_moment_scaled(eps)

    def log_second_moment_scaled(self, eps):
        """log(E L^2 / e^(2 eps + eps0 / 2)): finite even where e^eps0 overflows a double."""
        eps = np.asarray(eps, dtype=float)
        h = 0.5 * self.epsilon_local
        log_a_scaled = math.log(2.0 + math.exp(-3.0 * h)) - math.log(3.0)  # log(E r_0^2) - h
        with np.errstate(divide="ignore"):
            first = 2.0 * log1mexp(-eps) + log_a_scaled  # (1 - e^-eps)^2 E r_0^2 / e^h
        second = math.log(4.0 / 3.0) - eps + 2.0 * float(log1mexp(-h)) + math.log1p(2.0 * math.exp(-h))
        return np.logaddexp(first, second)
