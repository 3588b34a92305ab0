"""Composition of shuffled k-RR accountants through privacy loss distributions (Google's ``dp_accounting``).

After T rounds (adaptive composition) the tight delta of a mechanism with a dominating pair (P, Q)
is the hockey-stick divergence of the T-fold products (Zhu, Dong, Wang 2022, Thm 10; Koskela,
Heikkila, Honkela 2021, Thm 2 (strong adversary), Thm 5 (weak adversary), eq. (3.2) (clones)):

    delta_T(eps) = H_{e^eps}(P_1 x ... x P_T || Q_1 x ... x Q_T) = E[(1 - e^(eps - L_1 - ... - L_T))_+] + Pr(some L_i = inf),

L_i = log(P_i / Q_i) drawn from P_i: the privacy loss distribution (PLD) of round i; composition is
convolution of PLDs. This module builds each round's PLD through the generic layer
(:mod:`shuffledp.accounting.views.derived.pld`: from the view's outcomes for accountants with a view, from
their own binned view otherwise) as our dense PLD (:mod:`shuffledp.accounting.numerics.dense_pld`), composed
exactly as dp_accounting composes its ``DensePLDPmf`` (FFT with Chernoff-bounded truncation, whose truncated
right tail goes to the infinity mass in pessimistic mode; the same public numerical functions, so the same
bits); :func:`privacy_loss_distribution` hands a round to dp_accounting through its public constructor.

**Which way each result errs.**

* Accountants with ``BoundKind.UPPER`` (``strong-adversary``, ``weak-adversary``, ``feldman-numerical``,
  ``clones-krr``): *pessimistic* PLDs. Each loss is rounded up to the grid of width Delta
  (``value_discretization_interval``) and every mass left out of the summation windows (a certified
  bound) is added to the infinity mass. Since delta_T is non-decreasing in every loss value and every
  mass, delta_T and eps_T(delta) are upper bounds, at most delta_T(eps - T Delta) and
  eps_T(delta) + T Delta (the rounding moves the sum of T losses by < T Delta).
* ``worst-case-lower`` (``BoundKind.LOWER``): *optimistic* PLDs of explicit datasets (losses rounded
  down, truncated mass dropped), composed for the same datasets in every round -- one adversary's
  strategy, so a lower bound on the composed worst case; the largest over the datasets and both
  directions is returned, minus 2 x ``tail_mass_truncation`` per convolution (the truncation mass that
  dp_accounting adds to the infinity mass, and the FFT wrap-around of at most that mass).

Both directions are composed: for a pair whose swap is itself relabelled (every UPPER view here) one
PLD serves both; otherwise (subsampling, the "all on x0" dataset) dp_accounting keeps the REMOVE
(P vs Q) and ADD (Q vs P) PLDs and returns the larger delta (smaller guarantee) of the two.

**Subsampling** (Girgis et al. 2021's setting: each round a uniformly random subset of m = q n users
reports). By Zhu, Dong, Wang (2022, Prop. 30; as used by Koskela et al. Sec. 3.4), if (P, Q) dominates
the shuffler of m users under replace-one, then (q P + (1 - q) Q, Q) dominates the subsampled one; its
loss is log(q e^L + 1 - q) under q P + (1 - q) Q, and its ADD direction is (Q, q P + (1 - q) Q). The
binned view keeps the P- and Q-mass of each loss bin, so the mixture masses are exact and only the
loss is rounded (up for upper bounds, from the bin's conservative edge). ``n_users`` is the population
n, as in the papers ("n = 10^5 users, subsampling ratio q = 0.01"); each round samples m = q n users,
and a q n that is below 1 or not a whole number is refused (:func:`~shuffledp.accounting.params.users_per_round`).

**Certified profiles** (``worst-case-upper``: a maximum over datasets taken at each epsilon, the profile of
no single pair) compose through the pair dominating their profile (:mod:`shuffledp.accounting.views.derived.profile`;
the argument and its conditions: docs/composing-a-profile.md). Such an accountant names the accountant composed
beside it (``composed_beside``): :func:`compose_tighter` composes both and reports, at each epsilon or delta, the
smaller upper bound and which gave it (:class:`TighterComposed`); both are guarantees for the same rounds.

Accuracy: dp_accounting works in linear space, so composed deltas carry an absolute error of about
1e-15 (FFT rounding and ``tail_mass_truncation``); deltas below ~1e-13 are not resolved after
composition (a single round is exact in log space through the accountants themselves).
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from shuffledp._validation import check_integer, check_probability, check_real, check_real_array
from shuffledp.accounting import Accountant, accountant_class, list_accountants
from shuffledp.accounting.composition_tail import (
    certifies_tail,
    check_supported,
    round_accountant,
    tail_rounds,
)
from shuffledp.accounting.numerics.composed_tail import epsilon_bound, log_delta_bound
from shuffledp.accounting.numerics.dense_pld import Pld
from shuffledp.accounting.numerics.pld_epsilon import delta_for_epsilon as pld_delta_for_epsilon
from shuffledp.accounting.numerics.pld_epsilon import epsilon_for_delta as pld_epsilon_for_delta
from shuffledp.accounting.params import MAX_K, BoundKind, ShuffleSetting, users_per_round
from shuffledp.accounting.randomizers import Randomizer
from shuffledp.accounting.views.binned import BinnedView
from shuffledp.accounting.views.derived import pld as derived_pld

if TYPE_CHECKING:  # annotations only: dp_accounting is imported where it is used (see _LAZY_IMPORTS in
    # shuffledp.accounting.numerics.dense_pld)
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

__all__ = [
    "composable",
    "Round",
    "ComposedAccountant",
    "compose",
    "compose_tighter",
    "TighterComposed",
    "round_pld",
    "privacy_loss_distribution",
    "optimistic_privacy_loss_distribution",
    "DEFAULT_INTERVAL",
    "DEFAULT_TAIL",
    "MAX_COMPOSITIONS",
]

#: loss grid width Delta used when none is given (rounding moves eps_T by at most T Delta)
DEFAULT_INTERVAL = 1e-5
#: dp_accounting's tail_mass_truncation for each convolution
DEFAULT_TAIL = 1e-15
#: the largest number of rounds accepted
MAX_COMPOSITIONS = 10**6
#: largest n per round for which a view is built (work ~ sqrt(n) x sqrt(n) pairs)
MAX_USERS_PER_ROUND = 10**8
_K_WINDOW = 9.0  # windows of +- ~9 sd: certified remainder ~e^-40 per tail
#: composed deltas below this are not resolved by the linear-space PLD (FFT rounding ~1e-15 per convolution)
PLD_FLOOR = 1e-13
#: below this PLD value the Chernoff tail bound is also evaluated and the smaller taken (above it the
#: PLD, within T Delta of tight, is always the smaller: the Chernoff bound is loose by a polynomial factor)
TAIL_BAND = 1e-10


def composable() -> dict[str, BoundKind]:
    """Registered accountants whose view is an explicit pair of distributions (they implement
    :meth:`~shuffledp.accounting.accountants.base.Accountant.binned_views`), with their kind.

    Returns:
        Registry name -> :class:`~shuffledp.accounting.params.BoundKind` of each composable accountant.
    """
    return {
        name: accountant_class(name).kind
        for name in list_accountants()
        if accountant_class(name).composable()
    }


@dataclass(frozen=True)
class Round:
    """One round of a composition: the population n (``n_users``), the randomizer every user applies, and the
    rate q (``per_round`` = q n users are sampled and report; n of them when q = 1).

    ``Round(epsilon_local, n_users, k, subsample)`` is a round of k-RR(epsilon_local, k) (the shorthand
    :class:`~shuffledp.accounting.params.ShuffleSetting` has too); :meth:`of` (or ``randomizer=``) carries any
    randomizer, whose ``epsilon_local`` and ``k`` are then read from it (``k`` None for one without a domain).
    """

    epsilon_local: float | None
    n_users: int
    k: int | None
    subsample: float = 1.0
    randomizer: Randomizer | None = None

    def __post_init__(self):
        setting = ShuffleSetting(
            epsilon_local=self.epsilon_local, n_users=self.n_users, k=self.k, randomizer=self.randomizer
        )
        object.__setattr__(self, "randomizer", setting.randomizer)
        object.__setattr__(self, "epsilon_local", setting.epsilon_local)
        object.__setattr__(self, "n_users", setting.n_users)
        if setting.k is not None:
            object.__setattr__(self, "k", check_integer(setting.k, "k", low=2, high=MAX_K))
        object.__setattr__(
            self, "subsample", check_real(self.subsample, "subsample", low=0.0, high=1.0, low_open=True)
        )
        check_integer(
            self.per_round, "users per round (subsample x n_users)", low=1, high=MAX_USERS_PER_ROUND
        )
        if self.epsilon_local > 50.0:
            raise ValueError(
                f"`epsilon_local` must be in (0, 50] for composition (losses up to eps0 on a grid); "
                f"got {self.epsilon_local!r}."
            )

    @classmethod
    def of(cls, randomizer: Randomizer, *, n_users: int, subsample: float = 1.0) -> Round:
        """The round where ``subsample`` x ``n_users`` users of a population of ``n_users`` each apply ``randomizer``.

        Args:
            randomizer: the local randomizer (:mod:`shuffledp.accounting.randomizers`).
            n_users: the population n.
            subsample: the rate q in (0, 1].

        Returns:
            The round.

        Raises:
            ValueError: a parameter out of range (one line naming it).
        """
        return cls(None, n_users, None, subsample, randomizer)

    @classmethod
    def of_setting(cls, setting: ShuffleSetting, *, subsample: float = 1.0) -> Round:
        """The round of ``setting`` (its ``n_users`` the population, its randomizer every user's) at rate ``subsample``."""
        return cls(None, setting.n_users, None, subsample, setting.randomizer)

    @property
    def per_round(self) -> int:
        """Users sampled (and reporting) each round: q n (:func:`~shuffledp.accounting.params.users_per_round`)."""
        return users_per_round(self.n_users, self.subsample)


def _views(name: str, r: Round, interval: float, pessimistic: bool) -> list[BinnedView]:
    accountant = round_accountant(name, r)
    return accountant.binned_views(interval=interval, pessimistic=pessimistic, K=_K_WINDOW)


def _check_subsample_of_kind(name: str, kind: BoundKind, rounds) -> None:
    """Refuse subsampling for a lower bound. (q P + (1 - q) Q, Q) dominates the subsampled pair, which is
    right for an upper bound; but for one pair of datasets the round in which u is not sampled has the
    others' own law (P itself for 'all on x0'), not Q, so the mixture is no dataset pair's law and can
    exceed the true delta (Koskela Fig. 2 setting: 0.01182 against the exact pair's 0.01058)."""
    if kind is BoundKind.LOWER and any(r.subsample != 1.0 for r in rounds):
        raise ValueError(
            f"`subsample` must be 1 for the lower bound {name!r} (its subsampled mixture is no "
            f"dataset pair's law); got {min(r.subsample for r in rounds)!r}."
        )


def round_pld(
    name: str, r: Round, *, interval: float = DEFAULT_INTERVAL, pessimistic: bool | None = None
) -> list[Pld]:
    """The PLD(s) of one round of accountant ``name`` (one per dataset for ``worst-case-lower``), as our dense
    :class:`~shuffledp.accounting.numerics.dense_pld.Pld` (``.to_dp_accounting()`` for dp_accounting's).
    ``pessimistic`` defaults to the accountant's kind (upper bounds pessimistic, the rest optimistic).

    Args:
        name: the registry name of a composable accountant (:func:`composable`).
        r: the round (its setting and subsampling rate).
        interval: the PLD's loss grid.
        pessimistic: round losses up and move left-out mass to infinity (True) or round down and drop it
            (False); None: by the accountant's kind.

    Returns:
        One PLD per dataset of the accountant (one for every accountant but ``worst-case-lower``).

    Raises:
        ValueError: an unknown ``name``, a subsampled round (q < 1) for a lower bound, or a setting the
            accountant refuses.
    """
    _check_subsample_of_kind(name, accountant_class(name).kind, [r])
    if pessimistic is None:
        pessimistic = accountant_class(name).kind is BoundKind.UPPER
    return list(_round_plds(name, r, float(interval), bool(pessimistic)))


@functools.lru_cache(maxsize=8)
def _round_plds(name: str, r: Round, interval: float, pessimistic: bool) -> tuple[Pld, ...]:
    """:func:`round_pld`, kept for the few last rounds: the same round composed 1, 4 and 16 times (a figure's
    curves) is built once. A PLD is never changed (composing makes a new one)."""
    return tuple(derived_pld.pld(view, r.subsample) for view in _views(name, r, interval, pessimistic))


def _export_pld(name: str, r: Round, interval, dataset, pessimistic: bool):
    """The dp_accounting PLD of one round (the dataset asked, or the one with the largest epsilon at 1e-6)."""
    names = composable()
    if name not in names:
        raise ValueError(
            f"`name` must be one of {', '.join(sorted(names))} (accountants with an explicit pair "
            f"of distributions); got {name!r}."
        )
    interval = check_real(interval, "value_discretization_interval", low=0.0, high=0.1, low_open=True)
    plds = round_pld(name, r, interval=interval, pessimistic=pessimistic)
    if dataset is not None:
        return plds[check_integer(dataset, "dataset", low=0, high=len(plds) - 1)].to_dp_accounting()
    return max(plds, key=lambda pld: pld_epsilon_for_delta(pld, 1e-6)).to_dp_accounting()


def _refusal(name: str, r: Round) -> str | None:
    """Why ``name`` exports no guarantee for this setting (None: it does): a lower bound, or a view that is
    not a dominating pair here (``View.refusal``)."""
    cls = accountant_class(name)
    if cls.kind is BoundKind.LOWER:
        return (
            f"{name!r} is a lower bound, not a guarantee: use optimistic_privacy_loss_distribution for its "
            f"optimistic PLD"
        )
    if cls.view_class is not None:
        return round_accountant(name, r).view().refusal()
    return None


def privacy_loss_distribution(
    name: str,
    epsilon_local: float,
    n_users: int,
    k: int,
    *,
    value_discretization_interval: float = 1e-4,
    subsample: float = 1.0,
    dataset: int | None = None,
) -> PrivacyLossDistribution:
    """One round of shuffled k-RR as a ``dp_accounting`` ``PrivacyLossDistribution`` that is a guarantee, to
    be composed there with other mechanisms' PLDs (``from_gaussian_mechanism``, ``from_laplace_mechanism``, ...);
    built through dp_accounting's public ``PrivacyLossDistribution.create_from_rounded_probability``.

    **Neighbouring relation: replace-one** (D and D' differ in one user's value; n is the same). Compose
    it only with PLDs built for the same relation, e.g. dp_accounting's
    ``neighboring_relation=NeighboringRelation.REPLACE_ONE`` (the Gaussian's ``sensitivity`` is then the
    largest change when one record is replaced: sqrt 2 for a histogram, 2 C for a sum clipped at C), and
    with the same ``value_discretization_interval`` (dp_accounting requires it).

    Which way it errs: the PLD is *pessimistic* -- losses rounded up by less than the interval, every mass
    outside the certified windows moved to the infinity mass -- so every delta or epsilon read from it, alone
    or after composition, is an upper bound (at most one interval per round above). Only accountants whose
    view dominates every dataset pair of the setting are exported: a lower bound (``worst-case-lower``) is
    refused (its optimistic PLD: :func:`optimistic_privacy_loss_distribution`), and so is ``clones-krr-2023`` at
    k >= 3 (not a guarantee; one line says why). ``subsample`` q < 1 gives the round that samples q ``n_users``
    users of the population ``n_users`` (module docstring). ``dataset``: the dataset's index for accountants
    with several (default: the one with the largest single-round epsilon at delta = 1e-6).

    Args:
        name: the registry name of a composable accountant that is a guarantee for the setting.
        epsilon_local: the local epsilon_0 of k-RR.
        n_users: the number of users (the population when ``subsample`` < 1).
        k: the domain size.
        value_discretization_interval: the PLD's loss grid, in (0, 0.1].
        subsample: the rate q in (0, 1] at which the round samples its users.
        dataset: the index of the dataset for accountants with several; None: the one with the largest
            single-round epsilon at delta = 1e-6.

    Returns:
        dp_accounting's pessimistic ``PrivacyLossDistribution`` of the round.

    Raises:
        ValueError: ``name`` is not composable or not a guarantee for the setting (a lower bound, or a
            view that does not dominate every dataset pair here), a parameter out of range, or ``dataset``
            not an index of the accountant's datasets.
    """
    if name in composable():
        r = Round(epsilon_local, n_users, k, subsample)
        reason = _refusal(name, r)
        if reason is not None:
            raise ValueError(
                f"`name` must be a guarantee for privacy_loss_distribution: {reason}; got {name!r}."
            )
    return _export_pld(
        name, Round(epsilon_local, n_users, k, subsample), value_discretization_interval, dataset, True
    )


def optimistic_privacy_loss_distribution(
    name: str,
    epsilon_local: float,
    n_users: int,
    k: int,
    *,
    value_discretization_interval: float = 1e-4,
    subsample: float = 1.0,
    dataset: int | None = None,
) -> PrivacyLossDistribution:
    """One round as an *optimistic* dp_accounting PLD (losses rounded down, the mass left out of the windows
    dropped): a lower estimate of the pair's PLD, never a guarantee. For ``worst-case-lower`` it is the PLD
    of one explicit dataset pair (``dataset``, default the one with the largest single-round epsilon at delta
    = 1e-6), hence a lower bound on the worst case, alone or composed (optimistic PLDs on both sides); for
    ``clones-krr-2023`` at k >= 3 it is the pair as printed. Options as :func:`privacy_loss_distribution`.

    Args:
        name: the registry name of a composable accountant (:func:`composable`).
        epsilon_local: the local epsilon_0 of k-RR.
        n_users: the number of users (the population when ``subsample`` < 1).
        k: the domain size.
        value_discretization_interval: the PLD's loss grid, in (0, 0.1].
        subsample: the rate q in (0, 1] at which the round samples its users (1 for a lower bound).
        dataset: the index of the dataset for accountants with several; None: the one with the largest
            single-round epsilon at delta = 1e-6.

    Returns:
        dp_accounting's optimistic ``PrivacyLossDistribution`` of the round.

    Raises:
        ValueError: ``name`` is not composable, a parameter out of range, a subsampled round for a lower
            bound, or ``dataset`` not an index of the accountant's datasets.
    """
    return _export_pld(
        name, Round(epsilon_local, n_users, k, subsample), value_discretization_interval, dataset, False
    )


class ComposedAccountant:
    """delta(eps) and eps(delta) of accountant ``name`` after the given rounds (see module docstring).

    Mirrors :class:`~shuffledp.accounting.accountants.base.Accountant` (``log_delta_for_epsilon``,
    ``delta_for_epsilon``, ``epsilon_for_delta``, ``name``, ``kind``).
    """

    def __init__(
        self,
        name: str,
        rounds,
        *,
        value_discretization_interval: float = DEFAULT_INTERVAL,
        tail_mass_truncation: float = DEFAULT_TAIL,
    ):
        kinds = composable()
        if name not in kinds:
            raise ValueError(
                f"`accountant` must be one of {', '.join(sorted(kinds))} for composition or subsampling "
                f"(accountants whose view is an explicit pair of distributions); got {name!r}."
            )
        rounds = list(rounds)
        if not rounds:
            raise ValueError("`rounds` must contain at least one round; got an empty list.")
        if len(rounds) > MAX_COMPOSITIONS and len(set(rounds)) == len(rounds):
            raise ValueError(f"`rounds` must hold at most {MAX_COMPOSITIONS} rounds; got {len(rounds)}.")
        self.name = name
        self.kind = kinds[name]
        for randomizer in {r.randomizer for r in rounds}:
            check_supported(name, randomizer)
        _check_subsample_of_kind(name, self.kind, rounds)
        self.rounds = tuple(rounds)
        self.interval = check_real(
            value_discretization_interval, "value_discretization_interval", low=0.0, high=0.1, low_open=True
        )
        self.tail = check_real(tail_mass_truncation, "tail_mass_truncation", low=0.0, high=1e-6)
        self._plds: list[Pld] | None = None
        self._convolutions = 0
        self._tail = None

    @property
    def compositions(self) -> int:
        return len(self.rounds)

    def _composed(self) -> list[Pld]:
        if self._plds is not None:
            return self._plds
        groups = Counter(self.rounds)
        per_group = []
        for r, count in groups.items():  # identical rounds: one self-composition
            plds = round_pld(self.name, r, interval=self.interval)
            if count > 1:
                plds = [p.self_compose(count, tail_mass_truncation=self.tail) for p in plds]
                self._convolutions += 1
            per_group.append(plds)
        composed = per_group[0]
        for plds in per_group[1:]:  # datasets line up member by member (same family in every round)
            composed = [a.compose(b, tail_mass_truncation=self.tail) for a, b in zip(composed, plds)]
            self._convolutions += 1
        self._plds = composed
        return composed

    def _slack(self) -> float:
        return 2.0 * self.tail * self._convolutions if self.kind is BoundKind.LOWER else 0.0

    @property
    def has_tail_bound(self) -> bool:
        """Whether deltas below :data:`PLD_FLOOR` are resolved (by the Chernoff bound of
        :mod:`~shuffledp.accounting.numerics.composed_tail`): upper bounds with a tail source."""
        return self.kind is BoundKind.UPPER and certifies_tail(self.name, self.rounds)

    @property
    def resolved_delta(self) -> float:
        """Smallest delta resolved: 0 with the Chernoff tail bound (certified to 1e-300 and below) or for
        one round of an upper bound (the accountant's own log-space delta), else :data:`PLD_FLOOR`. Below
        it the lower bound reports delta 0 and eps(delta) = eps(PLD_FLOOR) (both still lower bounds); an
        upper bound without a tail source reports the PLD's uncertified value."""
        return 0.0 if self.has_tail_bound or self._single_round() is not None else PLD_FLOOR

    def _single_round(self):
        """The accountant of the only round, when its own (log-space, exact) delta is an upper bound on
        this one: one round, no subsampling, an UPPER accountant; else None."""
        if len(self.rounds) != 1 or self.rounds[0].subsample != 1.0 or self.kind is not BoundKind.UPPER:
            return None
        return round_accountant(self.name, self.rounds[0], n_users=self.rounds[0].n_users)

    @staticmethod
    def _single_epsilon(single, delta: float) -> float:
        """The one-round accountant's epsilon(delta); ``inf`` when delta is below its delta at eps = inf
        (its infinity mass: no finite epsilon meets it; the accountant refuses such a delta)."""
        if float(single.log_delta_for_epsilon(np.array([np.inf]))[0]) > math.log(delta):
            return math.inf
        return single.epsilon_for_delta(delta)

    def _tail_rounds(self):
        if self._tail is None:
            self._tail = tail_rounds(self.name, self.rounds, self.interval)
        return self._tail

    def _tail_log_delta(self, epsilon: float) -> float:
        return max(log_delta_bound(direction, epsilon) for direction in self._tail_rounds())

    def _tail_epsilon(self, delta: float) -> float:
        return max(epsilon_bound(direction, math.log(delta)) for direction in self._tail_rounds())

    def _pld_delta(self, epsilons: np.ndarray) -> np.ndarray:
        plds = self._composed()
        order = np.argsort(epsilons, kind="stable")
        # dp_accounting's get_delta_for_epsilon of the same PLD, bit for bit, without its Python loop
        values = np.max(
            [np.asarray(pld_delta_for_epsilon(p, epsilons[order]), dtype=float) for p in plds], axis=0
        )
        out = np.empty_like(values)
        out[order] = values
        return np.clip(out - self._slack(), 0.0, 1.0)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """log delta after all rounds at each epsilon >= 0 (upper or lower bound per ``kind``).

        Upper bounds with a tail bound (:attr:`has_tail_bound`): the PLD value where it is at least
        :data:`TAIL_BAND`, the smaller of the PLD value and the Chernoff bound between :data:`PLD_FLOOR`
        and :data:`TAIL_BAND`, the Chernoff bound alone below :data:`PLD_FLOOR` (the PLD does not resolve
        it). One round of an upper bound (no subsampling): the smaller of the PLD value and the
        accountant's own delta (exact, in log space). Lower bound: PLD values below :data:`PLD_FLOOR` are
        reported as 0 (see :attr:`resolved_delta`).
        """
        epsilons = check_real_array(epsilons, "epsilon", low=0.0)
        pld = self._pld_delta(epsilons)
        if self.kind is BoundKind.LOWER:
            pld = np.where(pld < PLD_FLOOR, 0.0, pld)  # not resolved: 0 is still a lower bound
        with np.errstate(divide="ignore"):
            out = np.log(pld)
        single = self._single_round()
        if single is not None:  # one round: the accountant's own delta, exact in log space, is also valid
            return np.minimum(out, single.log_delta_for_epsilon(epsilons))
        if self.has_tail_bound:
            for i in np.flatnonzero(pld < TAIL_BAND):
                tail = self._tail_log_delta(float(epsilons[i]))
                out[i] = tail if pld[i] < PLD_FLOOR else min(out[i], tail)
        return out

    def delta_for_epsilon(self, epsilons) -> np.ndarray:
        """delta after all rounds at each epsilon >= 0 (see :meth:`log_delta_for_epsilon`)."""
        return np.exp(self.log_delta_for_epsilon(epsilons))

    def epsilon_for_delta(self, delta: float) -> float:
        """Smallest epsilon with composed delta(epsilon) <= ``delta`` (an upper bound on the true epsilon for
        UPPER accountants, a lower bound for LOWER ones); ``inf`` when the infinity mass exceeds ``delta``.
        With a tail bound: the Chernoff epsilon below :data:`PLD_FLOOR`, the smaller of it and the PLD's
        below :data:`TAIL_BAND`; one round of an upper bound: the accountant's own epsilon below
        :data:`PLD_FLOOR`, the smaller of it and the PLD's above. Lower bound: below :data:`PLD_FLOOR` it answers for :data:`PLD_FLOOR` (a
        smaller epsilon, so still a lower bound)."""
        delta = check_probability(delta, "delta", allow_zero=False, allow_one=True)
        single = self._single_round()
        if single is not None and delta < PLD_FLOOR:
            return self._single_epsilon(single, delta)
        if delta < PLD_FLOOR and self.has_tail_bound:
            return self._tail_epsilon(delta)
        target = max(delta, PLD_FLOOR) if self.kind is BoundKind.LOWER else delta
        plds = self._composed()
        # dp_accounting's get_epsilon_for_delta of the same PLD, bit for bit, without its Python loop
        value = float(max(pld_epsilon_for_delta(p, min(1.0, target + self._slack())) for p in plds))
        if single is not None:
            return min(value, self._single_epsilon(single, delta))
        if delta < TAIL_BAND and self.has_tail_bound:
            value = min(value, self._tail_epsilon(delta))
        return value

    def __repr__(self) -> str:
        return f"ComposedAccountant({self.name!r}, rounds={len(self.rounds)}, interval={self.interval})"


def compose(
    bound,
    setting: ShuffleSetting | None = None,
    *,
    epsilon_local: float | None = None,
    n_users: int | None = None,
    k: int | None = None,
    compositions: int = 1,
    subsample: float = 1.0,
    rounds=None,
    value_discretization_interval: float = DEFAULT_INTERVAL,
    tail_mass_truncation: float = DEFAULT_TAIL,
) -> ComposedAccountant:
    """Composed accountant: ``compositions`` identical rounds of one setting, or the heterogeneous ``rounds``.

    Args:
        bound: the bound composed, given as an accountant (an instance: its setting is the default
            ``setting``), an accountant class, or its registry name; it must be composable (:func:`composable`).
        setting: the setting of every round (its ``n_users`` the population, its randomizer every user's).
        epsilon_local: with ``n_users`` and ``k``, the shorthand for a setting of k-RR(epsilon_local, k).
        n_users: the number of users (the population when ``subsample`` < 1).
        k: the domain size (also of every (epsilon_local, n_users) pair of ``rounds``).
        compositions: the number of identical rounds.
        subsample: the rate q of every round: each samples q ``n_users`` users of the population.
        rounds: a sequence of :class:`Round` (each carrying its randomizer), or of (epsilon_local, n_users)
            pairs of k-RR (then ``k`` and ``subsample`` apply to every round).
        value_discretization_interval: the PLD's loss grid.
        tail_mass_truncation: dp_accounting's tail mass truncated per convolution, in [0, 1e-6].

    Returns:
        :class:`ComposedAccountant`.

    Raises:
        ValueError: a parameter out of range, a bound that does not compose, or a randomizer the bound (or its
            view) does not support (one line naming it).
    """
    name, setting = _bound_and_setting(bound, setting)
    compositions = check_integer(compositions, "compositions", low=1, high=MAX_COMPOSITIONS)
    subsample = check_real(subsample, "subsample", low=0.0, high=1.0, low_open=True)
    if rounds is None:
        if setting is not None:
            rounds = [Round.of_setting(setting, subsample=subsample)] * compositions
        elif epsilon_local is None or n_users is None or k is None:
            raise ValueError(
                "`epsilon_local`, `n_users` and `k` are required when neither `rounds` nor a `setting` is given."
            )
        else:
            rounds = [Round(epsilon_local, n_users, k, subsample)] * compositions
    else:
        if compositions != 1:
            raise ValueError(
                f"`compositions` must be 1 when `rounds` is given (one entry per round); got {compositions}."
            )
        rounds = [_round(entry, k, subsample) for entry in rounds]
    return ComposedAccountant(
        name,
        rounds,
        value_discretization_interval=value_discretization_interval,
        tail_mass_truncation=tail_mass_truncation,
    )


class TighterComposed:
    """The smaller of several composed upper bounds on the same rounds, and which gave it (each a
    :class:`ComposedAccountant` of an UPPER accountant, so the smaller is also an upper bound).

    Mirrors :class:`ComposedAccountant` (``log_delta_for_epsilon``, ``delta_for_epsilon``, ``epsilon_for_delta``,
    ``name`` -- the first member's --, ``kind``); ``*_with_source`` also name the member that gave each value.
    """

    def __init__(self, members):
        members = list(members)
        if not members or any(m.kind is not BoundKind.UPPER for m in members):
            raise ValueError(
                f"`members` must be one or more composed upper bounds; got "
                f"{[(m.name, m.kind.value) for m in members]!r}."
            )
        self.members = tuple(members)
        self.name = members[0].name
        self.kind = BoundKind.UPPER

    @property
    def compositions(self) -> int:
        return self.members[0].compositions

    def log_delta_with_source(self, epsilons) -> tuple[np.ndarray, list[str]]:
        """(log delta, name of the member giving it) at each epsilon >= 0: the smallest of the members' (ties:
        the first member).

        Args:
            epsilons: epsilons >= 0.

        Returns:
            The log deltas and, per epsilon, the registry name of the member that gave it.

        Raises:
            ValueError: a negative or non-finite epsilon.
        """
        values = np.array([m.log_delta_for_epsilon(epsilons) for m in self.members])
        best = np.argmin(values, axis=0)
        return values[best, np.arange(values.shape[1])], [self.members[i].name for i in best]

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """log delta after all rounds at each epsilon >= 0: the smallest of the members' upper bounds."""
        return self.log_delta_with_source(epsilons)[0]

    def delta_for_epsilon(self, epsilons) -> np.ndarray:
        """delta after all rounds at each epsilon >= 0 (see :meth:`log_delta_for_epsilon`)."""
        return np.exp(self.log_delta_for_epsilon(epsilons))

    def epsilon_with_source(self, delta: float) -> tuple[float, str]:
        """(epsilon, name of the member giving it): the smallest of the members' composed epsilons at ``delta``
        (ties: the first member).

        Args:
            delta: the target delta in (0, 1].

        Returns:
            The epsilon and the registry name of the member that gave it.

        Raises:
            ValueError: ``delta`` outside (0, 1].
        """
        values = [m.epsilon_for_delta(delta) for m in self.members]
        best = int(np.argmin(values))
        return float(values[best]), self.members[best].name

    def epsilon_for_delta(self, delta: float) -> float:
        """Smallest of the members' composed epsilons at ``delta`` (an upper bound on the true epsilon)."""
        return self.epsilon_with_source(delta)[0]

    def __repr__(self) -> str:
        return f"TighterComposed({[m.name for m in self.members]!r}, rounds={self.compositions})"


def compose_tighter(bound, setting: ShuffleSetting | None = None, **options):
    """:func:`compose` of ``bound``, and of the accountant it names to be composed beside it
    (``composed_beside``, e.g. ``weak-adversary`` beside ``worst-case-upper``) on the same rounds: the tighter
    of the two at each epsilon or delta (:class:`TighterComposed`). A bound that names none is composed alone.

    Args:
        bound: as :func:`compose`.
        setting: as :func:`compose`.
        **options: :func:`compose`'s keyword arguments.

    Returns:
        :class:`TighterComposed` (or :class:`ComposedAccountant` when ``bound`` names no accountant beside it).

    Raises:
        ValueError: as :func:`compose`.
    """
    first = compose(bound, setting, **options)
    beside = accountant_class(first.name).composed_beside
    if beside is None:
        return first
    second = ComposedAccountant(
        beside,
        first.rounds,
        value_discretization_interval=first.interval,
        tail_mass_truncation=first.tail,
    )
    return TighterComposed([first, second])


def _bound_and_setting(bound, setting):
    """(registry name, setting) of :func:`compose`'s ``bound`` (a name, an accountant class or instance)."""
    if isinstance(bound, Accountant):
        return bound.name, bound.setting if setting is None else setting
    if isinstance(bound, type) and issubclass(bound, Accountant):
        return bound.name, setting
    return bound, setting


def _round(entry, k, subsample: float) -> Round:
    """One entry of :func:`compose`'s ``rounds``: a :class:`Round`, or an (epsilon_local, n_users) pair of k-RR."""
    if isinstance(entry, Round):
        return entry
    if k is None:
        raise ValueError("`k` is required when `rounds` holds (epsilon_local, n_users) pairs.")
    e0, n = entry
    return Round(e0, n, k, subsample)
