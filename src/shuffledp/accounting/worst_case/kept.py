"""Values kept across epsilons up to a budget of doubles, the least recently used dropped first.

The searches over datasets keep the laws they build (they do not depend on epsilon) for the next epsilon
asked, within a memory budget counted in doubles (8 bytes each): the k = 3 block search its views' (P, Q),
the k >= 4 block search its chains and sure laws, the own-value-hit search its laws at each theta. Which
values are kept decides only what is computed again, never a value.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, ItemsView
from typing import Generic, TypeVar

__all__ = ["Kept"]

V = TypeVar("V")


class Kept(Generic[V]):
    """Values kept up to a budget of doubles, the least recently used dropped first; ``doubles(value)`` is a
    value's size. A value larger than the whole budget empties it and is not kept.

    Args:
        budget: the most doubles held at once.
        doubles: a value's size in doubles.
    """

    def __init__(self, budget: int, doubles: Callable[[V], int]):
        self._budget, self._doubles, self._held = budget, doubles, 0
        self._values: dict[Hashable, V] = {}

    def __len__(self) -> int:
        return len(self._values)

    def items(self) -> ItemsView[Hashable, V]:
        """The values kept, least recently used first."""
        return self._values.items()

    def get(self, key: Hashable) -> V | None:
        """The value kept at ``key`` (now the most recently used), or None."""
        value = self._values.pop(key, None)
        if value is not None:
            self._values[key] = value
        return value

    def put(self, key: Hashable, value: V) -> None:
        """Keep ``value`` at ``key`` (not kept yet), dropping the least recently used to make room."""
        size = self._doubles(value)
        while self._values and self._held + size > self._budget:
            self._held -= self._doubles(self._values.pop(next(iter(self._values))))
        if size <= self._budget:
            self._values[key] = value
            self._held += size
