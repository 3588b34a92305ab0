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

from shuffledp.accounting.accountants.base import Accountant, BoundKind, ShuffleSetting
from shuffledp.accounting.params import Direction

__all__ = [
    "Accountant",
    "BoundKind",
    "Direction",
    "ShuffleSetting",
    "get_accountant",
    "accountant_class",
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
    "balle-blanket": lambda: _blanket().BalleBlanket,
    "balle-hoeffding-generic": lambda: _blanket().BalleHoeffdingGeneric,
    "balle-hoeffding-krr": lambda: _blanket().BalleHoeffdingKRR,
    "balle-bennett-generic": lambda: _blanket().BalleBennettGeneric,
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


def accountant_class(name: str) -> type[Accountant]:
    """Return the accountant class registered under ``name``."""
    if name not in _REGISTRY:
        raise ValueError(f"`accountant` must be one of {', '.join(sorted(_REGISTRY))}; got {name!r}.")
    return _REGISTRY[name]()


def get_accountant(name: str, **parameters) -> Accountant:
    """Instantiate the accountant ``name`` with keyword ``parameters``."""
    return accountant_class(name)(**parameters)


def list_accountants() -> list[str]:
    """Registered accountant names, sorted."""
    return sorted(_REGISTRY)


def register(accountant: type[Accountant]) -> None:
    """Register the accountant class ``accountant`` under its ``name`` (a plug-in accountant kept outside
    this package; the package's own are listed in ``_REGISTRY``). Registering the same class again is a
    no-op; another class under a registered name is refused."""
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
        "composable": sorted(
            n for n, c in classes.items() if c.composable() or getattr(c, "accepts_compositions", False)
        ),
        "dataset-free-upper": sorted(
            n for n, c in classes.items() if c.kind is BoundKind.UPPER and not c.needs_n_x0
        ),
    }
