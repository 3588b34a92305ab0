"""The import that moved in 0.2.0 still works for one version, with a DeprecationWarning naming the new one."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest

from shuffledp.accounting.composition import optimistic_privacy_loss_distribution, privacy_loss_distribution

OLD = "shuffledp.accounting.privacy_loss_distribution"
NEW = r"from shuffledp\.accounting\.composition import privacy_loss_distribution"


def _fresh_old_name():
    sys.modules.pop(OLD, None)
    import shuffledp.accounting

    if hasattr(shuffledp.accounting, "privacy_loss_distribution"):
        delattr(shuffledp.accounting, "privacy_loss_distribution")
    from shuffledp.accounting import privacy_loss_distribution as old  # the 0.1.0 form

    return old


def test_the_old_import_and_call_warn_and_give_the_same_pld():
    old = _fresh_old_name()
    with pytest.warns(DeprecationWarning, match=NEW):
        moved = old("weak-adversary", 2.0, 200, 4)
    new = privacy_loss_distribution("weak-adversary", 2.0, 200, 4)
    assert moved.get_epsilon_for_delta(1e-6) == new.get_epsilon_for_delta(1e-6)


def test_the_moved_names_can_be_read_from_the_old_module_with_a_warning():
    module = importlib.import_module(OLD)
    with pytest.warns(DeprecationWarning, match="optimistic_privacy_loss_distribution"):
        assert module.optimistic_privacy_loss_distribution is optimistic_privacy_loss_distribution
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        module.nothing  # noqa: B018


def test_the_new_import_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        privacy_loss_distribution("weak-adversary", 2.0, 200, 4)


def test_probe_without_the_shim_the_old_import_fails(monkeypatch):
    """The shim is what makes the old form work: with it hidden, the 0.1.0 import fails as it did."""
    sys.modules.pop(OLD, None)
    import shuffledp.accounting

    if hasattr(shuffledp.accounting, "privacy_loss_distribution"):
        delattr(shuffledp.accounting, "privacy_loss_distribution")
    monkeypatch.setitem(sys.modules, OLD, None)  # as if the module did not exist
    with pytest.raises(ImportError):
        from shuffledp.accounting import privacy_loss_distribution  # noqa: F401
