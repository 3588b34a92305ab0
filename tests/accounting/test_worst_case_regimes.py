"""The table of regimes (worst_case/regimes.py) chooses the search the six flags of ``worst-case-upper`` chose
before the table, on a grid of (k, n, eps0) with every boundary of every range; every search answers the one
interface (certified upper >= its lower value, a status), and the accountant returns the table's search."""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.worst_case.k2.blocks import K2BlockSearch
from shuffledp.accounting.worst_case.k2.pair_search import K2PairSearch
from shuffledp.accounting.worst_case.k3.blocks import K3ExactSearch
from shuffledp.accounting.worst_case.k3.large import K3WindowedSearch
from shuffledp.accounting.worst_case.k4.search import K4BlocksAndOwnHits, K4BlocksOnly, OwnHitsOnly
from shuffledp.accounting.worst_case.regimes import REGIMES, regime_for
from shuffledp.accounting.worst_case.search import Search, Status


def _flags(n: int, k: int, e0: float) -> dict[str, bool]:
    """The six flags as ``worst-case-upper`` set them before the table (transcribed, constants written out)."""
    q = math.exp(KrrParams.of(e0, 3).log_q)
    return {
        "binary": k == 2 and n <= 10_000,
        "large": k == 2 and 10_000 < n <= 100_000_000,
        "k3": k == 3 and n <= 200,
        "k3_large": k == 3 and 201 <= n <= 10_000 and 2.0 * q * (n - 1) <= 48.0,
        "own": k >= 4 and n <= 32,
        "k4": k >= 4 and n <= (50 if k == 4 else 24),
    }


def _expected(flags: dict[str, bool]):
    """The search those flags ran (None: weak-adversary's value), in the order they were tested."""
    if flags["k3"]:
        return K3ExactSearch
    if flags["k3_large"]:
        return K3WindowedSearch
    if flags["own"] or flags["k4"]:
        return {(True, True): K4BlocksAndOwnHits, (False, True): K4BlocksOnly, (True, False): OwnHitsOnly}[
            (flags["own"], flags["k4"])
        ]
    if flags["large"]:
        return K2PairSearch
    if flags["binary"]:
        return K2BlockSearch
    return None


USERS = sorted(
    {1, 2, 3, 23, 24, 25, 31, 32, 33, 49, 50, 51, 64, 65, 199, 200, 201, 202, 1000, 5000, 9999, 10_000}
    | {10_001, 10**6, 99_999_999, 100_000_000, 100_000_001, 10**9}
)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6, 10, 100])
@pytest.mark.parametrize("e0", [0.1, 0.5, 1.0, 2.0, 3.0, 3.5, 4.0, 5.0, 8.0, 20.0])
def test_the_table_chooses_what_the_flags_chose(k, e0):
    for n in USERS:
        regime = regime_for(ShuffleSetting(epsilon_local=e0, n_users=n, k=k))
        assert (regime.search if regime else None) is _expected(_flags(n, k, e0)), (k, n, e0)


def test_the_k3_windowed_boundary_in_eps0_is_found_exactly():
    """Around 2 q (n - 1) = 48 (the one condition on eps0) the table and the flags agree on both sides."""
    for n in (300, 1000, 5000, 10_000):
        for e0 in np.linspace(1.5, 7.0, 400):
            regime = regime_for(ShuffleSetting(epsilon_local=float(e0), n_users=n, k=3))
            assert (regime.search if regime else None) is _expected(_flags(n, 3, float(e0))), (n, e0)


def test_the_rows_are_disjoint():
    for k in (2, 3, 4, 5, 10):
        for n in USERS:
            for e0 in (0.5, 4.0):
                setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
                assert sum(r.covers(setting) for r in REGIMES) <= 1, (k, n, e0)


def test_a_wrong_row_is_caught(monkeypatch):
    """The comparison above can fail: a table whose k = 4 block range ends at 40 disagrees at n = 49."""
    from dataclasses import replace

    from shuffledp.accounting.worst_case import regimes

    table = tuple(replace(r, n_max=40) if r.search is K4BlocksOnly else r for r in REGIMES)
    monkeypatch.setattr(regimes, "REGIMES", table)
    regime = regimes.regime_for(ShuffleSetting(epsilon_local=1.0, n_users=49, k=4))
    assert (regime.search if regime else None) is not _expected(_flags(49, 4, 1.0))


@pytest.mark.parametrize(
    "k,n,e0",
    [
        (2, 30, 1.0),
        (2, 20_000, 0.5),
        (3, 12, 1.0),
        (3, 1000, 4.0),
        (4, 8, 1.0),
        (4, 34, 2.0),
        (5, 10, 1.0),
        (5, 26, 2.0),
    ],
)
def test_every_search_answers_the_interface(k, n, e0):
    setting = ShuffleSetting(epsilon_local=e0, n_users=n, k=k)
    regime = regime_for(setting)
    search = regime.search(setting)
    assert isinstance(search, Search)
    accountant = get_accountant("worst-case-upper", n_users=n, k=k, epsilon_local=e0)
    for eps in (0.05 * e0, 0.3 * e0):
        result = search.result(eps)
        assert isinstance(result.status, Status)
        assert result.log_lower <= result.log_upper <= 1e-12
        assert result.dataset is None or all(isinstance(c, int) for c in result.dataset)
        value = min(result.log_upper, 0.0)
        returned = accountant.log_delta_parts(eps)[1]  # the accountant's one certified number
        if regime.capped_by_weak:  # the smaller of the search's value and weak-adversary's
            assert returned <= value
        else:
            assert returned == value
