"""The view interface: an adversary view is a dominating pair (P, Q), given by its outcomes.

A view is built from one :class:`~shuffledp.accounting.params.ShuffleSetting` and yields its
**outcomes**: chunks of ``(log P(o), log Q(o))`` over the outcomes o it enumerates, and a certified upper
bound on the P-mass and on the Q-mass of every outcome it leaves out (:class:`LeftOut`). The pair is the
REMOVE direction (P: the differing user holds x0, Q: it holds x1); the ADD direction is the same stream
with P and Q swapped (:meth:`View.directions`). A view whose swapped pair is the same pair relabelled
sets ``symmetric = True`` and is read in one direction.

Everything else is *derived* from that stream by one generic layer: delta for many epsilons in one
pass (:func:`log_delta_from_outcomes`), and -- in the modules that build on this one -- epsilon for
delta through the one search, the privacy loss distribution, the Renyi moments and the certified
composed tail. A view may override a derived quantity with a fast exact sum (the weak rows, the pair
sums); the override is then held to the generic value of its own stream by a parametrised test on a
grid of small settings.

**Which way each derived value errs.** Every outcome yielded is exact up to floating-point rounding of
its log masses; the left-out bounds are certified upper bounds. So ``upper=True`` derivations add the
left-out P-mass to delta (an upper bound on the pair's delta), ``upper=False`` drop it (a lower bound).

A *family* view (the worst-case families) is a set of member views, one per dataset (pair); the generic
layer takes the maximum over the members (:class:`FamilyView`).

The outcome space may merge outcomes that share the same likelihood ratio (merging outcomes of equal
privacy loss changes no f-divergence); it must not merge outcomes of different loss.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.params import ShuffleSetting

__all__ = ["OutcomeChunk", "LeftOut", "View", "FamilyView", "log_delta_from_outcomes", "DEFAULT_K"]

#: default half-width of the summation windows in standard deviations (what a view leaves out is
#: bounded by :class:`LeftOut`, whatever K is)
DEFAULT_K = 9.0


@dataclass(frozen=True)
class OutcomeChunk:
    """A batch of outcomes of the pair: ``log_p[i]`` = log P(o_i), ``log_q[i]`` = log Q(o_i) (same shape,
    1-D). ``-inf`` is a zero mass: log_q = -inf with finite log_p is an outcome of infinite privacy loss."""

    log_p: np.ndarray
    log_q: np.ndarray

    def swapped(self) -> "OutcomeChunk":
        return OutcomeChunk(self.log_q, self.log_p)


@dataclass(frozen=True)
class LeftOut:
    """Certified upper bounds (natural logs) on the P-mass and the Q-mass of the outcomes not yielded."""

    log_p: float = -math.inf
    log_q: float = -math.inf

    def swapped(self) -> "LeftOut":
        return LeftOut(self.log_q, self.log_p)


class View(abc.ABC):
    """One adversary view of one setting: the dominating pair (P, Q) given by its outcomes.

    Subclasses set the class attributes and implement :meth:`outcomes` and :meth:`left_out` (both for
    the window ``K``: a larger K yields more outcomes and leaves out less). Derived quantities are methods
    here; a subclass overrides one only with a faster evaluation of the *same* quantity.
    """

    #: a short name, e.g. "strong"
    name: ClassVar[str]
    #: (Q, P) is (P, Q) relabelled: both directions have the same privacy loss distribution
    symmetric: ClassVar[bool] = False
    #: the randomizer classes this view is defined for (empty: every randomizer)
    randomizers: ClassVar[tuple[type, ...]] = ()

    def __init__(self, setting: ShuffleSetting):
        self.setting = setting

    @abc.abstractmethod
    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        """The REMOVE direction's outcomes inside the windows of half-width K, in chunks."""

    @abc.abstractmethod
    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        """Certified bounds on the P- and Q-mass of the outcomes :meth:`outcomes` does not yield."""

    def directions(self, K: float = DEFAULT_K) -> list[tuple[Iterator[OutcomeChunk], LeftOut]]:
        """(outcomes, left out) of each direction to read: REMOVE, and ADD unless the view is symmetric."""
        remove = (self.outcomes(K), self.left_out(K))
        if self.symmetric:
            return [remove]
        add = ((chunk.swapped() for chunk in self.outcomes(K)), self.left_out(K).swapped())
        return [remove, add]

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """log delta at each epsilon, the larger of the directions, from the stream (generic; views
        with a fast exact sum override it)."""
        return log_delta_from_outcomes(self, epsilons, K=K, upper=upper)


class FamilyView(abc.ABC):
    """A set of member views (one per dataset pair): derived values are the maximum over the members."""

    name: ClassVar[str]

    def __init__(self, setting: ShuffleSetting):
        self.setting = setting

    @abc.abstractmethod
    def members(self) -> Iterator[View]:
        """The member views."""

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        out = np.full(eps.shape, -np.inf)
        for member in self.members():
            out = np.maximum(out, member.log_delta(eps, K=K, upper=upper))
        return out


def _log_excess(chunk: OutcomeChunk, eps: np.ndarray) -> np.ndarray:
    """log sum over the chunk of (P(o) - e^eps Q(o))_+, one value per epsilon (-inf: zero)."""
    log_p, log_q = np.asarray(chunk.log_p, float).ravel(), np.asarray(chunk.log_q, float).ravel()
    live = np.isfinite(log_p)
    log_p, log_q = log_p[live], log_q[live]
    if log_p.size == 0:
        return np.full(eps.shape, -np.inf)
    with np.errstate(invalid="ignore"):
        # log(e^eps Q / P); -inf where Q = 0 (an infinite loss counts at every eps, eps = inf included)
        gap = np.where(np.isneginf(log_q)[None, :], -np.inf, eps[:, None] + log_q[None, :] - log_p[None, :])
        positive = gap < 0.0
        terms = np.where(positive, log_p[None, :] + log1mexp(np.where(positive, gap, -1.0)), -np.inf)
    return np.asarray([logsumexp(row) for row in terms])


def log_delta_from_outcomes(view: View, epsilons, *, K: float = DEFAULT_K, upper: bool = True,
                            chunk_epsilons: int = 64) -> np.ndarray:
    """Generic log delta of a view at each epsilon, the larger of its directions: the exact log-space
    sum of (P - e^eps Q)_+ over the outcomes yielded (every term positive: no cancellation), plus the
    left-out P-mass when ``upper`` (an upper bound on the pair's delta) or without it (a lower bound).
    Work O(outcomes x epsilons); for tests and small settings, and the reference every fast override is
    held to."""
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    best = np.full(eps.shape, -np.inf)
    for stream, left in view.directions(K):
        total = np.full(eps.shape, -np.inf)
        for chunk in stream:
            for start in range(0, eps.size, chunk_epsilons):
                part = slice(start, start + chunk_epsilons)
                total[part] = np.logaddexp(total[part], _log_excess(chunk, eps[part]))
        if upper:
            total = np.logaddexp(total, left.log_p)
        best = np.maximum(best, total)
    return np.minimum(best, 0.0)
