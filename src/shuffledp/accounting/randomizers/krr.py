"""k-ary randomized response: the randomizer (:class:`KRR`, :class:`BinaryRR`), every quantity of it derived once
(:class:`KrrParams`), and its blanket (:class:`KrrBlanket`).

k-RR with local epsilon_0 over k values reports its true value with probability
p = e^eps0 / (e^eps0 + k - 1) and each other value with probability q = 1 / (e^eps0 + k - 1). As a
mixture (Balle et al. 2019, Sec. 4), it reports a uniform value (the *blanket*) with probability
gamma = k q and its true value otherwise; beta = e^eps0 - 1 = (p - q) / q.

Binary randomized response is k-RR at k = 2: :class:`BinaryRR` is a subclass of :class:`KRR` (the same
channel, the same :class:`KrrParams`), so every view or accountant that accepts k-RR accepts it; the class
only names it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from shuffledp._numerics import log1mexp, log_expm1
from shuffledp._validation import check_integer, check_real
from shuffledp.accounting.randomizers.base import (
    MAX_K,
    Blanket,
    Randomizer,
    amplification_logs,
    register_randomizer,
)
from shuffledp.accounting.randomizers.counts import (
    ExpectedError,
    binomial_sum_mean_absolute_deviation,
    check_counts,
    check_rng,
    normalise_counts,
)
from shuffledp.accounting.randomizers.types import OutputTypes

__all__ = ["KRR", "BinaryRR", "KrrParams", "KrrBlanket", "MAX_K"]

#: unit roundoff of float64
_UNIT = 2.0**-53


def _log_beta(e0: float) -> float:
    """log(e^eps0 - 1): log(expm1) where expm1 is finite (2 ulp), the overflow-free form beyond."""
    return float(np.log(np.expm1(e0))) if e0 <= 700.0 else float(log_expm1(e0))


@dataclass(frozen=True)
class KrrParams:
    """Every derived quantity of k-RR(eps0, k), in logs (see the module docstring for p, q, gamma, beta).

    ``log_den`` = log(e^eps0 + k - 1); ``log_p``, ``log_q``, ``log_1mp``, ``log_1mq``; ``log_gamma``, ``log_1mgamma``;
    ``log_beta``; ``log_2q`` and ``log_1m2q`` (a blanket report lands on x0 or x1: 2q, and its
    complement (e^eps0 + k - 3) / (e^eps0 + k - 1)); ``log_rest`` = log(1 - p - q) = log((k - 2) q), ``log_ppq`` = log(p + q);
    ``log_rho``, ``log_1mrho``: rho = (k - 2) / (e^eps0 + k - 3), the chance that a blanket report not
    on {x0, x1} is not the user's own value either (k = 2: rho = 0); ``log_alpha``, ``log_1malpha``:
    alpha = e^eps0 / (e^eps0 + 1), the binary randomized response of the clones pair; ``log_den2`` =
    log(e^eps0 + k - 2). The properties below (computed on first use) complete the list.
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
    log_den2: float = field(init=False)

    def __post_init__(self):
        e0, k = float(self.epsilon_local), int(self.k)
        log_den = float(np.logaddexp(e0, math.log(k - 1.0)))
        log_beta = _log_beta(e0)
        # e^eps0 + k - 3 and e^eps0 + k - 2, without cancellation
        log_den3 = log_beta if k == 2 else e0 if k == 3 else float(np.logaddexp(e0, math.log(k - 3.0)))
        log_den2 = float(np.logaddexp(e0, math.log(k - 2.0))) if k > 2 else e0
        # Each pair (x, 1 - x) is formed from the smaller of the two: its log is a difference of logs that
        # keeps its digits (the smaller is <= 1/2), and the other is log1mexp of it, accurate for every x.
        # Both were once differences of logs of size ~eps0: an absolute error of ~1e-16 eps0 in a log
        # near 0 (log(1 - 2q) at large eps0, log gamma at small eps0), which n - 1 users multiply into a
        # relative error of ~1e-16 eps0 n in every likelihood (1e-9 at n = 1e6, eps0 = 11), and 100 % of
        # log(1 - 2q) itself at eps0 = 32: enough to put upper bounds below lower bounds.
        log_q = -log_den
        log_p, log_1mp = _complements(e0 - log_den, math.log(k - 1.0) - log_den)
        log_gamma, log_1mgamma = _complements(math.log(k) - log_den, log_beta - log_den)
        log_2q, log_1m2q = _complements(math.log(2.0) - log_den, log_den3 - log_den)
        log_rho, log_1mrho = (
            _complements(math.log(k - 2.0) - log_den3, log_beta - log_den3) if k > 2 else (-np.inf, 0.0)
        )
        # a user on x0 reports x0 or x1 (p + q) or another value (1 - p - q = (k - 2) q)
        log_ppq, log_rest = (
            _complements(float(np.logaddexp(e0, 0.0)) - log_den, math.log(k - 2.0) - log_den)
            if k > 2
            else (0.0, -np.inf)
        )
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
            "log_den2": log_den2,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, epsilon_local: float, k: int) -> KrrParams:
        """The (cached) parameters of k-RR(epsilon_local, k)."""
        return _cached(float(epsilon_local), int(k))

    @property
    def rho(self) -> float:
        return math.exp(self.log_rho)

    # -- quantities some views read in a form of their own; each is written here once, in the very
    # -- floating-point form the recorded values were computed in, so that each stays bit for bit

    @cached_property
    def probability_error(self) -> float:
        """A bound on the relative error of each of p, q, gamma and 1 - gamma as the certified searches form
        them (``exp`` of :attr:`log_p`, :attr:`log_q`, :attr:`log_gamma`; q expm1(eps0); the quotients of
        :attr:`quotient_probabilities`) against their exact values at this (eps0, k): their representation
        error, which every law entry built from n such factors carries up to n times.

        Derived from the budget of 4 ulp (8 u, u = 2^-53) per call of exp, log, log1p, expm1
        (docs/decisions/numerics.md, "Representation error of p and q"): the absolute error of ``log_den`` is
        at most u (1.5 |log_den| + 12 log(k - 1) + 10), that of ``log_p``, ``log_q``, ``log_gamma`` at most
        u (2.5 |log_den| + 20 log k + 9 |log_beta| + 32), and exp adds 8 u; the bound rounds this up to
        u (4 |log_den| + 24 log k + 12 |log_beta| + 48). Held to 50-digit values (tests/accounting/test_worst_case_representation.py).
        """
        return _UNIT * (4.0 * abs(self.log_den) + 24.0 * math.log(self.k) + 12.0 * abs(self.log_beta) + 48.0)

    def representation_ulps(self, factors: int) -> float:
        """Relative error, in units of u = 2^-53, that ``factors`` factors of p, q, gamma or 1 - gamma carry in a
        product from their representation alone (:attr:`probability_error` each; second order included).

        Args:
            factors: how many such factors a term holds at most (n for a law entry of n users).

        Returns:
            factors x probability_error / u, raised by 0.1 % for the second-order terms (n rho <= 1e-6).

        Raises:
            ValueError: ``factors`` negative, or so large that n rho exceeds 1e-6.
        """
        spread = factors * self.probability_error
        if factors < 0 or spread > 1e-6:
            raise ValueError(
                f"`factors` must be in [0, {int(1e-6 / self.probability_error)}]; got {factors}."
            )
        return spread * 1.001 / _UNIT

    @cached_property
    def probabilities(self) -> tuple[float, float]:
        """(p, q) as 1 / (1 + (k - 1) e^-eps0) and e^-eps0 / (1 + (k - 1) e^-eps0): no overflow at large eps0
        (the simulation's form, :attr:`KRR.probabilities`)."""
        tail = math.exp(-self.epsilon_local)
        return 1.0 / (1.0 + (self.k - 1) * tail), tail / (1.0 + (self.k - 1) * tail)

    @cached_property
    def quotient_probabilities(self) -> tuple[float, float]:
        """(p, q) as the quotients e^eps0 / (e^eps0 + k - 1) and 1 / (e^eps0 + k - 1) (the own-hits view's
        form; OverflowError beyond eps0 = 709). Within a few ulp of :attr:`probabilities`, not always equal."""
        e = math.exp(self.epsilon_local)
        return e / (e + self.k - 1), 1.0 / (e + self.k - 1)

    @cached_property
    def log_kappa2(self) -> float:
        """log kappa_2, kappa_2 = (k - 1) / (e^eps0 + k - 2) (the single-bin law's reverse likelihood ratio):
        ``-log_inverse_kappa2`` exactly."""
        return -self.log_inverse_kappa2

    @cached_property
    def log_inverse_kappa2(self) -> float:
        """-log kappa_2 = log((e^eps0 + k - 2) / (k - 1)) = log1p((e^eps0 - 1) / (k - 1)): the single-bin law's
        largest reverse privacy loss (exactly eps0 at k = 2).

        Formed as log1p of its small part, not as a difference of logs of size log k: at k = 10^6,
        eps0 = 0.5 the value is 6.5e-7 and the difference log(e^eps0 + k - 2) - log(k - 1) carried ~1e-15
        absolute error, 3.7e-10 relative, which put ``biswas-exact`` (reverse loss at s = 0) above its own
        50-digit value and above every certified upper bound."""
        if self.k == 2:
            return float(self.epsilon_local)
        return float(np.logaddexp(0.0, _log_beta(float(self.epsilon_local)) - math.log(self.k - 1.0)))

    @cached_property
    def log_gamma_e0(self) -> float:
        """log(gamma e^eps0) = log k - log(1 + (k - 1) e^-eps0): finite where e^eps0 overflows."""
        return float(np.log(self.k) - np.logaddexp(0.0, np.log(self.k - 1.0) - self.epsilon_local))

    @cached_property
    def log_p_minus_q(self) -> float:
        """log(p - q) = log(1 - gamma) as log q + log(e^eps0 - 1) with :func:`log_expm1` (the k = 2 pair search's
        form; :attr:`log_1mgamma` takes log(e^eps0 - 1) from log(expm1) up to eps0 = 700: the last bit may differ)."""
        return self.log_q + float(log_expm1(self.epsilon_local))

    @cached_property
    def third_value_logs(self) -> tuple[float, float]:
        """(log pi2, log(1 - pi2)), pi2 = p / (1 - 2q) = e^eps0 / (e^eps0 + k - 3): the chance that a report off
        {x0, x1} of a user on a third value x2 is x2 (k >= 3; log(1 - pi2) = -inf at k = 3)."""
        if self.k < 3:
            raise ValueError(f"`k` must be >= 3 for a value outside {{x0, x1}}; got {self.k!r}.")
        log_1m2q_den = self.log_1m2q + self.log_den  # log(e^eps0 + k - 3)
        if self.k == 3:
            return self.epsilon_local - log_1m2q_den, -np.inf
        # the pair from the smaller of the two (pi2 is near 1 at large eps0)
        return _complements(self.epsilon_local - log_1m2q_den, math.log(self.k - 3.0) - log_1m2q_den)


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


