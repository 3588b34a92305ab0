"""What every local randomizer is to the accounting layers, and the blanket bound that holds for all of them.

A :class:`Randomizer` is an eps0-LDP local randomizer, an object in the setting
(:class:`~shuffledp.accounting.params.ShuffleSetting` carries one). It carries what views and accountants
need, each quantity derived once, inside it:

* ``epsilon_local`` (eps0) and ``k`` (the domain size of a categorical randomizer; None otherwise);
* its output law (k-RR: ``probabilities`` and the log parameters ``params``; Laplace: ``log_density``);
* in the utility layer: :meth:`Randomizer.sample_counts` (the shuffled reports as counts, given the true
  histogram), :meth:`Randomizer.estimate` (the unbiased estimate of the distribution from them) and
  :meth:`Randomizer.expected_error` (that estimate's exact expected error); a randomizer with a finite
  ``channel`` gets the three from it, k-RR overrides them with its fast forms;
* ``blanket``: its decomposition as a blanket mixture (Balle, Bell, Gascon, Nissim, CRYPTO 2019, Sec. 4):
  with probability gamma a report is a draw from one input-free law (the blanket), otherwise it depends on
  the input. A :class:`Blanket` gives gamma and the privacy amplification variable L's range, maximum and
  second moment, the quantities of their Section 5 bounds.

Views and accountants state the randomizer classes they accept (``randomizers``, a tuple of classes,
read with ``isinstance``); ``(Randomizer,)`` accepts every eps0-LDP randomizer. :func:`check_accepted`
is the one refusal.

:class:`GenericBlanket` is the blanket every eps0-LDP randomizer has (Balle et al. Lemmas 5.2 and 5.4:
gamma >= e^-eps0, the range, maximum and second moment bounds that hold for any such randomizer).
"""

from __future__ import annotations

import abc
from typing import ClassVar

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp._validation import check_integer
from shuffledp.accounting.randomizers.counts import (
    ExpectedError,
    channel_squared_error,
    check_counts,
    check_rng,
    normalise_counts,
    sample_through_channel,
)
from shuffledp.accounting.randomizers.types import OutputTypes

__all__ = [
    "MAX_K",
    "Randomizer",
    "Blanket",
    "GenericBlanket",
    "check_accepted",
    "accepted_names",
    "amplification_logs",
    "register_randomizer",
    "unregister_randomizer",
    "randomizer_class",
    "list_randomizers",
]

#: largest domain size accepted (k - 1 and k - 2 stay exact floats)
MAX_K = 10**15


class Blanket(abc.ABC):
    """A randomizer as a blanket mixture, and the privacy amplification variable L of Balle et al. Sec. 5.

    L = r_x(W) - e^eps r_x'(W), W ~ blanket, r_x the ratio of the report law to the blanket (both inputs
    x, x' at their worst). Methods take eps as an array with 0 < eps < eps0.
    """

    #: log gamma, the blanket's weight
    log_gamma: float
    #: log(1 - gamma)
    log_1mgamma: float

    @abc.abstractmethod
    def log_range(self, eps):
        """log b, b = max L - min L (Hoeffding, Balle et al. Lemma 5.5)."""

    @abc.abstractmethod
    def bennett_logs(self, eps):
        """(log beta, log(sigma2 / b+^2), log(b+ / gamma)) of the Bennett bound (Lemma 5.6), with b+ = max L
        and sigma2 = E L^2, beta = (e^eps - 1) b+ / sigma2; formed without overflow (each may be +inf, then
        the bound is trivially 1)."""


def amplification_logs(eps):
    """(log(1 - e^-eps), log(1 + e^-2 eps)): log((e^eps - 1) / e^eps) and log((e^(2 eps) + 1) / e^(2 eps)),
    the two pieces every Bennett form shares.

    Args:
        eps: the epsilon(s), scalar or array, > 0.

    Returns:
        The pair (log(1 - e^-eps), log(1 + e^-2 eps)), each the shape of ``eps``.
    """
    return log1mexp(-eps), np.log1p(np.exp(-2.0 * eps))


class GenericBlanket(Blanket):
    """The blanket of any eps0-LDP randomizer: Balle et al. Lemma 5.2 (gamma >= e^-eps0) and Lemma 5.4 (2), (3)
    (b = (e^eps + 1)(e^eps0 - e^-eps0); b+ = e^eps0 (1 - e^(eps - 2 eps0)); sigma2 = e^eps0 (e^(2 eps) + 1)
    - 2 e^(eps - 3 eps0), with gamma_ub = 1, gamma_lb = e^-eps0)."""

    def __init__(self, epsilon_local: float):
        self.epsilon_local = float(epsilon_local)
        self.log_gamma = -self.epsilon_local
        self.log_1mgamma = float(log1mexp(-self.epsilon_local))

    def log_range(self, eps):
        e0 = self.epsilon_local  # log(2 sinh x) = x + log(1 - e^-2x)
        with np.errstate(over="ignore"):  # inf for eps + eps0 > 1.8e308: the bound is then trivially 1
            return np.logaddexp(eps, 0.0) + e0 + log1mexp(-2.0 * e0)

    def bennett_logs(self, eps):
        e0 = self.epsilon_local
        log_1m_a, log_1p_m2 = amplification_logs(eps)
        # b+ = e^eps0 (1 - e^(eps - 2 eps0));
        # sigma2 = e^(eps0 + 2 eps) (1 + e^-2eps) (1 - 2 e^(-eps - 4 eps0) / (1 + e^-2eps))
        rel_max = log1mexp(eps - 2.0 * e0)
        rel_moment = log_1p_m2 + log1mexp(np.log(2.0) - eps - 4.0 * e0 - log_1p_m2)
        log_beta = -eps + log_1m_a + rel_max - rel_moment
        log_ratio = (eps - e0) + eps + rel_moment - 2.0 * rel_max
        log_max_over_gamma = e0 + rel_max + e0  # may be inf (then the bound is trivially 1)
        return log_beta, log_ratio, log_max_over_gamma


