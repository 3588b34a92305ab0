"""The one ``log_delta`` contract of the views (:mod:`shuffledp.accounting.views.base`): every view class in
``views/`` has ``log_delta(epsilons, *, K=DEFAULT_K, upper=True)``, and no module there defines a function or a
non-view class method named ``log_delta`` (other shapes have other names). The worst-case families
(``views/worst``) are outside this check: they leave ``views/`` for ``accounting/worst_case/``.
Each check is probed with a planted violation."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import types

import numpy as np

import shuffledp.accounting.views as views_package
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.base import FamilyView, View

CONTRACT = inspect.signature(View.log_delta)


def _modules():
    for info in pkgutil.walk_packages(views_package.__path__, views_package.__name__ + "."):
        if ".worst" in info.name:
            continue
        yield importlib.import_module(info.name)


def _violations(modules) -> list[str]:
    """Every ``log_delta`` in ``modules`` that breaks the contract, named."""
    found = []
    for module in modules:
        for name, value in vars(module).items():
            if name == "log_delta" and inspect.isfunction(value):
                found.append(f"{module.__name__}.log_delta (a module function)")
            if not inspect.isclass(value) or value.__module__ != module.__name__:
                continue
            method = value.__dict__.get("log_delta")
            if method is None:
                continue
            if not issubclass(value, View | FamilyView):
                found.append(f"{module.__name__}.{name}.log_delta (not a view)")
            elif inspect.signature(method) != CONTRACT:
                found.append(f"{module.__name__}.{name}.log_delta{inspect.signature(method)}")
    return found


def test_every_log_delta_in_views_is_the_view_contract():
    modules = list(_modules())
    assert len(modules) > 20
    assert _violations(modules) == []


def test_a_planted_second_shape_is_caught():
    planted = types.ModuleType("planted_views")

    def log_delta(epsilons, setting):  # a module function: the shape the contract retires
        return np.zeros(1)

    class Law:  # not a view, with its own log_delta
        def log_delta(self, epsilons, direction):
            return np.zeros(1)

    class Narrow(View):  # a view whose override changes the signature
        name = "narrow"

        def outcomes(self, K=9.0):
            yield from ()

        def left_out(self, K=9.0):
            raise NotImplementedError

        def log_delta(self, epsilons, direction="forward"):
            return np.zeros(1)

    for value in (Law, Narrow):
        value.__module__ = planted.__name__
    planted.log_delta, planted.Law, planted.Narrow = log_delta, Law, Narrow
    found = _violations([planted])
    assert len(found) == 3, found


def test_the_contract_is_vectorised_and_at_most_zero():
    """Every concrete view in the folders checked answers many epsilons at once, one value each, <= 0."""
    from shuffledp.accounting.views.clones.pair import GenericClonesView, KrrClonesView
    from shuffledp.accounting.views.clones.stronger_2023 import Clones2023View
    from shuffledp.accounting.views.histogram.view import HistogramView, PairCountsView
    from shuffledp.accounting.views.own_report import OwnReportView
    from shuffledp.accounting.views.single_bin.view import SingleBinView
    from shuffledp.accounting.views.strong.view import StrongView
    from shuffledp.accounting.views.weak.view import WeakView

    setting = ShuffleSetting(epsilon_local=1.0, n_users=40, k=3, n_x0=13)
    eps = np.array([0.0, 0.1, 0.5, 1.0, np.inf])
    for cls in (
        GenericClonesView,
        KrrClonesView,
        Clones2023View,
        HistogramView,
        PairCountsView,
        OwnReportView,
        SingleBinView,
        StrongView,
        WeakView,
    ):
        values = cls(setting).log_delta(eps)
        assert values.shape == eps.shape and np.all(values <= 0.0), cls
        assert cls(setting).log_delta(0.1).shape == (1,), cls
