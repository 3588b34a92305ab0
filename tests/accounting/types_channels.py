"""Tiny randomizers written from their channels, their output types by brute force, and the exact worst-case
delta of the shuffled reports over every dataset: the ground truth the views over output types are checked
against (tests/accounting/test_types_enumeration.py)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from scipy.special import logsumexp

from shuffledp.accounting.randomizers import GenericBlanket, Randomizer
from shuffledp.accounting.randomizers.types import OutputTypes


def types_from_channel(channel: np.ndarray, epsilon_local: float, inputs: tuple[int, ...]) -> OutputTypes:
    """Output types by brute force: blanket omega(o) = min_x C[x, o] / gamma, gamma = sum_o min_x C[x, o];
    outputs grouped by their ratios C[x_j, o] / omega(o) (equal to 12 digits)."""
    floor = channel.min(axis=0)
    gamma = floor.sum()
    omega = floor / gamma
    ratios = channel[list(inputs)] / omega
    groups: dict[tuple, list[int]] = {}
    for o in range(channel.shape[1]):
        groups.setdefault(tuple(np.round(np.log(ratios[:, o]), 12)), []).append(o)
    columns = list(groups.values())
    mass = np.log([omega[c].sum() for c in columns])
    mass -= logsumexp(mass)
    log_ratios = np.log(np.stack([ratios[:, c[0]] for c in columns], axis=1))
    return OutputTypes(epsilon_local, math.log(gamma), mass, log_ratios)


@dataclass(frozen=True, eq=False)
class ChannelRandomizer(Randomizer):
    """A randomizer given by its channel (k inputs x d outputs); its types computed from it by brute force.
    Compared and hashed by identity (its channel is an array)."""

    name: ClassVar[str] = "test channel"
    label: str
    epsilon_local: float
    matrix: np.ndarray = field(repr=False)
    k: int | None = None

    def __post_init__(self):
        object.__setattr__(self, "k", int(self.matrix.shape[0]))

    @property
    def blanket(self):
        return GenericBlanket(self.epsilon_local)

    @property
    def channel(self) -> np.ndarray:
        return self.matrix

    def output_types(self, inputs: int = 2) -> OutputTypes:
        return types_from_channel(self.matrix, self.epsilon_local, tuple(range(inputs)))


def krr_channel(epsilon_local: float, k: int) -> np.ndarray:
    e = math.exp(epsilon_local)
    channel = np.full((k, k), 1.0 / (e + k - 1))
    np.fill_diagonal(channel, e / (e + k - 1))
    return channel


def unary_channel(k: int, p: float, q: float) -> np.ndarray:
    """Unary encoding over k values: bit x is 1 w.p. p, every other bit w.p. q (outputs: all 2^k bit vectors)."""
    vectors = np.array(list(itertools.product([0, 1], repeat=k)))
    rows = []
    for x in range(k):
        prob = np.where(np.arange(k) == x, p, q)
        rows.append(np.prod(np.where(vectors == 1, prob, 1 - prob), axis=1))
    return np.array(rows)


def oue(epsilon_local: float, k: int = 3) -> ChannelRandomizer:
    """Optimized unary encoding (Wang et al. 2017): p = 1/2, q = 1 / (e^eps0 + 1)."""
    return ChannelRandomizer("OUE", epsilon_local, unary_channel(k, 0.5, 1.0 / (math.exp(epsilon_local) + 1)))


def rappor(epsilon_local: float, k: int = 3) -> ChannelRandomizer:
    """Symmetric unary encoding (basic RAPPOR): p = e^(eps0/2) / (e^(eps0/2) + 1), q = 1 - p (eps0-LDP)."""
    p = math.exp(epsilon_local / 2) / (math.exp(epsilon_local / 2) + 1)
    return ChannelRandomizer("RAPPOR", epsilon_local, unary_channel(k, p, 1 - p))


def olh(epsilon_local: float, k: int = 3, g: int = 2) -> ChannelRandomizer:
    """Local hashing with the exhaustive hash family (every map {0..k-1} -> {0..g-1}, uniform): report (h, y),
    y = h(x) w.p. e^eps0 / (e^eps0 + g - 1), else each other value of 0..g-1."""
    e = math.exp(epsilon_local)
    hashes = list(itertools.product(range(g), repeat=k))
    channel = np.zeros((k, len(hashes) * g))
    for i, h in enumerate(hashes):
        for x in range(k):
            for y in range(g):
                channel[x, i * g + y] = (e if y == h[x] else 1.0) / (e + g - 1) / len(hashes)
    return ChannelRandomizer(f"OLH(g={g})", epsilon_local, channel)


def subset_selection(epsilon_local: float, k: int = 4, size: int = 2) -> ChannelRandomizer:
    """Subset selection (Ye & Barg; Wang et al. 2016): report a subset of ``size`` values, those holding x
    weighted e^eps0."""
    subsets = list(itertools.combinations(range(k), size))
    e = math.exp(epsilon_local)
    channel = np.array([[e if x in s else 1.0 for s in subsets] for x in range(k)])
    return ChannelRandomizer(
        f"subset(k={k},d={size})", epsilon_local, channel / channel.sum(axis=1, keepdims=True)
    )


def _histogram_law(rows: list[np.ndarray]) -> dict[tuple, float]:
    """The law of the output histogram of independent users with the given output laws."""
    law: dict[tuple, float] = {(0,) * rows[0].size if rows else (): 1.0} if rows else {(): 1.0}
    for row in rows:
        nxt: dict[tuple, float] = {}
        for hist, prob in law.items():
            for o, po in enumerate(row):
                key = hist[:o] + (hist[o] + 1,) + hist[o + 1 :]
                nxt[key] = nxt.get(key, 0.0) + prob * po
        law = nxt
    return law


def exact_worst_case(channel: np.ndarray, n_users: int, epsilons: np.ndarray) -> np.ndarray:
    """The true worst-case delta of the shuffled reports: max over every ordered pair (x0, x1) of distinct
    inputs and every multiset of the n - 1 others' inputs of the hockey-stick divergence of the two laws of
    the output histogram (both directions are among the ordered pairs)."""
    k, d = channel.shape
    worst = np.zeros(len(epsilons))
    factors = np.exp(np.asarray(epsilons, dtype=float))[:, None]
    for others in itertools.combinations_with_replacement(range(k), n_users - 1):
        base = _histogram_law([channel[x] for x in others]) if others else {(0,) * d: 1.0}
        keys = sorted({h[:o] + (h[o] + 1,) + h[o + 1 :] for h in base for o in range(d)})
        index = {h: i for i, h in enumerate(keys)}
        laws = np.zeros((k, len(keys)))
        for h, prob in base.items():
            for o in range(d):
                key = index[h[:o] + (h[o] + 1,) + h[o + 1 :]]
                laws[:, key] += prob * channel[:, o]
        for x0, x1 in itertools.permutations(range(k), 2):
            delta = np.maximum(laws[x0][None, :] - factors * laws[x1][None, :], 0.0).sum(axis=1)
            worst = np.maximum(worst, delta)
    return worst


@dataclass(frozen=True)
class TypesOnly(Randomizer):
    """Another randomizer's output types under a class that is not its own (e.g. k-RR's types without being
    k-RR, so that ``weak-adversary`` takes the type view instead of k-RR's own)."""

    name: ClassVar[str] = "types only"
    inner: Randomizer
    epsilon_local: float = field(init=False)
    k: int | None = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "epsilon_local", self.inner.epsilon_local)
        object.__setattr__(self, "k", self.inner.k)

    @property
    def blanket(self):
        return self.inner.blanket

    def output_types(self, inputs: int = 2) -> OutputTypes | None:
        return self.inner.output_types(inputs)