class KrrBlanket(Blanket):
    """k-RR's blanket: gamma = k q, the blanket uniform on the k values; L's range, maximum and second moment
    (Balle et al. 2019, Lemma 5.7): b = (1 - gamma) k (e^eps + 1); b+ = gamma (e^eps0 - e^eps);
    sigma2 = gamma (2 - gamma)(e^eps - 1)^2 + (1 - gamma)^2 k (e^(2 eps) + 1) (from L's three values under the
    uniform blanket)."""

    def __init__(self, params: KrrParams):
        self.params = params
        self.log_gamma, self.log_1mgamma = params.log_gamma, params.log_1mgamma

    def log_range(self, eps):
        return self.params.log_1mgamma + np.log(self.params.k) + np.logaddexp(eps, 0.0)

    def bennett_logs(self, eps):
        logs, e0, k = self.params, self.params.epsilon_local, self.params.k
        log_1m_a, log_1p_m2 = amplification_logs(eps)
        # b+ = (1 - gamma) k - gamma (e^eps - 1) = gamma (e^eps0 - e^eps) > 0 for eps < eps0
        rel_max = log1mexp(eps - e0)  # log b+ = log gamma + eps0 + rel_max
        # sigma2 = gamma (2 - gamma)(e^eps - 1)^2 + (1 - gamma)^2 k (e^(2 eps) + 1) = e^(2 eps) W
        log_2mgamma = float(np.log1p(np.exp(logs.log_1mgamma)))  # log(2 - gamma)
        log_w = np.logaddexp(
            logs.log_gamma + log_2mgamma + 2.0 * log_1m_a,
            2.0 * logs.log_1mgamma + np.log(k) + log_1p_m2,
        )
        log_gamma_e0 = logs.log_gamma_e0  # log gamma + eps0, no overflow
        log_beta = (log_gamma_e0 - eps) + rel_max + log_1m_a - log_w
        log_ratio = log_w - 2.0 * (log_gamma_e0 - eps) - 2.0 * rel_max
        log_max_over_gamma = e0 + rel_max
        return log_beta, log_ratio, log_max_over_gamma


