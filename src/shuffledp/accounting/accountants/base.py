"""Common interface of every accountant for the shuffled k-RR histogram query.

Setting (paper notation): ``n_users`` users each apply k-RR with local parameter ``epsilon_local``
(epsilon_0) over a domain of size ``k``; the distinguished user u holds x0 in D(x0) and x1 in D(x1);
``n_x0`` of the *other* n - 1 users hold x0. Accountants that do not depend on the dataset ignore
``n_x0`` (their :attr:`Accountant.scope` says so).

Accepted parameters (every accountant): ``randomizer`` (optional: a
:class:`~shuffledp.accounting.randomizers.Randomizer` of a class in :attr:`Accountant.randomizers`, from
which ``epsilon_local`` and ``k`` are then read; refused in one line otherwise), or ``epsilon_local``
finite in (0, inf) -- infinity is refused (k-RR is then deterministic and no finite computation
applies); ``n_users`` an integer in [1, :data:`MAX_N_USERS`] = [1, 10^15] (every such integer, and
n - 1, is exact in floating point); ``k`` an integer in [2, :data:`MAX_K`] = [2, 10^15] (same reason:
k - 1 and k - 2 must be exact; not required by an accountant whose randomizer has no domain size).
Families whose work grows with n refuse larger n with a message naming their own limit. Epsilons
may be any value in [0, inf], infinity included (delta at epsilon = inf is the limit as epsilon
grows).

Every accountant is labelled with what its delta is (:class:`BoundKind`) and for which datasets and
directions that label holds (:attr:`Accountant.scope`). Tests hold each label to account:
``lower <= exact <= upper`` on cases small enough to enumerate.
"""

from __future__ import annotations

import abc
import functools
import math
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from shuffledp._validation import check_probability, check_real_array
from shuffledp.accounting.numerics.safe_side import DEFAULT_RELATIVE_ROUNDING, widen
from shuffledp.accounting.numerics.search import first_not_above
from shuffledp.accounting.params import MAX_K, MAX_N_USERS, BoundKind, ShuffleSetting
from shuffledp.accounting.randomizers import KRR, Randomizer, check_accepted

if TYPE_CHECKING:  # the views import this layer's parameters only; annotations need the class
    from shuffledp.accounting.views.base import View

__all__ = ["BoundKind", "ShuffleSetting", "Accountant", "MAX_N_USERS", "MAX_K"]


