"""Accountants for the shuffled k-RR histogram query, behind one registry.

``get_accountant(name, epsilon_local=..., n_users=..., k=..., n_x0=...)`` returns an
:class:`Accountant`; ``list_accountants()`` lists the names (``shuffle-dp accountants`` prints each
with its kind and scope). Modules are imported lazily, so one family's import cost is paid only when
it is used.

The package is built in layers, each importing only from those before it:

* :mod:`~shuffledp.accounting.params` -- the setting and the k-RR parameter object (KrrParams);
* ``numerics/`` -- binomial pieces, windows, Chernoff bounds, certified sums and searches;
* ``views/`` -- one module per adversary view, holding its exact delta and its binned PLD;
* ``accountants/`` -- thin classes stating name, kind, scope, reference, label and colour;
* tools -- :mod:`~shuffledp.accounting.bracket`, :mod:`~shuffledp.accounting.calibrate`,
  :mod:`~shuffledp.accounting.community`, :mod:`~shuffledp.accounting.composition` (``compose``,
  ``privacy_loss_distribution``: import them from there; the registry imports no tool).

Everything that lists accountants elsewhere (the CLI, the config schema's accountant enums, table
labels, the plotting palette, the composition layer) reads this registry: adding an accountant is one
module plus one line in ``_REGISTRY`` (or :func:`register`); see docs/adding-an-accountant.md.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from shuffledp.accounting.accountants.base import Accountant, BoundKind, ShuffleSetting

__all__ = [
    "Accountant",
    "BoundKind",
    "ShuffleSetting",
    "get_accountant",
    "accountant_class",
    "list_accountants",
    "register",
    "labels",
    "colours",
    "accountant_sets",
]

#: registry name -> "module:Class" (one module per family; see the module docstrings)
_REGISTRY: dict[str, str] = {
    "strong-adversary": "shuffledp.accounting.accountants.blanket:StrongAdversary",
    "weak-adversary": "shuffledp.accounting.accountants.weak_adversary:WeakAdversary",
    "worst-case-lower": "shuffledp.accounting.accountants.worst_case_lower:WorstCaseLower",
    "worst-case-upper": "shuffledp.accounting.accountants.worst_case_upper:WorstCaseUpper",
    "balle-blanket": "shuffledp.accounting.accountants.blanket:BalleBlanket",
    "balle-hoeffding-generic": "shuffledp.accounting.accountants.blanket:BalleHoeffdingGeneric",
    "balle-hoeffding-krr": "shuffledp.accounting.accountants.blanket:BalleHoeffdingKRR",
    "balle-bennett-generic": "shuffledp.accounting.accountants.blanket:BalleBennettGeneric",
    "balle-bennett-krr": "shuffledp.accounting.accountants.blanket:BalleBennettKRR",
    "balle-hoeffding-laplace": "shuffledp.accounting.accountants.blanket:BalleHoeffdingLaplace",
    "balle-bennett-laplace": "shuffledp.accounting.accountants.blanket:BalleBennettLaplace",
    "feldman-closed": "shuffledp.accounting.accountants.clones:FeldmanClosed",
    "feldman-numerical": "shuffledp.accounting.accountants.clones:FeldmanNumerical",
    "clones-krr": "shuffledp.accounting.accountants.clones:ClonesKRR",
    "clones-krr-2023": "shuffledp.accounting.accountants.clones:ClonesKRR2023",
    "erlingsson": "shuffledp.accounting.accountants.erlingsson:Erlingsson",
    "rate-erlingsson": "shuffledp.accounting.accountants.rates:RateErlingsson",
    "rate-balle": "shuffledp.accounting.accountants.rates:RateBalle",
    "rate-feldman": "shuffledp.accounting.accountants.rates:RateFeldman",
    "biswas-printed": "shuffledp.accounting.accountants.biswas:BiswasPrinted",
    "biswas-exact": "shuffledp.accounting.accountants.biswas:BiswasExact",
    "histogram-exact": "shuffledp.accounting.accountants.histogram:HistogramExact",
    "histogram-pair-lower": "shuffledp.accounting.accountants.histogram:HistogramPairLower",
    "girgis-rdp": "shuffledp.accounting.accountants.girgis:GirgisRDP",
    "girgis-rdp-simple": "shuffledp.accounting.accountants.girgis:GirgisRDPSimple",
    "clones-krr-rdp": "shuffledp.accounting.accountants.girgis:ClonesKRRRDP",
    "girgis-rdp-lower": "shuffledp.accounting.accountants.girgis:GirgisRDPLower",
}


def accountant_class(name: str) -> type[Accountant]:
    """Return the accountant class registered under ``name``."""
    if name not in _REGISTRY:
        raise ValueError(f"`accountant` must be one of {', '.join(sorted(_REGISTRY))}; got {name!r}.")
    module_name, class_name = _REGISTRY[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def get_accountant(name: str, **parameters) -> Accountant:
    """Instantiate the accountant ``name`` with keyword ``parameters``."""
    return accountant_class(name)(**parameters)


def list_accountants() -> list[str]:
    """Registered accountant names, sorted."""
    return sorted(_REGISTRY)


def register(name: str, target: str) -> None:
    """Register the accountant class ``target`` ("module:Class") under ``name`` (a plug-in accountant
    kept outside this package; the package's own are listed in ``_REGISTRY``)."""
    if name in _REGISTRY and _REGISTRY[name] != target:
        raise ValueError(f"`name` {name!r} is already registered to {_REGISTRY[name]!r}; got {target!r}.")
    module_name, _, class_name = target.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"`target` must be 'module:Class'; got {target!r}.")
    _REGISTRY[name] = target


class _Attributes(Mapping):
    """Live read-only mapping: every registered accountant (and its variants) -> one of its attributes."""

    def __init__(self, index: int):
        self._index = index  # 0: label, 1: colour

    def _entries(self) -> dict[str, str]:
        entries = {}
        for name in _REGISTRY:
            cls = accountant_class(name)
            entries[name] = (cls.label, cls.colour)[self._index]
            for variant, values in cls.variants.items():
                entries[variant] = values[self._index]
        return entries

    def __getitem__(self, name: str) -> str:
        return self._entries()[name]

    def __iter__(self):
        return iter(self._entries())

    def __len__(self) -> int:
        return len(self._entries())


def labels() -> Mapping[str, str]:
    """Table and legend label of every accountant (and variant), read from the classes (live)."""
    return _Attributes(0)


def colours() -> Mapping[str, str]:
    """Plot colour of every accountant (and variant), read from the classes (live)."""
    return _Attributes(1)


def accountant_sets() -> dict[str, list[str]]:
    """The named sets of accountant names that the config schema accepts (``x-accountants`` markers):

    * ``all``: every registered accountant and variant;
    * ``bounds``: every accountant whose delta is a value for the setting (not an asymptotic rate);
    * ``composable``: accountants the composition layer composes (they build a binned view) and those
      that compose in closed form (``accepts_compositions``, the RDP family);
    * ``dataset-free-upper``: upper bounds valid for every dataset (a bracket's upper end).
    """
    names = list_accountants()
    classes = {name: accountant_class(name) for name in names}
    variants = [v for cls in classes.values() for v in cls.variants]
    return {
        "all": sorted(names + variants),
        "bounds": sorted([n for n, c in classes.items() if c.kind is not BoundKind.RATE] + variants),
        "composable": sorted(n for n, c in classes.items()
                             if c.composable() or getattr(c, "accepts_compositions", False)),
        "dataset-free-upper": sorted(n for n, c in classes.items() if c.kind is BoundKind.UPPER and not c.needs_n_x0),
    }