@register_randomizer
@dataclass(frozen=True)
class KRR(Randomizer):
    """k-RR(eps0, k) over the values 0..k-1 (module docstring); eps0 finite in (0, inf), k in [2, MAX_K]."""

    name: ClassVar[str] = "k-RR"
    key: ClassVar[str] = "krr"
    epsilon_local: float
    k: int

    def __post_init__(self):
        object.__setattr__(
            self,
            "epsilon_local",
            check_real(
                self.epsilon_local, "epsilon_local", low=0.0, low_open=True, high=math.inf, high_open=True
            ),
        )
        object.__setattr__(self, "k", check_integer(self.k, "k", low=2, high=MAX_K))

    @classmethod
    def from_parameters(cls, *, epsilon_local: float, k: int | None = None) -> KRR:
        return cls(epsilon_local=epsilon_local, k=k)  # type: ignore[arg-type]  # k=None: __post_init__ refuses it in one line

    @property
    def params(self) -> KrrParams:
        """Every k-RR quantity in logs (cached per (eps0, k))."""
        return KrrParams.of(self.epsilon_local, self.k)

    @property
    def probabilities(self) -> tuple[float, float]:
        """(p, q): the probability of reporting the true value, and each particular other value."""
        return self.params.probabilities

    @property
    def blanket(self) -> KrrBlanket:
        return KrrBlanket(self.params)

    def output_types(self, inputs: int = 2) -> OutputTypes:
        """k-RR's output types (:mod:`~shuffledp.accounting.randomizers.types`): the blanket is uniform,
        gamma = k q; an output equal to x_j has ratio p k for x_j and q k for every other input; the outputs
        outside the inputs of interest form one more type (none when ``inputs == k``).

        Args:
            inputs: how many distinct inputs of interest, in [2, min(k, 16)].

        Returns:
            ``inputs`` types of blanket mass 1/k each, then the rest (mass (k - inputs)/k) if k > ``inputs``.

        Raises:
            ValueError: ``inputs`` outside [2, min(k, 16)].
        """
        check_integer(inputs, "inputs", low=2, high=min(self.k, 16))
        params = self.params
        log_k = math.log(self.k)
        on, off = params.log_p + log_k, params.log_q + log_k
        ratios = np.full((inputs, inputs), off)
        np.fill_diagonal(ratios, on)
        mass = np.full(inputs, -log_k)
        if self.k > inputs:
            ratios = np.hstack([ratios, np.full((inputs, 1), off)])
            mass = np.append(mass, math.log(self.k - inputs) - log_k)
        return OutputTypes(self.epsilon_local, params.log_gamma, mass, ratios)

    @property
    def channel(self) -> np.ndarray:
        """The k x k channel: q everywhere, p on the diagonal (rows sum to 1)."""
        p, q = self.probabilities
        channel = np.full((self.k, self.k), q)
        np.fill_diagonal(channel, p)
        return channel

    def sample_counts(self, counts, *, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """The shuffled k-RR histogram of ``counts``, drawn through the blanket decomposition in O(k).

        The same law as the channel's multinomials (``Randomizer.sample_counts``), another stream: T_x ~ Bin(c_x,
        p - q) users keep their value, the other n - sum T report Multinomial(., 1/k each). O(size k).

        Args:
            counts: the true histogram (k non-negative integers).
            rng: the numpy Generator drawn from (one ``binomial``, then one ``multinomial`` call).
            size: None for one draw, shape (k,); else ``size`` draws, shape (size, k).

        Returns:
            The report counts.

        Raises:
            ValueError, TypeError: bad ``counts``, ``rng`` or ``size``.
        """
        counts = check_counts(counts, k=self.k)
        check_rng(rng)
        k = counts.size
        p, q = self.probabilities
        replicates = 1 if size is None else check_integer(size, "size", low=1)
        truthful = rng.binomial(np.broadcast_to(counts, (replicates, k)), min(max(p - q, 0.0), 1.0))
        blanket = rng.multinomial(counts.sum() - truthful.sum(axis=1), np.full(k, 1.0 / k))
        histogram = truthful + blanket
        return histogram[0] if size is None else histogram

    def estimate(self, reported_counts) -> np.ndarray:
        """Matrix inversion (INV) in closed form: pi_hat = (f - q) / (p - q), f the report frequencies (the
        channel is (p - q) I + q 1 1^T). Unbiased; sums to 1, may have negative entries.

        Args:
            reported_counts: the shuffled k-RR histogram (..., k).

        Returns:
            The estimate (..., k).

        Raises:
            ValueError: not k entries on the last axis, a negative entry, or a row summing to 0.
        """
        frequencies = normalise_counts(reported_counts)
        if frequencies.shape[-1] != self.k:
            raise ValueError(
                f"`reported_counts` must have k = {self.k} entries on its last axis; got shape {frequencies.shape}."
            )
        p, q = self.probabilities
        return (frequencies - q) / (p - q)

    def expected_error(self, counts) -> ExpectedError:
        """Exact E half L1 error (E TV once projected is not this) and E squared L2 of :meth:`estimate` on the shuffled histogram of ``counts``.

        Cell x's count is A + B, A ~ Bin(c_x, p), B ~ Bin(n - c_x, q) independent, so E|pi_hat_x - pi_x| =
        E|A + B - E(A + B)| / (n (p - q)) (:func:`~shuffledp.accounting.randomizers.counts.binomial_sum_mean_absolute_deviation`,
        the narrower law summed over its window, the other in closed form; left-out mass <= 1e-30 per binomial,
        so the half L1 errs low by at most 4 n 1e-30 counts per cell) and Var = c_x p (1 - p) + (n - c_x) q (1 - q).
        Distinct cell counts are evaluated once.

        Args:
            counts: the true histogram (k non-negative integers).

        Returns:
            ExpectedError(l1_half, squared_l2), both exact.
        """
        counts = check_counts(counts, k=self.k)
        n_users = int(counts.sum())
        p, q = self.probabilities
        distinct, multiplicity = np.unique(counts, return_counts=True)
        others = n_users - distinct
        keep_variance = distinct * p * (1 - p)
        other_variance = others * q * (1 - q)
        swap = keep_variance > other_variance  # sum over the narrower law
        summed_trials = np.where(swap, others, distinct)
        summed_probability = np.where(swap, q, p)
        other_trials = np.where(swap, distinct, others)
        other_probability = np.where(swap, p, q)
        deviation = binomial_sum_mean_absolute_deviation(
            summed_trials, summed_probability, other_trials, other_probability
        )
        scale = n_users * (p - q)
        l1_half = 0.5 * float(np.sum(multiplicity * deviation)) / scale
        squared_l2 = float(np.sum(multiplicity * (keep_variance + other_variance))) / scale**2
        return ExpectedError(l1_half, squared_l2)


@register_randomizer
@dataclass(frozen=True)
class BinaryRR(KRR):
    """Binary randomized response: k-RR at k = 2 (an instance of :class:`KRR`; see the module docstring)."""

    name: ClassVar[str] = "binary RR"
    key: ClassVar[str] = "binary-rr"
    k: int = field(default=2, init=False)

    @classmethod
    def from_parameters(cls, *, epsilon_local: float, k: int | None = None) -> BinaryRR:
        if k not in (None, 2):
            raise ValueError(f"`k` must be 2 (or omitted) for binary randomized response; got {k!r}.")
        return cls(epsilon_local=epsilon_local)
