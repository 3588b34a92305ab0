"""Deprecated name: ``privacy_loss_distribution`` lives in :mod:`shuffledp.accounting.composition`.

Up to version 0.1.0 the registry module exported it, and user code wrote::

    from shuffledp.accounting import privacy_loss_distribution
    pld = privacy_loss_distribution("weak-adversary", 2.0, 10_000, 4)

That import now finds this module, which is callable for one more version: calling it (or reading one of
the moved names from it) warns with a :class:`DeprecationWarning` naming the new import and does what the
function in :mod:`shuffledp.accounting.composition` does. It will be removed in the next version.
"""

from __future__ import annotations

import sys
import types
import warnings

from shuffledp.accounting import composition as _composition

#: the names that moved to shuffledp.accounting.composition and can still be read here, with a warning
MOVED = ("privacy_loss_distribution", "optimistic_privacy_loss_distribution", "compose")

_MESSAGE = (
    "`shuffledp.accounting.privacy_loss_distribution` moved: import it with "
    "`from shuffledp.accounting.composition import {name}`; the old name will be removed in the next version."
)


def _warn(name: str) -> None:
    warnings.warn(_MESSAGE.format(name=name), DeprecationWarning, stacklevel=3)


class _DeprecatedModule(types.ModuleType):
    """This module, made callable: calling it calls :func:`shuffledp.accounting.composition.privacy_loss_distribution`."""

    def __call__(self, *args, **kwargs):
        _warn("privacy_loss_distribution")
        return _composition.privacy_loss_distribution(*args, **kwargs)

    def __getattr__(self, name: str):
        if name in MOVED:
            _warn(name)
            return getattr(_composition, name)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


sys.modules[__name__].__class__ = _DeprecatedModule