class Randomizer(abc.ABC):
    """An eps0-LDP local randomizer (module docstring). Subclasses are frozen dataclasses that validate their
    parameters, set ``name``, and implement :attr:`blanket`; ``(Randomizer,)`` as an accepted tuple means
    every eps0-LDP randomizer."""

    #: how refusals and labels name the class
    name: ClassVar[str] = "any eps0-LDP randomizer"
    #: the key it is registered under (:func:`register_randomizer`; the CLI's ``--randomizer``), e.g. "krr"
    key: ClassVar[str] = ""
    #: eps0: the randomizer is eps0-LDP
    epsilon_local: float
    #: domain size of a categorical randomizer (k-RR's k); None when the randomizer has none
    k: int | None = None

    @property
    @abc.abstractmethod
    def blanket(self) -> Blanket:
        """Its blanket decomposition (a randomizer without a sharper one returns ``GenericBlanket(eps0)``)."""

    # -- the randomizer in the utility layer: sample the shuffled counts, estimate, and the exact error. A
    # -- randomizer with a finite ``channel`` gets all three from it; one without overrides the three.

    @property
    def channel(self) -> np.ndarray | None:
        """The k x d matrix C[x, y] = P(report y | input x) of a randomizer with finitely many inputs and
        outputs (rows sum to 1); None for one without (then it overrides :meth:`sample_counts`,
        :meth:`estimate` and :meth:`expected_error`)."""
        return None

    def output_types(self, inputs: int = 2) -> OutputTypes | None:
        """The randomizer's output types for ``inputs`` inputs of interest (:mod:`.types`): x_0 and x_1, the
        differing user's two values, then ``inputs - 2`` further distinct values; None for a randomizer
        without finitely many outputs (then no view over the type multinomial accepts it).

        Args:
            inputs: how many distinct inputs of interest, >= 2 (at most the domain size).

        Returns:
            The :class:`~shuffledp.accounting.randomizers.types.OutputTypes`, or None.
        """
        return None

    def required_channel(self, what: str) -> np.ndarray:
        """:attr:`channel` as a float array.

        Raises:
            NotImplementedError: the randomizer has none (``what`` names the method that needed it).
        """
        channel = self.channel
        if channel is None:
            raise NotImplementedError(
                f"randomizer {self.name!r} has no finite channel: it must implement {what} itself"
            )
        return np.asarray(channel, dtype=float)

    def _right_inverse(self) -> np.ndarray:
        """C^+ (d x k) with C C^+ = I: the unbiased inversion of a channel of full row rank k."""
        channel = self.required_channel("estimate")
        if np.linalg.matrix_rank(channel) < channel.shape[0]:
            raise ValueError(
                f"`randomizer` must have a channel of full row rank for an unbiased estimate; got {self!r} "
                f"(rank {np.linalg.matrix_rank(channel)} < k = {channel.shape[0]})."
            )
        return np.linalg.pinv(channel)

    def sample_counts(self, counts, *, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """The shuffled multiset of the n reports as counts, given the true histogram (no per-user work).

        Args:
            counts: the true histogram over the k inputs (non-negative integers).
            rng: the numpy Generator every draw comes from.
            size: None for one draw; else the number of independent draws.

        Returns:
            The report counts: shape (d,) with ``size=None``, else (size, d). Here: through the channel
            (:func:`~shuffledp.accounting.randomizers.counts.sample_through_channel`).

        Raises:
            ValueError, TypeError: bad ``counts``, ``rng`` or ``size`` (one line naming it).
        """
        counts = check_counts(counts, k=self.k)
        return sample_through_channel(
            self.required_channel("sample_counts"), counts, rng=check_rng(rng), size=size
        )

    def estimate(self, reported_counts) -> np.ndarray:
        """The unbiased estimate of the true distribution from the report counts (vectorised over leading axes).

        Args:
            reported_counts: report counts (..., d), as :meth:`sample_counts` draws them.

        Returns:
            (..., k): sums to 1 along the last axis, may have negative entries; E[estimate] = counts / n.
            Here: the frequencies times the channel's right inverse C^+.

        Raises:
            ValueError: counts of the wrong width, negative, or a row summing to 0.
        """
        frequencies = normalise_counts(reported_counts)
        inverse = self._right_inverse()
        if frequencies.shape[-1] != inverse.shape[0]:
            raise ValueError(
                f"`reported_counts` must have {inverse.shape[0]} entries on its last axis (the randomizer's "
                f"outputs); got shape {frequencies.shape}."
            )
        return frequencies @ inverse

    def expected_error(self, counts) -> ExpectedError:
        """The exact expected error of :meth:`estimate` on the shuffled counts of ``counts``.

        Args:
            counts: the true histogram over the k inputs.

        Returns:
            :class:`~shuffledp.accounting.randomizers.counts.ExpectedError`: (l1_half, squared_l2), l1_half (half the
            expected L1 error) None where no exact formula is known (callers then use Monte Carlo with its
            standard error). Here: squared_l2 from the channel's covariance, l1_half None.
        """
        counts = check_counts(counts, k=self.k)
        channel = self.required_channel("expected_error")
        return ExpectedError(None, channel_squared_error(channel, self._right_inverse(), counts))

    @classmethod
    def from_parameters(cls, *, epsilon_local: float, k: int | None = None) -> Randomizer:
        """The randomizer built from an accountant's loose parameters (``get_accountant(name, epsilon_local=...,
        k=...)``). A randomizer without a domain size ignores ``k``, which need not be given; one that is given
        is still refused outside [2, MAX_K], as every accountant refused it before randomizers existed."""
        randomizer = cls(epsilon_local=epsilon_local)  # type: ignore[call-arg]  # subclasses are dataclasses with this field
        if k is not None:
            check_integer(k, "k", low=2, high=MAX_K)
        return randomizer


def accepted_names(accepted: tuple[type[Randomizer], ...]) -> str:
    """The accepted classes in words, e.g. ``k-RR`` or ``k-RR, Laplace on [0, 1]``.

    Args:
        accepted: the accepted randomizer classes (empty: every randomizer).

    Returns:
        Their ``name`` attributes joined by commas (the :class:`Randomizer` name when ``accepted`` is empty).
    """
    return ", ".join(cls.name for cls in accepted) if accepted else Randomizer.name


def check_accepted(owner: str, accepted: tuple[type[Randomizer], ...], randomizer) -> None:
    """Refuse, in one line, a randomizer that is not an instance of one of ``accepted`` (empty: every randomizer).

    Args:
        owner: what asks (an accountant's or view's name), named in the message.
        accepted: the accepted randomizer classes (empty: every :class:`Randomizer`).
        randomizer: the randomizer to check.

    Raises:
        ValueError: ``randomizer`` is not a :class:`Randomizer`, or not an instance of one of ``accepted``.
    """
    if not isinstance(randomizer, Randomizer) or (accepted and not isinstance(randomizer, accepted)):
        raise ValueError(f"`randomizer` must be {accepted_names(accepted)} for {owner}; got {randomizer!r}.")


#: key -> randomizer class (:func:`register_randomizer`)
_REGISTRY: dict[str, type[Randomizer]] = {}


def register_randomizer(cls: type[Randomizer]) -> type[Randomizer]:
    """Register the randomizer class ``cls`` under its ``key`` (usable as a class decorator); registering the
    same class again is a no-op.

    Args:
        cls: a :class:`Randomizer` subclass setting its own non-empty ``key``.

    Returns:
        ``cls`` itself.

    Raises:
        ValueError: not a Randomizer subclass, no key of its own, or the key registered to another class.
    """
    if not (isinstance(cls, type) and issubclass(cls, Randomizer)):
        raise ValueError(f"`randomizer` must be a subclass of Randomizer; got {cls!r}.")
    key = vars(cls).get("key")
    if not isinstance(key, str) or not key:
        raise ValueError(
            f"`key` must be a non-empty string set on the randomizer class itself; got {key!r} on {cls.__qualname__}."
        )
    if _REGISTRY.get(key, cls) is not cls:
        raise ValueError(
            f"`key` {key!r} is already registered to {_REGISTRY[key].__qualname__}; got {cls.__qualname__}."
        )
    _REGISTRY[key] = cls
    return cls


def unregister_randomizer(key: str) -> None:
    """Remove the randomizer registered under ``key`` (a plug-in's, e.g. in a test; unknown keys are ignored).

    Args:
        key: the registry key (the class's ``key``).
    """
    _REGISTRY.pop(key, None)


def randomizer_class(key: str) -> type[Randomizer]:
    """The randomizer class registered under ``key``.

    Args:
        key: the registry key, e.g. ``"krr"``.

    Returns:
        The registered class.

    Raises:
        ValueError: an unknown key (the line lists the registered ones).
    """
    if key not in _REGISTRY:
        raise ValueError(f"`randomizer` must be one of {', '.join(sorted(_REGISTRY))}; got {key!r}.")
    return _REGISTRY[key]


def list_randomizers() -> list[str]:
    """The registered randomizer keys, sorted.

    Returns:
        The keys, in alphabetical order.
    """
    return sorted(_REGISTRY)
