"""The searches' store of laws kept across epsilons (shuffledp.accounting.worst_case.kept): a budget of doubles,
the least recently used dropped first, a value over the whole budget not kept."""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.worst_case.kept import Kept


def _store(budget: int) -> Kept[np.ndarray]:
    return Kept(budget, lambda value: value.size)


def test_the_least_recently_used_goes_first():
    store = _store(10)
    for key in "abc":
        store.put(key, np.zeros(3))
    assert store.get("a") is not None  # "a" is now the most recently used: "b" goes first
    store.put("d", np.zeros(3))
    assert [key for key, _ in store.items()] == ["c", "a", "d"]
    assert store.get("b") is None and len(store) == 3


def test_room_is_made_for_a_value_and_the_budget_holds():
    store = _store(10)
    for key in "abc":
        store.put(key, np.zeros(3))
    store.put("big", np.zeros(7))  # 9 + 7 > 10: "a" and "b" are dropped, 3 + 7 = 10 is kept
    assert [key for key, _ in store.items()] == ["c", "big"]
    assert sum(value.size for _, value in store.items()) <= 10


def test_a_value_over_the_whole_budget_empties_it_and_is_not_kept():
    store = _store(10)
    store.put("a", np.zeros(3))
    store.put("huge", np.zeros(11))
    assert len(store) == 0 and store.get("huge") is None
    store.put("b", np.zeros(10))  # exactly the budget: kept
    assert store.get("b") is not None
