"""The wheel works outside the checkout: built from the sources, installed (not editable)
into a fresh virtual environment, it runs ``shuffle-dp`` and reads its reference data.

Offline (no package index), the build runs without isolation and needs the build backend of
``pyproject.toml`` (setuptools >= 77) in this environment; without it the test is skipped with the
reason. Online, pip builds the wheel in an isolated environment. The fresh environment gets the
wheel with ``--no-deps`` and borrows the *dependencies* (numpy, scipy, pandas, dp_accounting, ...) from
this environment's site-packages through a ``.pth`` line -- a plain path, so the ``.pth`` files there
(an editable install of this checkout) are not run and ``shuffledp`` can only come from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# builds a wheel and a virtual environment: `slow` (see the marker in pyproject.toml)
pytestmark = pytest.mark.slow
OFFLINE_FAILURES = (
    "No matching distribution",
    "Could not find a version",
    "NewConnectionError",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "ConnectionError",
)


def _backend_available() -> bool:
    from packaging.requirements import Requirement

    for line in ("setuptools>=77", "wheel"):
        requirement = Requirement(line)
        try:
            if metadata.version(requirement.name) not in requirement.specifier:
                return False
        except metadata.PackageNotFoundError:
            return False
    return True


def _sources(destination: Path) -> Path:
    """A copy of what the build reads (so the checkout gets no build/ or egg-info)."""
    for name in ("pyproject.toml", "README.md", "CITATION.cff"):
        shutil.copy2(REPO / name, destination / name)
    shutil.copytree(
        REPO / "src", destination / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    return destination


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    sources = _sources(tmp_path_factory.mktemp("sources"))
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(out), str(sources)]
    if _backend_available():
        command[4:4] = ["--no-build-isolation", "--no-index"]
    env = {**os.environ, "PIP_RETRIES": "0", "PIP_TIMEOUT": "10", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    built = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    if built.returncode != 0:
        if not _backend_available() and any(text in built.stdout + built.stderr for text in OFFLINE_FAILURES):
            pytest.skip(
                "cannot build the wheel offline: the build backend (setuptools>=77, wheel) is not installed "
                "here and no package index is reachable"
            )
        pytest.fail(f"the wheel did not build:\n{built.stdout[-2000:]}\n{built.stderr[-2000:]}")
    wheels = sorted(out.glob("shuffledp-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Path:
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    python = root / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--disable-pip-version-check",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_dependencies_of_the_test_env.pth").write_text("\n".join(sorted(ours)) + "\n")
    return root


def test_the_wheel_holds_the_reference_data_and_the_entry_point(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "shuffledp/reference/table4.csv" in names and "shuffledp/reference/koskela_figures.csv" in names
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "shuffle-dp = shuffledp.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def _clean_env() -> dict:
    """The environment without PYTHONPATH (the test run may point it at the checkout's src/)."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def test_the_installed_wheel_runs_outside_the_checkout(venv, tmp_path):
    python, script = venv / "bin" / "python", venv / "bin" / "shuffle-dp"
    where = subprocess.run(
        [str(python), "-c", "import shuffledp; print(shuffledp.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        env=_clean_env(),
    ).stdout.strip()
    assert where.startswith(str(venv)), where  # the wheel's copy, not the checkout's
    argv = [
        "epsilon",
        "--accountant",
        "weak-adversary",
        "--eps0",
        "2",
        "--n",
        "1000",
        "--k",
        "4",
        "--delta",
        "1e-6",
        "--json",
    ]
    installed = subprocess.run(
        [str(script), *argv], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=_clean_env()
    )
    here = subprocess.run(
        [sys.executable, "-m", "shuffledp", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert installed.returncode == 0 and installed.stdout == here.stdout, installed.stderr
    assert json.loads(installed.stdout)[0]["kind"] == "upper bound"
    reference = subprocess.run(
        [
            str(python),
            "-c",
            "from shuffledp.reference import load_reference, REFERENCE_NAMES\n"
            "print(sum(len(load_reference(name)) for name in REFERENCE_NAMES))",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=_clean_env(),
    )
    assert reference.returncode == 0 and int(reference.stdout) > 0, reference.stderr
