"""Hadamard response (HR; Acharya, Sun, Zhang, AISTATS 2019), its LDP-optimal form for the high-privacy regime.

K = 2^ceil(log2(k + 1)) (the smallest power of two above k). Value x in {0, ..., k-1} owns row x + 1 of the
Sylvester-Hadamard matrix H_K (H[r, y] = (-1)^popcount(r & y); row 0, all ones, is skipped), and its code set
C_x = {y : H[x + 1, y] = +1}, of size K/2. A user holding x reports an index y in {0, ..., K-1}: uniform on
C_x with probability e^eps0 / (e^eps0 + 1), else uniform on its complement. So R(y | x) = 2 e^eps0 / ((e^eps0 + 1) K)
on C_x and 2 / ((e^eps0 + 1) K) off it: eps0-LDP.

The report supports the values whose code set holds y (:mod:`~shuffledp.accounting.randomizers.support`): its
own with probability p = e^eps0 / (e^eps0 + 1), another with probability 1/2 (two distinct non-constant rows
agree on exactly K/2 columns). Sampling (:meth:`HadamardResponse.sample_counts`) draws the K index counts
through the blanket decomposition (with probability 2 / (e^eps0 + 1) a uniform index, else a uniform index of
C_x) and maps them to the k support counts; O(k K) per draw, whatever n.

Output types (:meth:`HadamardResponse.output_types`). Column 0 lies in every C_x; every other column lies
outside some C_x (rows 1, 2, 4, ..., K/2 are among rows 1..k, and only column 0 is +1 on all of them). Hence
gamma = (K - 1) 2 / ((e^eps0 + 1) K) + 2 e^eps0 / ((e^eps0 + 1) K) with blanket omega uniform on the columns
y >= 1 (each weighing 2 / ((e^eps0 + 1) K gamma)) and heavier on column 0. An output's type is its pattern
s_j = [y in C_{x_j}] for the inputs of interest (ratio gamma e^(eps0 s_j)), or column 0 (all ratios gamma);
the number of columns of each pattern is counted from the matrix (the pair types are the same for every pair:
each pattern holds K/4 columns, column 0 counted apart). The inputs of interest are the values 0, 1, ...,
``inputs`` - 1 (with three or more, the counts depend on which values: rows whose XOR vanishes share columns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from shuffledp._validation import check_integer
from shuffledp.accounting.randomizers.base import register_randomizer
from shuffledp.accounting.randomizers.support import SupportRandomizer
from shuffledp.accounting.randomizers.types import OutputTypes
from shuffledp.accounting.randomizers.unary import MAX_TYPE_INPUTS, check_categorical

__all__ = ["HadamardResponse", "MAX_HADAMARD_K", "code_membership"]

#: largest domain size (K <= 2^21 index columns are enumerated)
MAX_HADAMARD_K = 2**20 - 1


def code_membership(rows, order: int) -> np.ndarray:
    """M[y, i] = [H_order[rows[i], y] = +1] for every column y of the Sylvester-Hadamard matrix of ``order``.

    Args:
        rows: the row indices (integers in [0, order)).
        order: K, a power of two.

    Returns:
        A (K, len(rows)) boolean array.
    """
    columns = np.arange(order, dtype=np.int64)[:, None] & np.asarray(rows, dtype=np.int64)[None, :]
    parity = np.zeros(columns.shape, dtype=np.int64)
    while np.any(columns):
        parity ^= columns & 1
        columns >>= 1
    return parity == 0


@register_randomizer
@dataclass(frozen=True)
class HadamardResponse(SupportRandomizer):
    """HR(eps0, k) (module docstring); ``order`` is K, derived from k."""

    name: ClassVar[str] = "Hadamard response"
    key: ClassVar[str] = "hadamard"
    epsilon_local: float
    k: int
    order: int = field(init=False, default=0)

    def __post_init__(self):
        check_categorical(self, high=MAX_HADAMARD_K)
        object.__setattr__(self, "order", 1 << int(self.k).bit_length())  # smallest power of 2 above k

    @property
    def support_probabilities(self) -> tuple[float, float]:
        return 1.0 / (1.0 + math.exp(-self.epsilon_local)), 0.5

    def membership(self) -> np.ndarray:
        """(K, k) boolean: column y lies in C_x."""
        return code_membership(np.arange(1, self.k + 1), self.order)

    def _sample_support(self, counts, rng, replicates):
        order, members = self.order, self.membership()
        # blanket decomposition: a uniform index with probability 2 / (e^eps0 + 1), else uniform on C_x
        on_code = rng.binomial(
            np.broadcast_to(counts, (replicates, self.k)), math.tanh(0.5 * self.epsilon_local)
        )
        code_lists = [np.flatnonzero(members[:, x]) for x in range(self.k)]
        indices = np.zeros((replicates, order), dtype=np.int64)
        for draw in range(replicates):
            uniform = int(counts.sum() - on_code[draw].sum())
            indices[draw] += rng.multinomial(uniform, np.full(order, 1.0 / order))
            for x in np.flatnonzero(on_code[draw]):
                code = code_lists[x]
                indices[draw, code] += rng.multinomial(on_code[draw, x], np.full(code.size, 1.0 / code.size))
        return indices @ members.astype(np.int64)

    def output_types(self, inputs: int = 2) -> OutputTypes:
        """Hadamard response's output types for the inputs of interest 0, ..., ``inputs`` - 1 (module docstring).

        Args:
            inputs: how many distinct inputs of interest, in [2, min(k, 12)].

        Returns:
            The merged types.

        Raises:
            ValueError: ``inputs`` out of range.
        """
        m = check_integer(inputs, "inputs", low=2, high=min(self.k, MAX_TYPE_INPUTS))
        e0, order = self.epsilon_local, self.order
        log_low = math.log(2.0 / order) - float(np.logaddexp(e0, 0.0))  # R(y | x) off C_x
        log_gamma = float(np.logaddexp(math.log(order - 1) + log_low, e0 + log_low))
        patterns = code_membership(np.arange(1, m + 1), order)[1:]  # columns 1..K-1
        keys, sizes = np.unique(patterns, axis=0, return_counts=True)
        log_mass = np.append(np.log(sizes) + log_low - log_gamma, e0 + log_low - log_gamma)
        ratios = np.vstack([log_gamma + e0 * keys.astype(float), np.full((1, m), log_gamma)]).T
        types = OutputTypes(e0, log_gamma, log_mass - logsumexp(log_mass), ratios)
        return types.merged(tuple(range(m)))
