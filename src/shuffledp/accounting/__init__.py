"""Accountants for the shuffled k-RR histogram query, behind one registry.

``get_accountant(name, epsilon_local=..., n_users=..., k=..., n_x0=...)`` returns an
:class:`Accountant`; ``list_accountants()`` lists the names with their labels. Modules are imported
lazily, so one family's import cost is paid only when it is used.
"""

from __future__ import annotations

import importlib

from shuffledp.accounting._base import Accountant, BoundKind, ShuffleSetting

__all__ = ["Accountant", "BoundKind", "ShuffleSetting", "get_accountant", "accountant_class", "list_accountants"]

#: registry name -> "module:Class" (one module per family; see the module docstrings)
_REGISTRY: dict[str, str] = {
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
