"""Subset selection (SS; Ye and Barg, IEEE Trans. Inf. Theory 2018; Wang, Wu, Hu, Yang, 2016) with subset size s.

A user holding x in {0, ..., k-1} reports a subset Z of size s of the k values with probability proportional
to e^eps0 if x in Z, else 1: R(Z | x) = e^(eps0 [x in Z]) / D, D = C(k-1, s-1) e^eps0 + C(k-1, s). It is eps0-LDP;
s = 1 is k-RR. The report supports the values in Z (:mod:`~shuffledp.accounting.randomizers.support`): its own
with probability p = s e^eps0 / (s e^eps0 + k - s), another with probability
q = (p (s - 1) + (1 - p) s) / (k - 1).

Sampling by counts (:meth:`SubsetSelection.sample_counts`), exact and with no per-user work: of the c_x users
holding x, T_x ~ Bin(c_x, p) put x in Z; given that, the rest of Z is a uniform (s - 1)-subset of the other
k - 1 values (s-subset without x). The sum over m users of uniform r-subsets is drawn value by value: with
L values left, the users still needing r values take the next one each with probability r / L (binomially),
and move to needing r - 1. O(k_active k s) per draw (k_active: values held by some user).

The subset size s defaults to the LDP-optimal one: the s in [1, k - 1] of smallest exact expected squared error
((p (1 - p) + (k - 1) q (1 - q)) / (n (p - q)^2), which depends on the data only through n); it lies near
Ye and Barg's k / (e^eps0 + 1).

Output types (:meth:`SubsetSelection.output_types`): the smallest R(Z | x) over x is 1/D for every Z (s < k), so
gamma = C(k, s) / D and the blanket is uniform on the s-subsets. An output's type is its pattern
a_j = [x_j in Z] over the inputs of interest: ratio gamma e^(eps0 a_j), blanket mass C(k - m, s - |a|) / C(k, s).
The types are the same for every choice of the inputs of interest.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.special import gammaln, logsumexp

from shuffledp._validation import check_integer
from shuffledp.accounting.randomizers.base import register_randomizer
from shuffledp.accounting.randomizers.support import SupportRandomizer
from shuffledp.accounting.randomizers.types import OutputTypes
from shuffledp.accounting.randomizers.unary import MAX_TYPE_INPUTS, check_categorical

__all__ = ["SubsetSelection", "MAX_SUBSET_K", "optimal_subset_size", "sum_of_uniform_subsets"]

#: largest domain size (the default subset size is searched over every s < k)
MAX_SUBSET_K = 10**6


def _support(epsilon_local: float, k: int, s):
    """(p, q) of subset selection, vectorised over s."""
    s = np.asarray(s, dtype=float)
    p = s / (s + (k - s) * math.exp(-epsilon_local))
    q = (p * (s - 1.0) + (1.0 - p) * s) / (k - 1.0)
    return p, q


def optimal_subset_size(epsilon_local: float, k: int) -> int:
    """The s in [1, k - 1] of smallest exact expected squared error of subset selection (module docstring).

    Args:
        epsilon_local: eps0 > 0.
        k: the domain size, in [2, MAX_SUBSET_K].

    Returns:
        The best s (the smallest on a tie).
    """
    k = check_integer(k, "k", low=2, high=MAX_SUBSET_K)
    sizes = np.arange(1, k, dtype=float)
    p, q = _support(epsilon_local, k, sizes)
    error = (p * (1.0 - p) + (k - 1.0) * q * (1.0 - q)) / (p - q) ** 2
    return int(sizes[int(np.argmin(error))])


def sum_of_uniform_subsets(needs, items: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of ``items`` values is chosen when groups of users each choose a uniform subset of them.

    Args:
        needs: (..., R + 1) integers: needs[..., r] users each choose a uniform r-subset of the items (r <= items).
        items: the number of values.
        rng: the numpy Generator drawn from (one ``binomial`` call per value).

    Returns:
        (..., items) counts (summing to sum_r r needs[..., r]).
    """
    waiting = np.array(needs, dtype=np.int64)
    sizes = np.arange(waiting.shape[-1], dtype=float)
    chosen = np.zeros((*waiting.shape[:-1], items), dtype=np.int64)
    for item in range(items):
        taken = rng.binomial(waiting, np.minimum(sizes / (items - item), 1.0))
        chosen[..., item] = taken.sum(axis=-1)
        waiting -= taken
        waiting[..., :-1] += taken[..., 1:]
    return chosen


@register_randomizer
@dataclass(frozen=True)
class SubsetSelection(SupportRandomizer):
    """SS(eps0, k, s) (module docstring); s = 0 (the default) means :func:`optimal_subset_size`."""

    name: ClassVar[str] = "subset selection"
    key: ClassVar[str] = "subset"
    epsilon_local: float
    k: int
    subset_size: int = 0

    def __post_init__(self):
        check_categorical(self, high=MAX_SUBSET_K)
        if isinstance(self.subset_size, int | np.integer) and self.subset_size == 0:
            object.__setattr__(self, "subset_size", optimal_subset_size(self.epsilon_local, self.k))
        size = check_integer(self.subset_size, "subset_size", low=1, high=self.k - 1)
        object.__setattr__(self, "subset_size", size)

    @property
    def support_probabilities(self) -> tuple[float, float]:
        p, q = _support(self.epsilon_local, self.k, self.subset_size)
        return float(p), float(q)

    def _sample_support(self, counts, rng, replicates):
        k, s = self.k, self.subset_size
        p, _ = self.support_probabilities
        active = np.flatnonzero(counts)
        own = rng.binomial(np.broadcast_to(counts[active], (replicates, active.size)), p)
        needs = np.zeros((replicates, active.size, s + 1), dtype=np.int64)
        needs[..., s - 1] += own
        needs[..., s] += counts[active] - own
        others = sum_of_uniform_subsets(
            needs, k - 1, rng
        )  # (replicates, active, k - 1): values x+1, x+2, ...
        support = np.zeros((replicates, k), dtype=np.int64)
        for index, x in enumerate(active):
            support[:, x] += own[:, index]
            support += np.roll(np.pad(others[:, index], ((0, 0), (1, 0))), x, axis=-1)
        return support

    def output_types(self, inputs: int = 2) -> OutputTypes:
        """Subset selection's output types (module docstring).

        Args:
            inputs: how many distinct inputs of interest, in [2, min(k, 12)].

        Returns:
            One type per feasible pattern of membership of the inputs of interest.

        Raises:
            ValueError: ``inputs`` out of range.
        """
        m = check_integer(inputs, "inputs", low=2, high=min(self.k, MAX_TYPE_INPUTS))
        k, s, e0 = self.k, self.subset_size, self.epsilon_local

        def log_binomial(a, b):
            return gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)

        log_den = float(np.logaddexp(log_binomial(k - 1, s - 1) + e0, log_binomial(k - 1, s)))
        log_gamma = float(log_binomial(k, s)) - log_den
        masses, ratios = [], []
        for pattern in itertools.product((0, 1), repeat=m):
            rest = s - sum(pattern)
            if 0 <= rest <= k - m:
                masses.append(log_binomial(k - m, rest) - log_binomial(k, s))
                ratios.append([log_gamma + e0 * bit for bit in pattern])
        mass = np.array(masses, dtype=float)
        return OutputTypes(e0, min(log_gamma, 0.0), mass - logsumexp(mass), np.array(ratios).T)
