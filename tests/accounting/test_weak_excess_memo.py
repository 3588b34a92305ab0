"""The weak adversary's widening loop reads back the expected excesses an earlier window of the same
epsilon computed (views/weak_rows.py, ExcessMemo): the values must be those computed afresh, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.views.weak import rows as weak_rows

CASES = [
    (10**6, 10, 1.0, [0.02, 0.021]),
    (10**4, 4, 2.0, [0.05, 0.3, 1.0]),
    (300, 3, 0.5, [0.01, 0.1, 0.3]),
    (10**5, 100, 4.0, [0.05, 0.5, 2.0]),
]


class _Forgetful(weak_rows.ExcessMemo):
    def find(self, eps, keys):
        return np.zeros(keys.shape, dtype=bool), np.empty(keys.shape)


def _values(n, k, e0, eps, memo):
    accountant = get_accountant("weak-adversary", n_users=n, k=k, epsilon_local=e0)
    accountant.view().excess_memo = memo  # before any rows are built: every K's rows share it
    return [accountant.view().log_delta_parts(e) for e in eps]


def _widening(memo):
    """What the widening loop does when its first window is too narrow: n = 10^6, k = 10, eps0 = 1,
    eps = 0.02 at K = 6 (remainder not negligible), then at K = 8 (the rows of both centred on the
    tilted law of eps, sharing the view's memo)."""
    view = get_accountant("weak-adversary", n_users=10**6, k=10, epsilon_local=1.0).view()
    view.excess_memo = memo
    first = view.rows(6.0, (0.02,)).sums.log_parts(0.02, view.chernoff)
    assert first[1] - first[0] > weak_rows.LOG_NEGLIGIBLE  # the loop would widen
    return view.rows(8.0, (0.02,)).sums.log_parts(0.02, view.chernoff)


def test_the_view_hands_one_memo_to_the_rows_of_every_window():
    view = get_accountant("weak-adversary", n_users=10**4, k=4, epsilon_local=2.0).view()
    assert view.rows(8.0).memo is view.rows(8.5).memo is view.excess_memo


@pytest.mark.parametrize("n,k,e0,eps", CASES)
def test_memo_gives_the_bits_of_a_fresh_evaluation(n, k, e0, eps):
    with_memo = _values(n, k, e0, eps, weak_rows.ExcessMemo())
    assert with_memo == _values(n, k, e0, eps, _Forgetful())


class _Neighbour(weak_rows.ExcessMemo):
    """A faulty memo: the value of the neighbouring pair (a is off by one)."""

    def find(self, eps, keys):
        hit, values = super().find(eps, keys)
        return hit, np.roll(values, 1)


def test_memo_is_used_and_a_faulty_memo_is_caught():
    """When the loop widens (K = 6, then 8, :func:`_widening`; the windows centred on the tilted
    law certify n = 10^6, eps = 0.02 at the first window, K = 8, so the narrower first window is set here)
    it reads back most pairs; a memo that returned a neighbour's values would give other values (the
    comparison above can fail), and the values read back are those computed afresh, to the bit."""
    memo = weak_rows.ExcessMemo()
    found = []
    find = memo.find

    def counting(eps, keys):
        hit, values = find(eps, keys)
        found.append(int(hit.sum()))
        return hit, values

    memo.find = counting
    fresh = _widening(memo)
    assert sum(found) > 5 * 10**4
    assert _widening(_Neighbour()) != fresh
    assert _widening(_Forgetful()) == fresh
