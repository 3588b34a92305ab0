"""What a workflow job's imports cost: the library modules most jobs import leave the heavy optional packages
to the functions that use them (docs/decisions/workflow.md, "Run time").

Each job is a fresh interpreter, so a package imported at module level is paid by every job that imports the
module, used or not: scipy.optimize (~0.15 CPU s), dp_accounting (with scipy.signal and scipy.stats, ~0.7)
and matplotlib (~0.5). Each case imports modules in a fresh interpreter, as a job does, and lists which of
those packages got loaded.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy.optimize", "scipy.stats", "dp_accounting", "matplotlib", "diffprivlib", "sklearn")


def _heavy_loaded(statements: str) -> list[str]:
    """The HEAVY packages a fresh interpreter has loaded after running ``statements``."""
    probe = (
        f"{statements}\nimport json, sys\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1])


# (what a job imports or does first, the heavy packages it may load); one interpreter per case, so the
# modules that may load none share one
CASES = [
    # every figure job: the plotting style reads every accountant's colour, so every accountant module loads
    ("import matplotlib; matplotlib.use('Agg'); import shuffledp.plotting.style", ["matplotlib"]),
    (
        "from shuffledp import accounting; dict(accounting.labels())\n"
        "import shuffledp.accounting.composition, shuffledp.accounting.numerics.pld_epsilon\n"
        "from shuffledp.experiments.koskela import curve_verdicts, known_differences\n"  # koskela_verdicts
        "import shuffledp.experiments.balle, shuffledp.tables, shuffledp.experiments.utility\n"
        # Koskela et al.'s Figure 4 job: the normal distribution from scipy.special, not scipy.stats (~0.5 s)
        "import shuffledp.experiments.shuffled_gaussian",
        [],
    ),
]


@pytest.mark.parametrize(("statements", "allowed"), CASES)
def test_heavy_packages_wait_for_their_users(statements, allowed):
    assert set(_heavy_loaded(statements)) <= set(allowed)


def test_a_function_that_needs_dp_accounting_still_imports_it():
    """A lazy import is still made where it is needed: the lower bound's dense PMF is dp_accounting's."""
    loaded = _heavy_loaded(
        "import numpy as np\n"
        "from shuffledp.experiments.koskela import _dense_optimistic\n"
        "pmf = _dense_optimistic(np.array([0, 1]), np.array([0.5, 0.5]), 0.1)\n"
        "assert type(pmf).__module__ == 'dp_accounting.pld.pld_pmf'\n"
    )
    assert "dp_accounting" in loaded


def test_probe_a_module_level_import_is_seen():
    """The check sees a heavy package that a module imports at its top (rounds_guess imports scipy.optimize)."""
    assert "scipy.optimize" in _heavy_loaded("import shuffledp.experiments.rounds_guess")
