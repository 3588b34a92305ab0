"""Packaging: pins identical in pyproject.toml and environment.yml, the README's commands, the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

import shuffledp

REPO = Path(__file__).resolve().parents[1]


def _pins(requirements) -> dict[str, str]:
    pins = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([^\s;]+)", requirement.strip())
        assert match, f"not pinned with ==: {requirement!r}"
        pins[match.group(1).lower()] = match.group(2)
    return pins


def test_pins_identical_in_pyproject_and_environment():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    environment = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(item["pip"] for item in environment["dependencies"] if isinstance(item, dict))
    assert _pins(declared) == _pins(entry for entry in pip if not entry.startswith("-e"))
    python = next(item for item in environment["dependencies"] if isinstance(item, str) and item.startswith("python="))
    assert python == "python=3.11" and project["requires-python"].startswith(">=3.11")


def _bash_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_readme_opens_with_two_commands_and_ci_runs_the_second():
    blocks = _bash_blocks((REPO / "README.md").read_text())
    run_all, run_tests = blocks[0], blocks[1]
    assert run_all.endswith("snakemake --cores 2") and run_all.startswith("python3 -m venv .venv")
    ci_commands = [line for line in (REPO / ".ci" / "run").read_text().splitlines() if line and not line.startswith(("#", "set ", "cd "))]
    assert ci_commands == [run_tests]


def _run(*command):
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_console_script_version_and_help():
    script = Path(sys.executable).with_name("shuffle-dp")
    version = _run(str(script), "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"shuffle-dp {shuffledp.__version__}"
    helped = _run(str(script), "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: shuffle-dp")


def test_python_dash_m_help():
    helped = _run(sys.executable, "-m", "shuffledp", "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: shuffle-dp")
