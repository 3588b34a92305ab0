"""The parameters of the shuffled query, validated once (second layer of ``accounting``, above ``randomizers``).

* :class:`ShuffleSetting`: n users, the local randomizer they all apply (k-RR by default: epsilon_0 and the
  domain size k), and the dataset (``n_x0``).
* :class:`BoundKind`: what an accountant's delta is relative to the tight delta it targets.
* :class:`Direction`: which hockey-stick divergence of the pair of output laws is read (REMOVE, ADD or
  BOTH); the command line's ``--direction forward|reverse|both`` strings parse into it here only
  (:meth:`Direction.parse`; docs/decisions/vocabulary.md).
* Re-exported from :mod:`shuffledp.accounting.randomizers`, where they live: :class:`KrrParams` (every
  quantity of k-RR that a view uses, in logs, computed once without cancellation and named the same in
  every module; docs/adding-an-accountant.md lists them) and :class:`LaplaceBlanket` (the blanket
  quantities of Balle et al.'s eps0-LDP Laplace randomizer on [0, 1], Lemmas 5.1 (2) and 5.8).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from shuffledp._validation import check_integer, check_real
from shuffledp.accounting.randomizers import KRR, MAX_K, KrrParams, LaplaceBlanket, Randomizer

__all__ = [
    "BoundKind",
    "Direction",
    "ShuffleSetting",
    "KrrParams",
    "MAX_N_USERS",
    "MAX_K",
    "MAX_EPSILON_LOCAL",
    "check_epsilon_local_finite",
    "users_per_round",
    "LaplaceBlanket",
]

#: largest number of users accepted by every accountant (integers up to 2^53 are exact floats)
MAX_N_USERS = 10**15
#: e^(eps + eps0) with eps < eps0 must stay finite in double precision (the view is formed from it)
MAX_EPSILON_LOCAL = 350.0


def check_epsilon_local_finite(epsilon_local: float, name: str) -> None:
    """Refuse an eps0 whose e^eps0 overflows (the view's probabilities would not be representable).

    Args:
        epsilon_local: k-RR's local epsilon_0.
        name: the accountant's name, for the message.

    Raises:
        ValueError: ``epsilon_local`` is above :data:`MAX_EPSILON_LOCAL`.
    """
    if epsilon_local > MAX_EPSILON_LOCAL:
        raise ValueError(
            f"`epsilon_local` must be in (0, {MAX_EPSILON_LOCAL:g}] for {name!r} (e^(eps + eps0) must be finite); "
            f"got {epsilon_local!r}."
        )


def users_per_round(n_users: int, subsample: float) -> int:
    """m = q n: the users sampled each round from the ``n_users`` users at rate ``subsample``.

    The papers' convention (Girgis et al. 2021; Koskela et al. 2023 "n = 10^5 users, subsampling ratio
    q = 0.01"): n is the population and each round a uniformly random subset of exactly m = q n users
    reports. A setting where q n is below 1 or not a whole number has no such m and is refused.

    Args:
        n_users: the number of users n (the population the rounds sample from), in [1, MAX_N_USERS].
        subsample: the sampling rate q, in (0, 1].

    Returns:
        The number of users per round, m = q n.

    Raises:
        ValueError: when ``n_users`` or ``subsample`` is out of range, or q n is not a whole number >= 1.
    """
    population = check_integer(n_users, "n_users", low=1, high=MAX_N_USERS)
    q = check_real(subsample, "subsample", low=0.0, high=1.0, low_open=True)
    m = q * population
    whole = round(m)
    if whole < 1 or abs(m - whole) > 1e-9 * max(1.0, m):
        raise ValueError(
            f"`subsample` x `n_users` must be a whole number >= 1 of users sampled per round (`n_users` is the "
            f"population); got subsample={q!r} x n_users={population} = {m:.10g}."
        )
    return int(whole)


class BoundKind(enum.Enum):
    """What an accountant's delta is, relative to the true (tight) delta it targets."""

    AS_PRINTED = "as printed"  # a formula exactly as printed in a paper, right or wrong
    EXACT = "exact"  # the tight delta for the stated dataset(s) and direction(s)
    UPPER = "upper bound"  # >= the tight delta for every dataset in its scope
    LOWER = "lower bound"  # <= the tight delta of the full histogram for datasets in its scope
    RATE = "asymptotic rate"  # an order-of-magnitude rate with constant 1; not a bound


class Direction(enum.StrEnum):
    """Which hockey-stick divergence of the pair (P, Q) of output laws is read: P is the law when the
    differing user holds x0, Q when it holds x1 (the paper's D(x0) vs D(x1)).

    * ``REMOVE``: H_{e^eps}(P || Q), the paper's direction (dp_accounting's REMOVE; formerly written
      ``"forward"``, ``"x0|x1"`` and ``"D||D'"``);
    * ``ADD``: H_{e^eps}(Q || P), the swapped pair (formerly ``"reverse"``, ``"x1|x0"``, ``"D'||D"``);
    * ``BOTH``: the larger of the two.

    The members' values are the command line's ``--direction`` strings (``forward``, ``reverse``,
    ``both``), parsed by :meth:`parse` only; a member compares equal to its string, so code that still
    holds the strings reads the same direction.
    """

    REMOVE = "forward"
    ADD = "reverse"
    BOTH = "both"

    @classmethod
    def parse(cls, value: Direction | str, name: str = "direction") -> Direction:
        """The direction named by ``value`` (a member, or its command-line string).

        Args:
            value: a :class:`Direction`, or one of ``"forward"``, ``"reverse"``, ``"both"``.
            name: the parameter's name in the error message.

        Returns:
            The :class:`Direction` member.

        Raises:
            ValueError: when ``value`` names no direction.
        """
        if isinstance(value, cls):
            return value
        for member in cls:
            if isinstance(value, str) and value == member.value:
                return member
        choices = ", ".join(repr(member.value) for member in cls)
        raise ValueError(f"`{name}` must be one of {choices}; got {value!r}.")


@dataclass(frozen=True)
class ShuffleSetting:
    """Validated parameters of the shuffled query: ``n_users`` users each apply ``randomizer`` once.

    ``ShuffleSetting(epsilon_local=..., n_users=..., k=..., n_x0=...)`` is k-RR(epsilon_local, k);
    :meth:`of` builds the setting of any randomizer (``epsilon_local`` and ``k`` are then read from it:
    ``k`` is None for a randomizer without a domain size, e.g. Laplace on [0, 1]).
    """

    #: typed as its value after __post_init__; given as None with ``randomizer``, it is read from it
    epsilon_local: float
    n_users: int
    k: int | None
    n_x0: int | None = None
    randomizer: Randomizer | None = None

    def __post_init__(self):
        if self.randomizer is None:  # k-RR from the loose parameters (validated in this order, as always)
            e0 = check_real(
                self.epsilon_local, "epsilon_local", low=0.0, low_open=True, high=math.inf, high_open=True
            )
            n_users = check_integer(self.n_users, "n_users", low=1, high=MAX_N_USERS)
            randomizer = KRR(epsilon_local=e0, k=self.k)  # validates k in [2, MAX_K]
        else:
            randomizer = self.randomizer
            if not isinstance(randomizer, Randomizer):
                raise ValueError(
                    f"`randomizer` must be a Randomizer (shuffledp.accounting.randomizers); got {randomizer!r}."
                )
            for name in ("epsilon_local", "k"):
                given, own = getattr(self, name), getattr(randomizer, name)
                if given is not None and given != own:
                    raise ValueError(
                        f"`{name}` must be the randomizer's ({own!r}) or omitted; got {given!r}."
                    )
            check_real(
                randomizer.epsilon_local,
                "epsilon_local",
                low=0.0,
                low_open=True,
                high=math.inf,
                high_open=True,
            )
            n_users = check_integer(self.n_users, "n_users", low=1, high=MAX_N_USERS)
        object.__setattr__(self, "randomizer", randomizer)
        object.__setattr__(self, "epsilon_local", randomizer.epsilon_local)
        object.__setattr__(self, "n_users", n_users)
        object.__setattr__(self, "k", randomizer.k)
        if self.n_x0 is not None:
            object.__setattr__(self, "n_x0", check_integer(self.n_x0, "n_x0", low=0, high=self.n_users - 1))

    @classmethod
    def of(cls, randomizer: Randomizer, *, n_users: int, n_x0: int | None = None) -> ShuffleSetting:
        """The setting where ``n_users`` users each apply ``randomizer``."""
        return cls(
            epsilon_local=None,  # type: ignore[arg-type]  # the field's type is its value after __post_init__
            n_users=n_users,
            k=None,
            n_x0=n_x0,
            randomizer=randomizer,
        )

    @property
    def required_k(self) -> int:
        """``k``, for code that needs a domain size (k-RR and the other categorical randomizers).

        Returns:
            The domain size ``k`` of the randomizer.

        Raises:
            ValueError: if the randomizer has no domain size (``k`` is None, e.g. Laplace on [0, 1]).
        """
        if self.k is None:
            raise ValueError(f"`randomizer` must have a domain size k here; got {self.randomizer!r}.")
        return self.k

    @property
    def required_n_x0(self) -> int:
        """``n_x0``, for code that reads a fixed dataset (the views and accountants that need it).

        Returns:
            The number ``n_x0`` of other users on x0.

        Raises:
            ValueError: if the setting has no ``n_x0``.
        """
        if self.n_x0 is None:
            raise ValueError(
                f"`n_x0` is required here and must be an integer in [0, {self.n_users - 1}]; got None."
            )
        return self.n_x0

    @property
    def krr(self) -> KrrParams:
        """Every k-RR quantity in logs (:class:`KrrParams`); only for a k-RR randomizer."""
        if not isinstance(self.randomizer, KRR):
            raise ValueError(
                f"`randomizer` must be k-RR for the k-RR parameters (setting.krr); got {self.randomizer!r}."
            )
        return self.randomizer.params
