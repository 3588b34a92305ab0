"""The warnings policy of pyproject.toml (docs/decisions/code.md): a warning attributed to our own code --
a module of the library, or a workflow script run in-process as ``__main__`` -- fails the test that
raised it; a third party's warning stays a warning."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest


def _warn(module: str) -> None:
    # warn_explicit attributes the warning to ``module`` as warnings.warn does to the calling frame
    warnings.warn_explicit("probe", UserWarning, "probe.py", 1, module=module, registry={})


@pytest.mark.parametrize("module", ["shuffledp", "shuffledp.accounting.views.base", "__main__"])
def test_a_warning_from_our_code_is_an_error(module):
    with pytest.raises(UserWarning, match="probe"):
        _warn(module)


@pytest.mark.parametrize("module", ["pandas.io.parsers.readers", "numpy", "shuffledp_other", "scipy"])
def test_a_third_party_warning_stays_a_warning(module):
    with warnings.catch_warnings(record=True) as seen:
        _warn(module)
    assert [str(w.message) for w in seen] == ["probe"]


def test_a_workflow_script_that_warns_fails_the_tiny_run():
    """The tiny workflow run (conftest) gives Snakemake's script processes SCRIPT_WARNINGS: a script's own
    warning (attributed to __main__) exits non-zero there, a library's warning inside it does not."""
    # tests/conftest.py by its path: under xdist another conftest module (tests/plotting/) may be `conftest`
    spec = importlib.util.spec_from_file_location("tests_conftest", Path(__file__).with_name("conftest.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _script_warnings_env = module._script_warnings_env

    def run(code: str) -> int:
        return subprocess.run([sys.executable, "-c", code], env=_script_warnings_env(), timeout=60).returncode

    assert run("import warnings; warnings.warn('probe')") != 0
    assert (
        run("import warnings; warnings.warn_explicit('probe', UserWarning, 'x.py', 1, module='pandas')") == 0
    )
