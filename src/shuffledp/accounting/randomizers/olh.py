"""Optimal local hashing (OLH; Wang, Blocki, Li, Jha, USENIX Security 2017) with hash range g.

A user holding x draws a hash function H: {0, ..., k-1} -> {0, ..., g-1} from a family, computes H(x) and
reports (H, y) with y = H(x) with probability p = e^eps0 / (e^eps0 + g - 1), else each other bucket with
probability q = 1 / (e^eps0 + g - 1). The report supports the values j with H(j) = y
(:mod:`~shuffledp.accounting.randomizers.support`): its own value with probability p, another value with
probability 1/g.

**Hash model.** The exact formulas assume a family in which, for a uniformly drawn H:

* the estimate and its exact expected errors (squared error, half L1): H(j) is uniform on [g] and independent
  of H(x) for every j != x (pairwise independence: a universal family in the strong sense);
* the sampling by counts and the output types: H is *fully random* (the g^k functions equally likely), so the
  support indicators of a report are independent across values -- S_j = Bin(c_j, p) + Bin(n - c_j, 1/g)
  independently -- and the outputs are the g^(k+1) pairs (H, y).

Output types (:meth:`OLH.output_types`, fully random H). R((H, y) | x) = g^-k (p if H(x) = y else q). The
smallest over x is g^-k q unless H is constant at y (then g^-k p), so gamma = g q + g^(1-k) (p - q). For
inputs of interest x_0, ..., x_{m-1} an output's type is s_j = [H(x_j) = y] and whether H is constant at y:
ratios gamma e^(eps0 s_j) (all gamma for a constant H); blanket masses g^(1-m) (g - 1)^(m - |s|) q / gamma
(less g^(1-k) q / gamma for s = all ones) and g^(1-k) p / gamma for the constant outputs. The pair types are the
same for every pair of inputs.

The hash range g defaults to the LDP-optimal ceil(e^eps0) + 1 (Wang et al.'s g = e^eps0 + 1, rounded up);
:func:`best_hash_range` finds the g of smallest exact squared error on a given histogram.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from shuffledp._numerics import log1mexp
from shuffledp._validation import check_integer
from shuffledp.accounting.randomizers.base import MAX_K, register_randomizer
from shuffledp.accounting.randomizers.support import SupportRandomizer
from shuffledp.accounting.randomizers.types import OutputTypes
from shuffledp.accounting.randomizers.unary import MAX_TYPE_INPUTS, check_categorical

__all__ = ["OLH", "MAX_HASH_RANGE", "default_hash_range", "best_hash_range"]

#: largest hash range g (1/g and g - 1 stay exact floats)
MAX_HASH_RANGE = MAX_K


def default_hash_range(epsilon_local: float) -> int:
    """The LDP-optimal hash range ceil(e^eps0) + 1, capped at :data:`MAX_HASH_RANGE`.

    Args:
        epsilon_local: eps0 > 0.

    Returns:
        The integer g >= 2.
    """
    if epsilon_local >= math.log(MAX_HASH_RANGE - 1):
        return MAX_HASH_RANGE
    return int(math.ceil(math.exp(epsilon_local))) + 1


@register_randomizer
@dataclass(frozen=True)
class OLH(SupportRandomizer):
    """OLH(eps0, k, g) (module docstring); g = 0 (the default) means :func:`default_hash_range` of eps0."""

    name: ClassVar[str] = "OLH"
    key: ClassVar[str] = "olh"
    epsilon_local: float
    k: int
    hash_range: int = 0

    def __post_init__(self):
        check_categorical(self)
        if isinstance(self.hash_range, int | np.integer) and self.hash_range == 0:
            object.__setattr__(self, "hash_range", default_hash_range(self.epsilon_local))
        g = check_integer(self.hash_range, "hash_range", low=2, high=MAX_HASH_RANGE)
        object.__setattr__(self, "hash_range", g)

    @property
    def log_report_probabilities(self) -> tuple[float, float]:
        """(log p, log q): the reported bucket is H(x), resp. a given other bucket."""
        log_den = float(np.logaddexp(self.epsilon_local, math.log(self.hash_range - 1)))
        return self.epsilon_local - log_den, -log_den

    @property
    def support_probabilities(self) -> tuple[float, float]:
        return math.exp(self.log_report_probabilities[0]), 1.0 / self.hash_range

    def output_types(self, inputs: int = 2) -> OutputTypes:
        """OLH's output types under a fully random hash (module docstring).

        Args:
            inputs: how many distinct inputs of interest, in [2, min(k, 12)].

        Returns:
            The merged types.

        Raises:
            ValueError: ``inputs`` out of range.
        """
        m = check_integer(inputs, "inputs", low=2, high=min(self.k, MAX_TYPE_INPUTS))
        log_p, log_q = self.log_report_probabilities
        e0, log_g, log_gm1 = self.epsilon_local, math.log(self.hash_range), math.log(self.hash_range - 1)
        log_constant = (1 - self.k) * log_g  # g^(1-k): the share of constant hash functions, times g
        log_gamma = float(np.logaddexp(log_g + log_q, log_constant + float(log1mexp(log_q - log_p)) + log_p))
        masses, ratios = [], []
        for pattern in itertools.product((0, 1), repeat=m):
            ones = sum(pattern)
            log_mass = (1 - m) * log_g + (m - ones) * log_gm1 + log_q - log_gamma
            if ones == m:
                if self.k == m:
                    continue  # H constant on every value: the constant outputs alone
                log_mass += float(log1mexp((m - self.k) * log_g))
            masses.append(log_mass)
            ratios.append([log_gamma + (e0 if bit else 0.0) for bit in pattern])
        masses.append(log_constant + log_p - log_gamma)
        ratios.append([log_gamma] * m)
        mass = np.array(masses)
        types = OutputTypes(e0, log_gamma, mass - logsumexp(mass), np.array(ratios).T)
        return types.merged(tuple(range(m)))


def best_hash_range(epsilon_local: float, k: int, *, candidates=None) -> int:
    """The hash range g of smallest exact expected squared error of OLH(eps0, k, g).

    That error, (p (1 - p) + (k - 1) (1/g) (1 - 1/g)) / (n (p - 1/g)^2), depends on the histogram only through
    n, so the best g does not depend on the data (nor on n).

    Args:
        epsilon_local: eps0 > 0.
        k: the domain size.
        candidates: the g searched (default: every g from 2 to 4 (ceil(e^eps0) + 1), at most 10^5 of them).

    Returns:
        The best g among ``candidates`` (the smallest such g on a tie).

    Raises:
        ValueError: an empty ``candidates`` or one out of [2, MAX_HASH_RANGE].
    """
    k = check_integer(k, "k", low=2, high=MAX_K)
    if candidates is None:
        candidates = range(2, min(MAX_HASH_RANGE, 4 * default_hash_range(epsilon_local), 10**5) + 1)
    g = np.array(
        [check_integer(value, "hash_range", low=2, high=MAX_HASH_RANGE) for value in candidates], float
    )
    if g.size == 0:
        raise ValueError("`candidates` must hold at least one hash range; got none.")
    p = 1.0 / (1.0 + (g - 1.0) * math.exp(-epsilon_local))
    error = (p * (1.0 - p) + (k - 1) * (1.0 / g) * (1.0 - 1.0 / g)) / (p - 1.0 / g) ** 2
    return int(g[int(np.argmin(error))])
