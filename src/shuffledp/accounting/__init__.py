"""Accountants for the shuffled k-RR histogram query, behind one registry.

``get_accountant(name, epsilon_local=..., n_users=..., k=..., n_x0=...)`` returns an
:class:`Accountant`; ``list_accountants()`` lists the names with their labels. Modules are imported
lazily, so one family's import cost is paid only when it is used.

Registered names (``shuffle-dp accountants`` prints labels and scopes):

* ``biswas-printed`` -- eq. (6) with Theorem IV.1's v_s as printed (as printed; erroneous);
* ``biswas-exact`` -- exact delta of the x0-bin count for one dataset and direction;
* ``histogram-exact`` -- exact delta of the full k-bin histogram for one stated dataset;
* ``histogram-pair-lower`` -- lower bound on the full histogram's delta for any spread of the rest;
* ``weak-adversary`` -- Koskela et al.'s weak adversary: the tightest valid (upper) bound for every dataset;
* ``worst-case-lower`` -- lower bound on the worst case over datasets (brackets ``weak-adversary``);
* ``worst-case-upper`` -- certified upper bound on the worst case: the max over datasets for k = 2, else weak;
* ``girgis-rdp`` / ``girgis-rdp-simple`` -- Girgis et al.'s RDP upper bounds (Thm 3.1 / 3.3) converted to
  (epsilon, delta), with ``compositions`` and ``subsample`` keywords.

``compose(name, epsilon_local=..., n_users=..., k=..., compositions=T, subsample=q)`` (or ``rounds=[...]``)
composes the accountants whose view is an explicit pair of distributions (strong-adversary,
weak-adversary, feldman-numerical, clones-krr, worst-case-lower) through dp_accounting's PLDs; see
:mod:`shuffledp.accounting.composition`.
"""

from __future__ import annotations

import importlib

from shuffledp.accounting.accountants.base import Accountant, BoundKind, ShuffleSetting

__all__ = [
    "Accountant",
    "BoundKind",
    "ShuffleSetting",
    "get_accountant",
    "accountant_class",
    "list_accountants",
    "compose",
]

#: registry name -> "module:Class" (one module per family; see the module docstrings)
_REGISTRY: dict[str, str] = {
    "strong-adversary": "shuffledp.accounting.accountants.blanket:StrongAdversary",
    "weak-adversary": "shuffledp.accounting.accountants.weak_adversary:WeakAdversary",
    "worst-case-lower": "shuffledp.accounting.accountants.worst_case:WorstCaseLower",
    "worst-case-upper": "shuffledp.accounting.accountants.binary_worst_case:WorstCaseUpper",
    "balle-blanket": "shuffledp.accounting.accountants.blanket:BalleBlanket",
    "balle-hoeffding-generic": "shuffledp.accounting.accountants.blanket:BalleHoeffdingGeneric",
    "balle-hoeffding-krr": "shuffledp.accounting.accountants.blanket:BalleHoeffdingKRR",
    "balle-bennett-generic": "shuffledp.accounting.accountants.blanket:BalleBennettGeneric",
    "balle-bennett-krr": "shuffledp.accounting.accountants.blanket:BalleBennettKRR",
    "feldman-closed": "shuffledp.accounting.accountants.clones:FeldmanClosed",
    "feldman-numerical": "shuffledp.accounting.accountants.clones:FeldmanNumerical",
    "clones-krr": "shuffledp.accounting.accountants.clones:ClonesKRR",
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


def compose(name: str, **parameters):
    """Composed (and optionally subsampled) accountant; see :func:`shuffledp.accounting.composition.compose`."""
    from shuffledp.accounting.composition import compose as _compose

    return _compose(name, **parameters)
