"""Accountants for the shuffled k-RR histogram query, behind one registry.

``get_accountant(name, epsilon_local=..., n_users=..., k=..., n_x0=...)`` returns an
:class:`Accountant`; ``list_accountants()`` lists the names (``shuffle-dp accountants`` prints each
with its kind and scope). Accountant modules are imported on first use, by ordinary import statements
inside small loader functions (nothing is imported by a string), so one family's import cost is paid
only when it is used.

The package is built in layers, each importing only from those before it:

* :mod:`~shuffledp.accounting.params` -- the setting, the k-RR parameter object (KrrParams) and the
  :class:`Direction` of a divergence (REMOVE, ADD, BOTH);
* ``numerics/`` -- binomial pieces, windows, Chernoff bounds, certified sums and searches;
* ``views/`` -- one module per adversary view, holding its exact delta and its binned PLD;
* ``accountants/`` -- thin classes stating name, kind, scope, reference, label and colour;
* tools -- :mod:`~shuffledp.accounting.bracket`, :mod:`~shuffledp.accounting.calibrate`,
  :mod:`~shuffledp.accounting.community`, :mod:`~shuffledp.accounting.composition` (``compose``,
  ``privacy_loss_distribution``: import them from there; the registry imports no tool).

Everything that lists accountants elsewhere (the CLI, the config schema's accountant enums, table
labels, the plotting palette, the composition layer) reads this registry: adding an accountant is one
module plus one line in ``_REGISTRY`` (or :func:`register` with the class); see docs/adding-an-accountant.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from shuffledp.accounting.accountants.base import Accountant, BoundKind, ShuffleSetting
from shuffledp.accounting.params import Direction
from shuffledp.accounting.randomizers import Randomizer, accepted_names, check_accepted

__all__ = [
    "Accountant",
    "BoundKind",
    "Direction",
    "ShuffleSetting",
    "get_accountant",
    "accountant_class",
    "check_view_supports",
    "check_randomizer",
    "list_accountants",
    "register",
    "labels",
    "colours",
    "accountant_sets",
]


# One loader per accountant module: an ordinary import inside a function, so that importing this package
# stays cheap (the CLI and the workflow jobs load only the family they use) and every import is visible
# to the architecture test. Nothing is imported by a string.
def _blanket():
    from shuffledp.accounting.accountants import blanket

    return blanket


def _weak_adversary():
    from shuffledp.accounting.accountants import weak_adversary

    return weak_adversary


def _worst_case_lower():
    from shuffledp.accounting.accountants import worst_case_lower

    return worst_case_lower


def _worst_case_upper():
    from shuffledp.accounting.accountants import worst_case_upper

    return worst_case_upper


def _clones():
    from shuffledp.accounting.accountants import clones

    return clones


def _erlingsson():
    from shuffledp.accounting.accountants import erlingsson

    return erlingsson


def _rates():
    from shuffledp.accounting.accountants import rates

    return rates


def _biswas():
    from shuffledp.accounting.accountants import biswas

    return biswas


def _histogram():
    from shuffledp.accounting.accountants import histogram

    return histogram


def _types_lower():
    from shuffledp.accounting.accountants import types_lower

    return types_lower


def _girgis():
    from shuffledp.accounting.accountants import girgis

    return girgis


#: registry name -> a function returning the class (ordinary imports, run on first use: one family's
#: import cost is paid only when it is used; see the loaders above)
_REGISTRY: dict[str, Callable[[], type[Accountant]]] = {
    "strong-adversary": lambda: _blanket().StrongAdversary,
    "weak-adversary": lambda: _weak_adversary().WeakAdversary,
    "worst-case-lower": lambda: _worst_case_lower().WorstCaseLower,
    "worst-case-upper": lambda: _worst_case_upper().WorstCaseUpper,
    "types-lower": lambda: _types_lower().TypesLower,
    "balle-blanket": lambda: _blanket().BalleBlanket,
    "balle-hoeffding-generic": lambda: _blanket().BalleHoeffdingGeneric,
    "balle-hoeffding-krr": lambda: _blanket().BalleHoeffdingKRR,
    "balle-bennett-generic": lambda: _blanket().BalleBennettGeneric,
    "balle-hoeffding-own": lambda: _blanket().BalleHoeffdingOwn,
    "balle-bennett-own": lambda: _blanket().BalleBennettOwn,
    "balle-bennett-krr": lambda: _blanket().BalleBennettKRR,
    "balle-hoeffding-laplace": lambda: _blanket().BalleHoeffdingLaplace,
    "balle-bennett-laplace": lambda: _blanket().BalleBennettLaplace,
    "feldman-closed": lambda: _clones().FeldmanClosed,
    "feldman-numerical": lambda: _clones().FeldmanNumerical,
    "clones-krr": lambda: _clones().ClonesKRR,
    "clones-krr-2023": lambda: _clones().ClonesKRR2023,
    "erlingsson": lambda: _erlingsson().Erlingsson,
    "rate-erlingsson": lambda: _rates().RateErlingsson,
    "rate-balle": lambda: _rates().RateBalle,
    "rate-feldman": lambda: _rates().RateFeldman,
    "biswas-printed": lambda: _biswas().BiswasPrinted,
    "biswas-exact": lambda: _biswas().BiswasExact,
    "histogram-exact": lambda: _histogram().HistogramExact,
    "histogram-pair-lower": lambda: _histogram().HistogramPairLower,
    "girgis-rdp": lambda: _girgis().GirgisRDP,
    "girgis-rdp-simple": lambda: _girgis().GirgisRDPSimple,
    "clones-krr-rdp": lambda: _girgis().ClonesKRRRDP,
    "girgis-rdp-lower": lambda: _girgis().GirgisRDPLower,
    "erlingsson-rdp": lambda: _girgis().ErlingssonRDP,
}


def check_view_supports(accountant: type[Accountant]) -> type[Accountant]:
    """The accountant class itself if every randomizer class it accepts (``randomizers``) is one its view
    supports (``view_class.randomizers``, read with ``issubclass``); an accountant without a view passes.

    Args:
        accountant: an :class:`Accountant` subclass.

    Returns:
        ``accountant``, unchanged.

    Raises:
        ValueError: one line naming the accountant, its view, what the view supports and what it claims.
    """
    view: Any = accountant.view_class
    if view is not None and not all(issubclass(cls, view.randomizers) for cls in accountant.randomizers):
        raise ValueError(
            f"`randomizers` of accountant {accountant.name!r} must be supported by its view {view.name!r} "
            f"({accepted_names(view.randomizers)}); got {accepted_names(accountant.randomizers)}."
        )
    return accountant


def accountant_class(name: str) -> type[Accountant]:
    """The accountant class registered under ``name``, loaded on first use and checked
    (:func:`check_view_supports`).

    Args:
        name: a registry name, e.g. ``"weak-adversary"`` (:func:`list_accountants` lists them).

    Returns:
        The :class:`Accountant` subclass.

    Raises:
        ValueError: ``name`` is not registered (the message lists the registered names), or the class
            claims a randomizer its view does not support.
    """
    if name not in _REGISTRY:
        raise ValueError(f"`accountant` must be one of {', '.join(sorted(_REGISTRY))}; got {name!r}.")
    return check_view_supports(_REGISTRY[name]())


def check_randomizer(accountant: type[Accountant], randomizer) -> None:
    """Refuse, in one line naming the accountant, the randomizer and what is supported, a randomizer that the
    accountant class or its view does not support.

    Args:
        accountant: an :class:`Accountant` subclass.
        randomizer: a randomizer instance or class.

    Raises:
        ValueError: the refusal.
    """
    check_accepted(f"accountant {accountant.name!r}", accountant.randomizers, randomizer)
    if accountant.view_class is not None:
        view: Any = accountant.view_class
        check_accepted(
            f"accountant {accountant.name!r} (its view {view.name!r})", view.randomizers, randomizer
        )
    if isinstance(randomizer, Randomizer):
        accountant.check_randomizer_instance(randomizer)


def get_accountant(name: str, **parameters) -> Accountant:
    """An accountant for one setting: ``get_accountant("weak-adversary", epsilon_local=2.0, n_users=1000, k=10)``.

    Args:
        name: a registry name (:func:`list_accountants`).
        **parameters: the setting, by keyword: ``epsilon_local``, ``n_users``, ``k``, and where the
            accountant needs them ``n_x0``, ``direction`` or ``randomizer`` (see
            :class:`~shuffledp.accounting.accountants.base.Accountant`).

    Returns:
        The accountant, ready for ``delta_for_epsilon``, ``log_delta_for_epsilon`` and
        ``epsilon_for_delta``.

    Raises:
        ValueError: ``name`` is not registered, a ``randomizer`` it or its view does not support
            (:func:`check_randomizer`), or a parameter is out of range (one line naming it, its range and
            the value).
    """
    cls = accountant_class(name)
    if parameters.get("randomizer") is not None:
        check_randomizer(cls, parameters["randomizer"])
    return cls(**parameters)


def list_accountants() -> list[str]:
    """Every registered accountant name.

    Returns:
        The names, sorted.
    """
    return sorted(_REGISTRY)


def register(accountant: type[Accountant]) -> None:
    """Register a plug-in accountant kept outside this package under its own ``name``.

    The package's own accountants are listed in ``_REGISTRY``. Registering the same class again is a
    no-op; another class under a registered name is refused.

    Args:
        accountant: a subclass of :class:`Accountant` that sets its own class attribute ``name``.

    Raises:
        ValueError: ``accountant`` is not an :class:`Accountant` subclass, sets no ``name`` of its own, or
            its name is registered to another class.
    """
    if not (isinstance(accountant, type) and issubclass(accountant, Accountant)):
        raise ValueError(
            f"`accountant` must be a subclass of shuffledp.accounting.Accountant; got {accountant!r}."
        )
    name = vars(accountant).get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"`accountant` must set its own class attribute `name` (a non-empty string); "
            f"got {name!r} on {accountant.__qualname__}."
        )
    check_view_supports(accountant)
    if name in _REGISTRY and _REGISTRY[name]() is not accountant:
        raise ValueError(
            f"`name` {name!r} is already registered to {_REGISTRY[name]().__qualname__}; "
            f"got {accountant.__qualname__}."
        )
    _REGISTRY[name] = lambda: accountant


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
    """Table and legend label of every accountant (and variant), read from the classes.

    Returns:
        A live read-only mapping, name -> label (an accountant registered later appears in it).
    """
    return _Attributes(0)


def colours() -> Mapping[str, str]:
    """Plot colour of every accountant (and variant), read from the classes.

    Returns:
        A live read-only mapping, name -> hex colour (the same in every figure).
    """
    return _Attributes(1)


def accountant_sets() -> dict[str, list[str]]:
    """The named sets of accountant names that the config schema accepts (``x-accountants`` markers):

    * ``all``: every registered accountant and variant;
    * ``bounds``: every accountant whose delta is a value for the setting (not an asymptotic rate);
    * ``composable``: accountants the composition layer composes (they build a binned view) and those
      that compose in closed form (``accepts_compositions``, the RDP family);
    * ``dataset-free-upper``: upper bounds valid for every dataset (a bracket's upper end).

    Returns:
        Set name -> the sorted accountant names in it.
    """
    names = list_accountants()
    classes = {name: accountant_class(name) for name in names}
    variants = [v for cls in classes.values() for v in cls.variants]
    return {
        "all": sorted(names + variants),
        "bounds": sorted([n for n, c in classes.items() if c.kind is not BoundKind.RATE] + variants),
        "composable": sorted(
            n for n, c in classes.items() if c.composable() or getattr(c, "accepts_compositions", False)
        ),
        "dataset-free-upper": sorted(
            n for n, c in classes.items() if c.kind is BoundKind.UPPER and not c.needs_n_x0
        ),
    }
