"""The view interface: an adversary view is a dominating pair (P, Q), given by its outcomes.

A view is built from one :class:`~shuffledp.accounting.params.ShuffleSetting` and yields its
**outcomes**: chunks of ``(log P(o), log Q(o))`` over the outcomes o it enumerates, and a certified upper
bound on the P-mass and on the Q-mass of every outcome it leaves out (:class:`LeftOut`). The pair is the
REMOVE direction (P: the differing user holds x0, Q: it holds x1); the ADD direction is the same stream
with P and Q swapped (:meth:`View.directions`). A view whose swapped pair is the same pair relabelled
sets ``symmetric = True`` and is read in one direction.

Everything else is *derived* from that stream by one generic layer, :mod:`shuffledp.accounting.views.derived`:
delta for many epsilons in one pass (:func:`log_delta_from_outcomes`), epsilon for delta through the one
search, the privacy loss distribution (pessimistic and optimistic, both directions, subsampled), the Renyi
moments and the certified composed tail -- methods of :class:`View` below. A view may override a derived
quantity with a fast exact sum (the weak rows, the pair sums, the single-bin tail sums, the sorted cells);
the override is then held to the generic value of its own stream by a parametrised test on a grid of small
settings. The view is the only object that computes: an accountant is a view plus what its delta is.

**Which way each derived value errs.** Every outcome yielded is exact up to floating-point rounding of
its log masses; the left-out bounds are certified upper bounds. So ``upper=True`` derivations add the
left-out P-mass to delta (an upper bound on the pair's delta), ``upper=False`` drop it (a lower bound).

**The one ``log_delta`` contract.** Every view (and every family view) has exactly one method named
``log_delta``, with one signature: ``log_delta(epsilons, *, K=DEFAULT_K, upper=True) -> np.ndarray``.
``epsilons`` is a scalar or an array of epsilons in [0, inf] (vectorised: one pass for all of them); it returns
a 1-D array of natural logs of delta, one per epsilon (``-inf``: delta = 0), the larger of the view's
directions (REMOVE and ADD; one if symmetric), at most 0. Its safe side: ``upper=True`` is an upper bound on
the pair's delta (the left-out P-mass added, or an exact or certified fast sum), ``upper=False`` a lower
bound (the left-out mass dropped); a view that leaves nothing out returns the exact value for both. ``K``
is the stream's window (a fast sum that certifies its own windows ignores it). A fast exact sum is an
override of this method, never a second method or a module function: an accountant asks its view
(``Accountant.view().log_delta``). Other shapes have other names: one direction of a view that is not
symmetric is ``log_delta_one_direction(epsilons, direction)``; the pieces of a certified sum are
``log_delta_parts`` / ``log_parts`` (pairs of the summed value and the certified remainder); a direct
enumeration kept as a reference for tests is ``log_delta_direct``.

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

from shuffledp.accounting.params import Direction, ShuffleSetting
from shuffledp.accounting.randomizers import KRR, Randomizer
from shuffledp.accounting.views.derived import delta as derived_delta
from shuffledp.accounting.views.derived import pld as derived_pld
from shuffledp.accounting.views.derived import rdp as derived_rdp
from shuffledp.accounting.views.derived import tail as derived_tail

__all__ = ["OutcomeChunk", "LeftOut", "View", "FamilyView", "log_delta_from_outcomes", "DEFAULT_K"]

#: default half-width of the summation windows in standard deviations (what a view leaves out is
#: bounded by :class:`LeftOut`, whatever K is)
DEFAULT_K = 9.0


@dataclass(frozen=True)
class OutcomeChunk:
    """A batch of outcomes of the pair: ``log_p[i]`` = log P(o_i), ``log_q[i]`` = log Q(o_i) (same shape,
    1-D). ``-inf`` is a zero mass: log_q = -inf with finite log_p is an outcome of infinite privacy loss.
    ``loss`` (optional): log(P(o_i) / Q(o_i)) where the view forms it more precisely than log_p - log_q
    (used to bin the PLD; the masses are always log_p and log_q)."""

    log_p: np.ndarray
    log_q: np.ndarray
    loss: np.ndarray | None = None

    def exchanged(self) -> OutcomeChunk:
        """The same outcomes with P and Q exchanged (the ADD direction's chunk of a REMOVE chunk)."""
        return OutcomeChunk(self.log_q, self.log_p, None if self.loss is None else -self.loss)


@dataclass(frozen=True)
class LeftOut:
    """Certified upper bounds (natural logs) on the P-mass and the Q-mass of the outcomes not yielded."""

    log_p: float = -math.inf
    log_q: float = -math.inf

    def exchanged(self) -> LeftOut:
        """The same bounds with P and Q exchanged (what the ADD direction leaves out)."""
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
    #: the randomizer classes this view is defined for (``isinstance``; ``(Randomizer,)``: every eps0-LDP
    #: randomizer); k-RR (and binary RR, its k = 2 subclass) unless the view says otherwise. The registry
    #: refuses an accountant that claims more than its view supports, and an accountant refuses a setting
    #: whose randomizer its view does not support (``shuffledp.accounting.accountant_class``, ``Accountant``)
    randomizers: ClassVar[tuple[type[Randomizer], ...]] = (KRR,)
    #: its masses are formed outcome by outcome in log space, so its stream certifies the composed
    #: Chernoff tail down to 1e-300 (a view forming masses as differences of sums sets False)
    certifies_tail: ClassVar[bool] = True

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
        add = ((chunk.exchanged() for chunk in self.outcomes(K)), self.left_out(K).exchanged())
        return [remove, add]

    def loss_bounds(self) -> tuple[float, float] | None:
        """(largest log(P / Q), largest log(Q / P)) over every outcome, yielded or left out, when the view
        knows them (certifies the Renyi moments of what it leaves out); None: unknown."""
        return None

    def refusal(self) -> str | None:
        """None when the pair dominates every dataset pair of the setting (its exports are guarantees);
        else one line saying why it does not (its PLD is then not exported as a guarantee)."""
        return None

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """log delta at each epsilon, the larger of the directions: the one contract of every view (module
        docstring). Here from the stream (generic); a view with a fast exact sum overrides it, and a test
        holds the override to this value.

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).
            K: half-width of the stream's windows, in standard deviations.
            upper: add the certified left-out P-mass (an upper bound) or drop it (a lower bound).

        Returns:
            a 1-D array of log delta, one per epsilon, at most 0.
        """
        return derived_delta.log_delta_from_outcomes(self, epsilons, K=K, upper=upper)

    def epsilon_for_delta(self, delta: float, *, K: float = DEFAULT_K) -> float:
        """Smallest epsilon with delta(epsilon) <= ``delta`` (upper end of the search: it meets the target)."""
        return derived_delta.epsilon_for_delta(
            lambda eps: float(self.log_delta(np.array([eps]), K=K)[0]), delta
        )

    def binned(self, *, interval: float, pessimistic: bool, K: float = DEFAULT_K, log_masses: bool = False):
        """The binned privacy loss distribution (:func:`shuffledp.accounting.views.derived.pld.binned`)."""
        return derived_pld.binned(
            self, interval=interval, pessimistic=pessimistic, K=K, log_masses=log_masses
        )

    def pld(self, *, interval: float, pessimistic: bool, subsample: float = 1.0, K: float = DEFAULT_K):
        """Our dense PLD of one (subsampled) round (:func:`shuffledp.accounting.views.derived.pld.pld`);
        ``.to_dp_accounting()`` makes it a dp_accounting ``PrivacyLossDistribution``."""
        return derived_pld.pld(self.binned(interval=interval, pessimistic=pessimistic, K=K), subsample)

    def log_moments(self, orders, *, K: float = DEFAULT_K) -> np.ndarray:
        """Certified upper bound on log M_lambda (Renyi moments), the larger direction
        (:func:`shuffledp.accounting.views.derived.rdp.view_log_moments`)."""
        return derived_rdp.view_log_moments(self, orders, K=K)

    def has_tail(self, *, subsample: float = 1.0) -> bool:
        """Whether :meth:`tail_rounds` forms the certified composed tail for this setting at rate ``subsample``
        (a view whose stream certifies a tail only up to some size overrides it; default
        :attr:`certifies_tail`)."""
        return self.certifies_tail

    def tail_rounds(
        self, *, interval: float, subsample: float = 1.0, count: int = 1, K: float = 38.0
    ) -> list:
        """[REMOVE, ADD] :class:`~shuffledp.accounting.numerics.composed_tail.TailRound` of ``count`` such rounds,
        for the certified composed Chernoff tail (:mod:`shuffledp.accounting.views.derived.tail`)."""
        if not self.certifies_tail:
            raise ValueError(
                f"view {self.name!r} does not certify a composed tail (its masses are not formed "
                f"outcome by outcome in log space)."
            )
        logs = self.binned(interval=interval, pessimistic=True, K=K, log_masses=True).logs
        remove = derived_tail.tail_round(logs, interval, subsample, Direction.REMOVE, count)
        if self.symmetric and subsample == 1.0:
            return [remove, remove]
        return [remove, derived_tail.tail_round(logs, interval, subsample, Direction.ADD, count)]


class FamilyView(abc.ABC):
    """A set of member views (one per dataset pair): derived values are the maximum over the members."""

    name: ClassVar[str]
    #: the randomizer classes every member is defined for (as :attr:`View.randomizers`)
    randomizers: ClassVar[tuple[type[Randomizer], ...]] = (KRR,)

    def __init__(self, setting: ShuffleSetting):
        self.setting = setting

    @abc.abstractmethod
    def members(self) -> Iterator[View]:
        """The member views."""

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """The largest member's log delta at each epsilon (the contract of :meth:`View.log_delta`)."""
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        out = np.full(eps.shape, -np.inf)
        for member in self.members():
            out = np.maximum(out, member.log_delta(eps, K=K, upper=upper))
        return out


def log_delta_from_outcomes(
    view: View, epsilons, *, K: float = DEFAULT_K, upper: bool = True, chunk_epsilons: int = 64
) -> np.ndarray:
    """Generic log delta of a view at each epsilon, the larger of its directions: the exact log-space
    sum of (P - e^eps Q)_+ over the outcomes yielded (every term positive: no cancellation), plus the
    left-out P-mass when ``upper`` (an upper bound on the pair's delta) or without it (a lower bound).
    (:func:`shuffledp.accounting.views.derived.delta.log_delta_from_outcomes`.)"""
    return derived_delta.log_delta_from_outcomes(
        view, epsilons, K=K, upper=upper, chunk_epsilons=chunk_epsilons
    )
