"""A view added from a temporary module, no other file edited, gets delta, epsilon, the PLD, the Renyi
moments and the composed tail from the generic layer, each checked against a closed form or brute
force on the toy's three outcomes.

The toy pair: P = (0.6, 0.3, 0.1), Q = (0.2, 0.3, 0.5), not symmetric. The "windowed" toy yields only the
first two outcomes and reports the third as left out (certified: exactly its masses), with loss bounds
log 3 (REMOVE) and log 5 (ADD), so the generic upper values must lie above the exact ones and the lower
values below.
"""

from __future__ import annotations

import importlib
import itertools
import math
import sys
import textwrap

import numpy as np
import pytest

from shuffledp.accounting.numerics.composed_tail import log_delta_bound
from shuffledp.accounting.numerics.pld_epsilon import delta_for_epsilon as pld_delta
from shuffledp.accounting.params import ShuffleSetting

P = np.array([0.6, 0.3, 0.1])
Q = np.array([0.2, 0.3, 0.5])

TOY_MODULE = """
import math
import numpy as np
from shuffledp.accounting.views.base import LeftOut, OutcomeChunk, View

P = np.array([0.6, 0.3, 0.1])
Q = np.array([0.2, 0.3, 0.5])


class ToyView(View):
    name = "toy"

    def outcomes(self, K=9.0):
        yield OutcomeChunk(np.log(P[:1]), np.log(Q[:1]))
        yield OutcomeChunk(np.log(P[1:]), np.log(Q[1:]))

    def left_out(self, K=9.0):
        return LeftOut()


class WindowedToyView(View):
    name = "windowed-toy"

    def outcomes(self, K=9.0):
        yield OutcomeChunk(np.log(P[:2]), np.log(Q[:2]))

    def left_out(self, K=9.0):
        return LeftOut(math.log(0.1), math.log(0.5))

    def loss_bounds(self):
        return (math.log(3.0), math.log(5.0))
"""


@pytest.fixture()
def toy(tmp_path, monkeypatch):
    (tmp_path / "toy_view_module.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("toy_view_module")
    yield module
    sys.modules.pop("toy_view_module", None)


SETTING = ShuffleSetting(epsilon_local=1.0, n_users=10, k=2)
EPS = np.array([0.0, 0.1, 0.5, 1.0, math.log(3.0), 1.5, math.log(5.0), 2.0])


def _exact_delta(eps, p=P, q=Q):
    """max over both directions of sum (p - e^eps q)_+."""
    return np.array(
        [max(np.sum(np.maximum(a - math.exp(e) * b, 0.0)) for a, b in ((p, q), (q, p))) for e in eps]
    )


def test_delta_and_epsilon(toy):
    view = toy.ToyView(SETTING)
    np.testing.assert_allclose(np.exp(view.log_delta(EPS)), _exact_delta(EPS), rtol=1e-12, atol=1e-15)
    for delta in (0.3, 0.1, 1e-2):
        eps = view.epsilon_for_delta(delta)
        assert _exact_delta([eps])[0] <= delta * (1 + 1e-12)
        assert _exact_delta([eps * (1 - 1e-6) - 1e-9])[0] > delta
    windowed = toy.WindowedToyView(SETTING)
    upper, lower = np.exp(windowed.log_delta(EPS)), np.exp(windowed.log_delta(EPS, upper=False))
    assert np.all(lower <= _exact_delta(EPS) + 1e-15) and np.all(_exact_delta(EPS) <= upper + 1e-15)
    assert upper[0] > lower[0]  # the left-out mass is counted on the upper side only


def test_pld_pessimistic_and_optimistic_both_directions(toy):
    interval = 1e-3
    eps = np.linspace(0.0, 2.0, 21)
    exact = _exact_delta(eps)
    shifted = _exact_delta(eps - interval)  # losses rounded up by < one interval (negative eps: the same sum)
    view = toy.ToyView(SETTING)
    pessimistic = view.pld(interval=interval, pessimistic=True)
    optimistic = view.pld(interval=interval, pessimistic=False)
    assert pessimistic.add is not None  # not symmetric: both directions
    up, down = pld_delta(pessimistic, eps), pld_delta(optimistic, eps)
    assert np.all(up >= exact - 1e-15) and np.all(up <= shifted + 1e-15)
    assert np.all(down <= exact + 1e-15)
    exported = pessimistic.to_dp_accounting()  # dp_accounting's public constructor
    np.testing.assert_allclose(exported.get_delta_for_epsilon(eps), up, rtol=1e-12, atol=1e-16)
    windowed = toy.WindowedToyView(SETTING).pld(interval=interval, pessimistic=True)
    assert np.all(pld_delta(windowed, eps) >= exact - 1e-15)  # the left-out mass went to infinity


def test_renyi_moments(toy):
    orders = np.array([1.5, 2.0, 4.0, 10.0])
    exact = np.array(
        [max(math.log(np.sum(a**lam * b ** (1 - lam))) for a, b in ((P, Q), (Q, P))) for lam in orders]
    )
    np.testing.assert_allclose(toy.ToyView(SETTING).log_moments(orders), exact, rtol=1e-12)
    certified = toy.WindowedToyView(SETTING).log_moments(orders)
    assert np.all(certified >= exact - 1e-12)


def test_refuses_moments_it_cannot_certify(toy):
    class NoBound(toy.WindowedToyView):
        def loss_bounds(self):
            return None

    with pytest.raises(ValueError, match=r"`orders` cannot be certified for view 'windowed-toy'"):
        NoBound(SETTING).log_moments([2.0])


def test_composed_tail_bounds_the_brute_force_composition(toy):
    """T = 3 rounds: the Chernoff bound from the view's tail rounds is above the exact composed delta
    (the 27 outcomes of the product pair enumerated), in each direction."""
    T = 3
    view = toy.ToyView(SETTING)
    remove, add = view.tail_rounds(interval=1e-4, count=T)
    for tail, (a, b) in ((remove, (P, Q)), (add, (Q, P))):
        for eps in (0.0, 0.5, 1.0, 2.0, 3.0):
            product = [
                (np.prod([a[i] for i in o]), np.prod([b[i] for i in o]))
                for o in itertools.product(range(3), repeat=T)
            ]
            exact = sum(max(p - math.exp(eps) * q, 0.0) for p, q in product)
            bound = math.exp(log_delta_bound([tail], eps))
            assert bound >= exact * (1 - 1e-12)
            assert bound <= 1.0