class Accountant(abc.ABC):
    """Base class: delta for many epsilons at once, and epsilon for a target delta.

    Subclasses implement :meth:`log_delta_for_epsilon` (natural log of delta; ``-inf`` for delta = 0)
    and set the class attributes below.
    """

    #: registry name, e.g. "biswas-exact"
    name: ClassVar[str]
    #: what the delta is (see :class:`BoundKind`)
    kind: ClassVar[BoundKind]
    #: datasets and directions for which ``kind`` holds, in words
    scope: ClassVar[str]
    #: source of the formula (paper, theorem, equation)
    reference: ClassVar[str]
    #: column label in tables and legends (honest about what the delta is)
    label: ClassVar[str]
    #: plot colour (hex), the same in every figure
    colour: ClassVar[str]
    #: derived names drawn like accountants: name -> (label, colour) (e.g. one direction option)
    variants: ClassVar[dict[str, tuple[str, str]]] = {}
    #: whether the result depends on ``n_x0`` (then ``n_x0`` is required)
    needs_n_x0: ClassVar[bool] = False
    #: the accountant composed beside this one when it composes through the pair dominating its certified
    #: profile (:mod:`shuffledp.accounting.views.derived.profile`): composed guarantees report the tighter of
    #: the two (:func:`shuffledp.accounting.composition.compose_tighter`); None: composed alone
    composed_beside: ClassVar[str | None] = None
    #: whether delta is non-increasing in epsilon (true of every hockey-stick divergence and of most
    #: closed forms; a published bound that rises again with epsilon sets False -- each value is still
    #: valid, but :meth:`epsilon_for_delta` then returns an epsilon that meets the target, not
    #: necessarily the smallest)
    monotone_in_epsilon: ClassVar[bool] = True
    #: the randomizer classes whose setting the accountant's delta is about (``isinstance``; ``(Randomizer,)``:
    #: every eps0-LDP randomizer). Built from loose parameters, an accountant that accepts k-RR uses
    #: k-RR(epsilon_local, k); otherwise its first class's ``from_parameters``.
    randomizers: ClassVar[tuple[type[Randomizer], ...]] = (KRR,)
    #: the view (:class:`~shuffledp.accounting.views.base.View`) whose pair this accountant evaluates, when it
    #: is one view of its setting: its binned PLD, Renyi moments and composed tail are then derived from the
    #: view's outcomes (:mod:`shuffledp.accounting.views.derived`)
    view_class: ClassVar[type[View] | None] = None
    #: bound on the relative rounding error of the delta the subclass computes; every value of
    #: :meth:`log_delta_for_epsilon` is widened outward by it (:mod:`shuffledp.accounting.numerics.safe_side`:
    #: UPPER up, LOWER and EXACT down), so that no pair of bounds crosses through rounding
    relative_rounding: ClassVar[float] = DEFAULT_RELATIVE_ROUNDING
    #: True while ``log_delta_for_epsilon`` runs (a nested call through ``super()`` is then not widened again);
    #: set per instance by the wrapper of ``__init_subclass__``
    _computing_delta: bool = False

    def __init_subclass__(cls, **kwargs):
        """Every subclass's ``log_delta_for_epsilon`` (its own or a mixin's) returns its safe side: the one place
        where values are widened (nested calls through ``super()`` are widened once, at the outermost)."""
        super().__init_subclass__(**kwargs)
        raw = cls.log_delta_for_epsilon
        if getattr(raw, "widened_to_safe_side", False) or getattr(raw, "__isabstractmethod__", False):
            return

        @functools.wraps(raw)
        def log_delta_for_epsilon(self, epsilons):
            if self._computing_delta:
                return raw(self, epsilons)
            self._computing_delta = True
            try:
                values = raw(self, epsilons)
            finally:
                self._computing_delta = False
            return widen(self.kind, values, self.relative_rounding)

        log_delta_for_epsilon.widened_to_safe_side = True
        cls.log_delta_for_epsilon = log_delta_for_epsilon

    def __init__(
        self,
        *,
        epsilon_local: float | None = None,
        n_users: int,
        k: int | None = None,
        n_x0: int | None = None,
        randomizer: Randomizer | None = None,
    ):
        if randomizer is None and not issubclass(KRR, self.randomizers[0]):
            randomizer = self.randomizers[0].from_parameters(
                epsilon_local=epsilon_local,  # type: ignore[arg-type]  # None is refused there, in one line
                k=k,
            )
            epsilon_local = k = None  # read from the randomizer (k is ignored by one without a domain size)
        self.setting = ShuffleSetting(
            epsilon_local=epsilon_local,  # type: ignore[arg-type]  # None: read from the randomizer, or refused
            n_users=n_users,
            k=k,
            n_x0=n_x0,
            randomizer=randomizer,
        )  # None: k-RR(epsilon_local, k)
        check_accepted(f"accountant {self.name!r}", self.randomizers, self.setting.randomizer)
        if self.view_class is not None:  # the view states what it supports (registry: accountant_class)
            check_accepted(
                f"accountant {self.name!r} (its view {self.view_class.name!r})",
                self.view_class.randomizers,
                self.setting.randomizer,
            )
        if self.setting.randomizer is not None:  # always set by the setting; the check narrows its type
            self.check_randomizer_instance(self.setting.randomizer)
        self._own_view = None  # built on first use by :meth:`view`
        if self.needs_n_x0 and self.setting.n_x0 is None:
            raise ValueError(
                f"`n_x0` is required by accountant {self.name!r} and must be an integer in "
                f"[0, {self.setting.n_users - 1}]; got None."
            )

    @classmethod
    def check_randomizer_instance(cls, randomizer: Randomizer) -> None:
        """Refuse, in one line, a randomizer whose class is accepted (:attr:`randomizers`) but which this
        accountant cannot evaluate (e.g. one without output types); by default every accepted one passes.

        Args:
            randomizer: the randomizer instance.

        Raises:
            ValueError: the refusal (in an accountant that overrides this).
        """
        return None

    @abc.abstractmethod
    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """Natural log of delta at each epsilon (array in, array out; -inf means delta = 0), on its safe side:
        a subclass computes the value, and the base widens it by :attr:`relative_rounding` (``__init_subclass__``).

        An accountant that is its view's bound computes it as :meth:`view_log_delta`."""

    def view_log_delta(self, epsilons) -> np.ndarray:
        """The view's ``log_delta`` at the checked epsilons (the body of ``log_delta_for_epsilon`` for an
        accountant whose delta is its view's: :meth:`view` computes, the accountant only states what it is).

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).

        Returns:
            log delta at each epsilon (the view's value; the base widens it to the accountant's safe side).

        Raises:
            ValueError: an epsilon below 0 or not a number.
        """
        return self.view().log_delta(self._checked_epsilons(epsilons))

    def view(self):
        """The accountant's view of its setting (an instance of :attr:`view_class`), built once per
        accountant: the state it keeps (rows, cached blocks) serves every later call.

        Returns:
            the view.

        Raises:
            NotImplementedError: the accountant has no view.
        """
        if self.view_class is None:
            raise NotImplementedError(f"accountant {self.name!r} has no view")
        if self._own_view is None:
            self._own_view = self.view_class(self.setting)
        return self._own_view

    def binned_views(self, *, interval: float, pessimistic: bool, K: float, log_masses: bool = False) -> list:
        """The view's binned privacy loss distribution(s) (:class:`~shuffledp.accounting.views.binned.BinnedView`),
        for accountants whose view is an explicit pair of distributions; the composition layer composes every
        accountant that overrides this. ``pessimistic``: losses rounded up and left-out mass added to the
        infinity mass (upper bounds); otherwise rounded down and dropped (lower bounds). ``log_masses``: also
        keep the masses in log space (``BinnedView.logs``; only views that form each outcome's mass). An
        accountant with a :attr:`view_class` has its view's, derived from the view's outcomes."""
        if self.view_class is not None:
            return [
                self.view().binned(interval=interval, pessimistic=pessimistic, K=K, log_masses=log_masses)
            ]
        raise NotImplementedError(f"accountant {self.name!r} has no binned view (it does not compose)")

    @classmethod
    def composable(cls) -> bool:
        """Whether :meth:`binned_views` is implemented (the composition layer accepts the accountant)."""
        return cls.view_class is not None or cls.binned_views is not Accountant.binned_views

    @classmethod
    def certifies_tail(cls) -> bool:
        """Whether its view's stream certifies the composed Chernoff tail (``View.certifies_tail``)."""
        return cls.view_class is not None and cls.view_class.certifies_tail

    def delta_for_epsilon(self, epsilons) -> np.ndarray:
        """Delta at each epsilon >= 0 (vectorised)."""
        return np.exp(self.log_delta_for_epsilon(epsilons))

    def _checked_epsilons(self, epsilons) -> np.ndarray:
        return check_real_array(epsilons, "epsilon", low=0.0)

    def epsilon_for_delta(self, delta: float, *, tolerance: float = 1e-10) -> float:
        """Smallest epsilon >= 0 with delta(epsilon) <= ``delta``, by bisection on the monotone curve.

        Returns 0.0 when delta(0) <= ``delta`` already. The result errs upwards (it is the upper end
        of the final bracket), so the returned epsilon always meets the target. The bracket grows by
        squaring (1, 2, 4, 16, 256, ...) and is split geometrically while it spans more than a factor
        4, so any epsilon up to the largest float is found in about 60 evaluations; ``inf`` is
        returned when no finite float reaches ``delta`` but delta(inf) does.

        Raises ``ValueError`` when ``delta`` is below delta(inf), the value the accountant's delta
        never falls below (e.g. ``strong-adversary``, whose adversary sees infinite privacy loss with
        positive probability, or bounds that are constant in epsilon outside their conditions).
        """
        delta = check_probability(delta, "delta", allow_zero=True, allow_one=True)
        log_target = math.log(delta) if delta > 0 else -math.inf

        def above(epsilon: float) -> bool:
            if self._certainly_below(epsilon, log_target):  # the exact value would answer no as well
                return False
            return bool(self.log_delta_for_epsilon(epsilon)[0] > log_target)

        if not above(0.0):
            return 0.0
        log_floor = float(self.log_delta_for_epsilon(math.inf)[0])
        if log_floor > log_target:
            floor = math.exp(log_floor)
            if floor > 0:  # six significant digits, rounded up so that the value shown is accepted
                scale = 10.0 ** (5 - math.floor(math.log10(floor)))
                shown = f"{min(1.0, math.ceil(floor * scale) / scale):.6g}"
            else:
                shown = f"exp({log_floor:.6g})"
            raise ValueError(
                f"`delta` must be in [{shown}, 1] for accountant {self.name!r} with these parameters (its "
                f"delta at epsilon = inf); got {delta!r}."
            )
        return first_not_above(above, tolerance=tolerance)

    def _certainly_below(self, epsilon: float, log_target: float) -> bool:
        """True when a certified upper bound on delta(epsilon) is clearly below the target, so that
        :meth:`epsilon_for_delta` may answer its yes/no question without the exact value (the same
        answer: the bisection visits the same points and returns the same epsilon). None here."""
        return False

    def __repr__(self) -> str:
        s = self.setting
        return (
            f"{type(self).__name__}(epsilon_local={s.epsilon_local}, n_users={s.n_users}, k={s.k}, "
            f"n_x0={s.n_x0})"
        )
