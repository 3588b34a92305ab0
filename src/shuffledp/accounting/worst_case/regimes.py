"""The table of regimes: which search over datasets runs for a setting (k, range of n).

Each row is a :class:`Regime`: a range of k, a range of n, possibly a condition on (n, eps0), the
:class:`~shuffledp.accounting.worst_case.search.Search` that runs there, and whether its value is capped by
the weak adversary's (a certified bound on every dataset, smaller than some searches' value where they
stop early or on windowed laws). The rows are disjoint; where none applies, ``worst-case-upper`` is the weak
adversary's value. Why each range ends where it does: docs/decisions/worst-case.md.

=====  =================================  ====================================================  ===========
k      n                                  search                                                weak cap
=====  =================================  ====================================================  ===========
2      1 .. 10^4                          blanket-bit blocks (exact to 1e-9)                    no
2      10^4 + 1 .. 10^8                   pair-sum blocks (within ~1e-3)                        yes
3      1 .. 200                           exact: enumeration to 64, blocks above                no
3      201 .. 10^4 where 2 q (n-1) <= 48  blocks on windowed laws (within 1%)                   yes
4      1 .. 32                            blocks and own-value hits, the smaller                yes
4      33 .. 50                           blocks                                                yes
>= 5   1 .. 24                            blocks and own-value hits, the smaller                yes
>= 5   25 .. 32                           own-value hits                                        yes
=====  =================================  ====================================================  ===========
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.worst_case.k2.blocks import K2BlockSearch
from shuffledp.accounting.worst_case.k2.pair_search import K2PairSearch
from shuffledp.accounting.worst_case.k3.blocks import MAX_USERS_K3_BLOCKS, K3ExactSearch
from shuffledp.accounting.worst_case.k3.large import (
    MAX_USERS_K3_LARGE,
    MIN_USERS_K3_LARGE,
    K3WindowedSearch,
    searched,
)
from shuffledp.accounting.worst_case.k4.blocks import MAX_USERS_K4_BLOCKS, MAX_USERS_K4_ONLY
from shuffledp.accounting.worst_case.k4.own_hits import MAX_USERS_OWN_HITS
from shuffledp.accounting.worst_case.k4.search import K4BlocksAndOwnHits, K4BlocksOnly, OwnHitsOnly
from shuffledp.accounting.worst_case.search import Search, krr_numbers

__all__ = ["MAX_USERS_K2", "MAX_USERS_K2_LARGE", "REGIMES", "Regime", "regime_for"]

#: largest n for which k = 2 is searched with the blanket-bit block views (tight to 1e-9 relative)
MAX_USERS_K2 = 10_000
#: largest n for which k = 2 is searched with the pair-sum blocks (above: the weak adversary)
MAX_USERS_K2_LARGE = 100_000_000


@dataclass(frozen=True)
class Regime:
    """One row of the table: k in [k_min, k_max] (k_max None: no end), n in [n_min, n_max], and
    ``condition(n_users, epsilon_local)`` where given; ``search`` runs there, its value capped by the weak
    adversary's when ``capped_by_weak``."""

    k_min: int
    k_max: int | None
    n_min: int
    n_max: int
    search: type[Search]
    capped_by_weak: bool
    condition: Callable[[int, float], bool] | None = None

    def covers(self, setting: ShuffleSetting) -> bool:
        """Whether this row applies to ``setting``.

        Args:
            setting: the shuffle setting (n_users, k, epsilon_local).

        Returns:
            True when k and n are in range and the condition (if any) holds.
        """
        if setting.k is None or setting.epsilon_local is None:  # not k-RR: no search
            return False
        n, k, e0 = krr_numbers(setting)
        in_k = self.k_min <= k and (self.k_max is None or k <= self.k_max)
        in_n = self.n_min <= n <= self.n_max
        return in_k and in_n and (self.condition is None or self.condition(n, e0))


#: the table (module docstring); disjoint rows
REGIMES: tuple[Regime, ...] = (
    Regime(2, 2, 1, MAX_USERS_K2, K2BlockSearch, capped_by_weak=False),
    Regime(2, 2, MAX_USERS_K2 + 1, MAX_USERS_K2_LARGE, K2PairSearch, capped_by_weak=True),
    Regime(3, 3, 1, MAX_USERS_K3_BLOCKS, K3ExactSearch, capped_by_weak=False),
    Regime(
        3,
        3,
        MIN_USERS_K3_LARGE,
        MAX_USERS_K3_LARGE,
        K3WindowedSearch,
        capped_by_weak=True,
        condition=searched,
    ),
    Regime(4, 4, 1, MAX_USERS_OWN_HITS, K4BlocksAndOwnHits, capped_by_weak=True),
    Regime(4, 4, MAX_USERS_OWN_HITS + 1, MAX_USERS_K4_ONLY, K4BlocksOnly, capped_by_weak=True),
    Regime(5, None, 1, MAX_USERS_K4_BLOCKS, K4BlocksAndOwnHits, capped_by_weak=True),
    Regime(5, None, MAX_USERS_K4_BLOCKS + 1, MAX_USERS_OWN_HITS, OwnHitsOnly, capped_by_weak=True),
)


def regime_for(setting: ShuffleSetting) -> Regime | None:
    """The row of :data:`REGIMES` that covers ``setting``.

    Args:
        setting: the shuffle setting.

    Returns:
        That row, or None where no search runs (the weak adversary's value is the worst-case bound there).
    """
    found = [regime for regime in REGIMES if regime.covers(setting)]
    return found[0] if found else None
