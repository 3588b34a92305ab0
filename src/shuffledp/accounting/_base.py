"""Common interface of every accountant for the shuffled k-RR histogram query.

Setting (paper notation): ``n_users`` users each apply k-RR with local parameter ``epsilon_local``
(epsilon_0) over a domain of size ``k``; the distinguished user u holds x0 in D(x0) and x1 in D(x1);
``n_x0`` of the *other* n - 1 users hold x0. Accountants that do not depend on the dataset ignore
``n_x0`` (their :attr:`Accountant.scope` says so).

Every accountant is labelled with what its delta is (:class:`BoundKind`) and for which datasets and
directions that label holds (:attr:`Accountant.scope`). Tests hold each label to account:
``lower <= exact <= upper`` on cases small enough to enumerate.
"""

from __future__ import annotations

import abc
import enum
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from shuffledp._validation import check_integer, check_probability, check_real, check_real_array

__all__ = ["BoundKind", "ShuffleSetting", "Accountant"]


class BoundKind(enum.Enum):
    """What an accountant's delta is, relative to the true (tight) delta it targets."""

    AS_PRINTED = "as printed"  # a formula exactly as printed in a paper, right or wrong
    EXACT = "exact"  # the tight delta for the stated dataset(s) and direction(s)
    UPPER = "upper bound"  # >= the tight delta for every dataset in its scope
    LOWER = "lower bound"  # <= the tight delta of the full histogram for datasets in its scope
    RATE = "asymptotic rate"  # an order-of-magnitude rate with constant 1; not a bound


@dataclass(frozen=True)
class ShuffleSetting:
    """Validated parameters of the shuffled k-RR histogram query."""

    epsilon_local: float
    n_users: int
    k: int
    n_x0: int | None = None

    def __post_init__(self):
        object.__setattr__(
            self, "epsilon_local", check_real(self.epsilon_local, "epsilon_local", low=0.0, low_open=True)
        )
        object.__setattr__(self, "n_users", check_integer(self.n_users, "n_users", low=1))
        object.__setattr__(self, "k", check_integer(self.k, "k", low=2))
        if self.n_x0 is not None:
            object.__setattr__(
                self, "n_x0", check_integer(self.n_x0, "n_x0", low=0, high=self.n_users - 1)
            )


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
    #: whether the result depends on ``n_x0`` (then ``n_x0`` is required)
    needs_n_x0: ClassVar[bool] = False

    def __init__(self, *, epsilon_local: float, n_users: int, k: int, n_x0: int | None = None):
        self.setting = ShuffleSetting(epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=n_x0)
        if self.needs_n_x0 and self.setting.n_x0 is None:
            raise ValueError(
                f"`n_x0` is required by accountant {self.name!r} and must be an integer in "
                f"[0, {self.setting.n_users - 1}]; got None."
            )

    @abc.abstractmethod
    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """Natural log of delta at each epsilon (array in, array out; -inf means delta = 0)."""

    def delta_for_epsilon(self, epsilons) -> np.ndarray:
        """Delta at each epsilon >= 0 (vectorised)."""
        return np.exp(self.log_delta_for_epsilon(epsilons))

    def _checked_epsilons(self, epsilons) -> np.ndarray:
        return check_real_array(epsilons, "epsilon", low=0.0)

    def epsilon_for_delta(self, delta: float, *, tolerance: float = 1e-10) -> float:
        """Smallest epsilon >= 0 with delta(epsilon) <= ``delta``, by bisection on the monotone curve.

        Returns 0.0 when delta(0) <= ``delta`` already. The result errs upwards (it is the upper end
        of the final bracket), so the returned epsilon always meets the target.
        """
        delta = check_probability(delta, "delta", allow_zero=True, allow_one=True)
        log_target = np.log(delta) if delta > 0 else -np.inf
        if self.log_delta_for_epsilon(0.0)[0] <= log_target:
            return 0.0
        low, high = 0.0, max(1.0, self.setting.epsilon_local)
        while self.log_delta_for_epsilon(high)[0] > log_target:
            low, high = high, 2.0 * high
            if high > 1e6:
                raise ValueError(f"no epsilon <= 1e6 reaches `delta` = {delta!r} for {self.name!r}.")
        while high - low > tolerance * max(1.0, high):
            middle = 0.5 * (low + high)
            if self.log_delta_for_epsilon(middle)[0] > log_target:
                low = middle
            else:
                high = middle
        return high

    def __repr__(self) -> str:
        s = self.setting
        return (
            f"{type(self).__name__}(epsilon_local={s.epsilon_local}, n_users={s.n_users}, k={s.k}, "
            f"n_x0={s.n_x0})"
        )
