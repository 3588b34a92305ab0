"""Unary encoding, the shared part of :class:`~shuffledp.accounting.randomizers.oue.OUE` and
:class:`~shuffledp.accounting.randomizers.sue.SUE` (Wang, Blocki, Li, Jha, USENIX Security 2017).

A user holding x in {0, ..., k-1} encodes it as the k-bit one-hot vector and perturbs every bit independently:
bit x is reported 1 with probability p, every other bit with probability q (p > q). The randomizer is
eps0-LDP with eps0 = log(p (1 - q) / ((1 - p) q)). The report's support is its set of 1-bits
(:mod:`~shuffledp.accounting.randomizers.support`): S_j = Bin(c_j, p) + Bin(n - c_j, q), independent across j
(the bits are independent), so the shuffled reports are sampled as these k counts with no per-user work.

Output types (:meth:`UnaryEncoding.output_types`). With f(1) = p / q and f(0) = (1 - p) / (1 - q),
R(b | x) = base(b) f(b_x), base(b) = prod_j q^b_j (1 - q)^(1 - b_j). The smallest over x is base(b) f(0) unless
every bit is 1 (then base(b) f(1)), so the blanket weight is gamma = f(0) (1 - q^k) + f(1) q^k. For inputs of
interest x_0, ..., x_{m-1} an output's type is its bits s at those inputs and whether all of its bits are 1:
ratios r_j = gamma f(s_j) / f(0) (all equal to gamma for the all-ones output), blanket masses
q^|s| (1 - q)^(m - |s|) f(0) / gamma (less q^k f(0) / gamma for s = all ones) and q^k f(1) / gamma for the
all-ones output; types with equal ratios are merged. The pair types are the same for every pair of inputs.
"""

from __future__ import annotations

import itertools
import math
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from shuffledp._numerics import log1mexp
from shuffledp._validation import check_integer, check_real
from shuffledp.accounting.randomizers.base import MAX_K
from shuffledp.accounting.randomizers.support import SupportRandomizer
from shuffledp.accounting.randomizers.types import OutputTypes

__all__ = ["UnaryEncoding", "MAX_TYPE_INPUTS", "check_categorical"]

#: most inputs of interest whose types are enumerated (2^m patterns)
MAX_TYPE_INPUTS = 12


def check_categorical(randomizer, *, high: int = MAX_K) -> None:
    """Validate ``epsilon_local`` (finite, > 0) and ``k`` (integer in [2, ``high``]) of a frozen dataclass in place.

    Raises:
        ValueError: either out of range (one line naming it).
    """
    e0 = check_real(
        randomizer.epsilon_local, "epsilon_local", low=0.0, low_open=True, high=math.inf, high_open=True
    )
    object.__setattr__(randomizer, "epsilon_local", e0)
    object.__setattr__(randomizer, "k", check_integer(randomizer.k, "k", low=2, high=high))


class UnaryEncoding(SupportRandomizer):
    """Unary encoding with bit probabilities (p, q) (module docstring); subclasses give :meth:`log_bit_probabilities`."""

    name: ClassVar[str] = "unary encoding"
    epsilon_local: float
    k: int

    def log_bit_probabilities(self) -> tuple[float, float, float, float]:
        """(log p, log(1 - p), log q, log(1 - q))."""
        raise NotImplementedError

    @property
    def support_probabilities(self) -> tuple[float, float]:
        log_p, _, log_q, _ = self.log_bit_probabilities()
        return math.exp(log_p), math.exp(log_q)

    def output_types(self, inputs: int = 2) -> OutputTypes:
        """Unary encoding's output types (module docstring).

        Args:
            inputs: how many distinct inputs of interest, in [2, min(k, 12)].

        Returns:
            The merged types (patterns of the bits at the inputs of interest, and the all-ones output).

        Raises:
            ValueError: ``inputs`` out of range.
        """
        m = check_integer(inputs, "inputs", low=2, high=min(self.k, MAX_TYPE_INPUTS))
        log_p, log_1mp, log_q, log_1mq = self.log_bit_probabilities()
        log_f1, log_f0 = log_p - log_q, log_1mp - log_1mq
        log_qk = self.k * log_q
        log_gamma = float(np.logaddexp(log_f0 + log1mexp(log_qk), log_f1 + log_qk))
        masses, ratios = [], []
        for pattern in itertools.product((0, 1), repeat=m):
            ones = sum(pattern)
            log_mass = ones * log_q + (m - ones) * log_1mq + log_f0 - log_gamma
            if ones == m:
                if self.k == m:
                    continue  # every bit is one of the inputs': the only all-ones-at-s output is the all-ones one
                log_mass += float(log1mexp((self.k - m) * log_q))
            masses.append(log_mass)
            ratios.append([log_gamma + (log_f1 - log_f0 if bit else 0.0) for bit in pattern])
        masses.append(log_qk + log_f1 - log_gamma)
        ratios.append([log_gamma] * m)
        mass = np.array(masses)
        types = OutputTypes(self.epsilon_local, log_gamma, mass - logsumexp(mass), np.array(ratios).T)
        return types.merged(tuple(range(m)))
