"""Packaging: ranges in pyproject.toml, exact pins in requirements.lock, environment.yml, the README's commands, the CLI."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

import shuffledp

REPO = Path(__file__).resolve().parents[1]


def _lock() -> dict[str, str]:
    pins = {}
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line.strip())
            assert match, f"requirements.lock: not an exact pin: {line!r}"
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def _declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return [
        Requirement(text) for text in [*project["dependencies"], *project["optional-dependencies"]["test"]]
    ]


def test_dependencies_are_ranges_whose_lower_bound_is_the_locked_tested_version():
    lock = _lock()
    for requirement in _declared():
        operators = {spec.operator: Version(spec.version) for spec in requirement.specifier}
        assert "==" not in operators, (
            f"{requirement}: use a compatible range; exact pins go to requirements.lock"
        )
        assert set(operators) == {">=", "<"}, f"{requirement}: needs a lower (>=) and an upper (<) bound"
        locked = lock.get(canonicalize_name(requirement.name))
        assert locked is not None, f"{requirement.name} is missing from requirements.lock"
        assert operators[">="] == Version(locked), (
            f"{requirement}: lower bound must be the tested (locked) {locked}"
        )
        assert Version(locked) in requirement.specifier


def test_scikit_learn_stays_below_1_9_for_diffprivlib():
    (sklearn,) = [r for r in _declared() if r.name == "scikit-learn"]
    assert Version("1.9.0") not in sklearn.specifier and Version(_lock()["scikit-learn"]) < Version("1.9")


def test_installed_versions_are_the_locked_ones():
    # CI installs with -c requirements.lock; a drift means the lock was not regenerated.
    lock = _lock()
    for requirement in _declared():
        assert importlib.metadata.version(requirement.name) == lock[canonicalize_name(requirement.name)], (
            requirement.name
        )


def test_requires_python_covers_lowest_and_newest_tested():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    supported = SpecifierSet(project["requires-python"])
    for version in ("3.11.0", "3.12.0", "3.13.0"):
        assert Version(version) in supported
    assert Version("3.10.13") not in supported
    classifiers = {
        c.rsplit(" :: ", 1)[-1]
        for c in project["classifiers"]
        if c.startswith("Programming Language :: Python :: 3.")
    }
    assert classifiers == {"3.11", "3.12", "3.13"}
    assert "NEWEST_VERSION=3.13" in (REPO / ".ci" / "newest-python").read_text()


def test_environment_yml_installs_this_repository_with_the_lock():
    # conda writes the pip entries to a requirements file beside environment.yml and runs pip in that
    # folder: paths resolve against the file's folder (the old `-e ..` named the repository's parent).
    path = REPO / "environment.yml"
    environment = yaml.safe_load(path.read_text())
    pip = next(item["pip"] for item in environment["dependencies"] if isinstance(item, dict))
    editable = [entry for entry in pip if entry.startswith("-e ")]
    constraints = [entry for entry in pip if entry.startswith("-c ")]
    assert len(editable) == 1 and len(constraints) == 1 and len(pip) == 2, pip
    target = (path.parent / editable[0][3:].split("[")[0]).resolve()
    assert target == REPO and (target / "pyproject.toml").is_file()
    assert (path.parent / constraints[0][3:]).resolve() == REPO / "requirements.lock"
    python = next(
        item for item in environment["dependencies"] if isinstance(item, str) and item.startswith("python")
    )
    assert Version(python.split("=")[1].split()[0] + ".0") in SpecifierSet(
        tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    )


def test_environment_yml_pip_entries_resolve_like_conda_does(tmp_path):
    # Reproduce conda's pip step without conda: the entries in a requirements file in the folder of
    # environment.yml, resolved by pip itself (a dry run: nothing is installed, dependencies are not resolved).
    environment = yaml.safe_load((REPO / "environment.yml").read_text())
    pip = next(item["pip"] for item in environment["dependencies"] if isinstance(item, dict))
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("pyproject.toml", "requirements.lock", "README.md"):
        (copy / name).write_text((REPO / name).read_text())
    (copy / "src" / "shuffledp").mkdir(parents=True)
    (copy / "src" / "shuffledp" / "__init__.py").write_text('__version__ = "0.1.0"\n')
    (copy / "condaenv.requirements.txt").write_text("\n".join(pip) + "\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--no-deps",
            "--report",
            str(tmp_path / "report.json"),
            "-r",
            "condaenv.requirements.txt",
        ],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    (item,) = report["install"]
    assert item["metadata"]["name"] == "shuffledp" and item["download_info"]["url"] == copy.as_uri()


def _bash_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_readme_opens_with_two_commands_and_ci_runs_the_second():
    blocks = _bash_blocks((REPO / "README.md").read_text())
    run_all, run_tests = blocks[0], blocks[1]
    install = 'python3 -m venv .venv && .venv/bin/pip install -c requirements.lock -e ".[test]"'
    assert run_all == f"{install} && .venv/bin/snakemake --cores 2"
    assert run_tests == f"{install} && .venv/bin/python -m pytest -n 2 --dist loadfile"
    ci_commands = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    # every step starts once what it needs is installed (tests/test_ci.py runs this control flow with
    # stand-ins); the README's test command is its install, then its pytest
    assert ci_commands == [
        "unset PYTHONDONTWRITEBYTECODE  # Python caches what it compiles (above)",
        # a pinned uv installs CI's two environments (the README's own pip install runs as written below)
        "UV_VERSION=0.13.9",
        'python3 -m pip install -q --no-compile --target .ci-uv "uv==$UV_VERSION" || exit',
        'export SHUFFLEDP_UV="$PWD/.ci-uv/bin/uv"  # .ci/newest-python installs with it too',
        "setsid bash .ci/system-packages > .ci-system-packages.log 2>&1 &",
        "system_install=$!",
        """setsid env PYTEST_ADDOPTS="-p no:cacheprovider" bash -c 'bash .ci/newest-python install && NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" SHUFFLEDP_NEWEST_WORKERS=0 bash .ci/newest-python test' > .venv-newest.log 2>&1 &""",
        "newest=$!",
        # the README's environment with the docs extra, from the same lock, by uv (which does not byte-compile:
        # CI caches what Python compiles)
        f"""setsid bash -c '{install.replace("[test]", "[test,docs]").replace(".venv/bin/pip install", '"$SHUFFLEDP_UV" pip install --python .venv/bin/python').replace("venv .venv", "venv --without-pip .venv")}' > .venv.log 2>&1 &""",
        "readme_install=$!",
        "lint= docs_build=",
        """trap 'kill -- "-$system_install" "-$newest" "-$readme_install" ${lint:+"-$lint"} ${docs_build:+"-$docs_build"} 2>/dev/null || true' EXIT""",
        """wait "$readme_install" || { cat .venv.log; echo ".ci/run: installing the README's environment failed" >&2; exit 1; }""",
        "setsid bash .ci/lint > .ci-lint.log 2>&1 &  # ruff, ruff format, snakefmt and mypy from .venv; a finding fails CI",
        "lint=$!",
        f"{install} || exit",
        "setsid bash .ci/docs build > .ci-docs.log 2>&1 &",
        "docs_build=$!",
        "export SHUFFLEDP_SITE_BUILT=.ci/docs  # the suite's own strict build (tests/test_docs_site.py) is not repeated",
        ".venv/bin/python -m pytest --collect-only -q -p no:cacheprovider > /dev/null || exit  # caches the suite's bytecode",
        'wait "$system_install" || { cat .ci-system-packages.log; echo ".ci/run: installing the system packages (apt-get) failed" >&2; exit 1; }',
        "tail -n 3 .ci-system-packages.log",
        f"{run_tests.removeprefix(install + ' && ')} || exit",
        'wait "$lint" || { cat .ci-lint.log; echo ".ci/run: the lint step found something" >&2; exit 1; }',
        "cat .ci-lint.log",
        """wait "$docs_build" || { cat .ci-docs.log; echo ".ci/run: the documentation site's strict build failed" >&2; exit 1; }""",
        "tail -n 3 .ci-docs.log",
        """wait "$newest" || { cat .venv-newest.log; echo ".ci/run: the newest Python's install or tests (without AVX-512) failed" >&2; exit 1; }""",
        "trap - EXIT",
        "cat .venv-newest.log",
    ]
    newest = (REPO / ".ci" / "newest-python").read_text()
    assert (
        '.venv-newest/bin/pip install "${compile[@]}" -c requirements.lock -e ".[test]"' in newest
        and '"$SHUFFLEDP_UV" pip install --python .venv-newest/bin/python "${compile[@]}" -c requirements.lock -e ".[test]"'
        in newest
        and '-m pytest -n 2 --dist loadfile -m "not slow"' in newest
    )


def test_readme_states_what_happens_offline_and_where_things_are():
    text = (REPO / "README.md").read_text()
    assert "offline it uses the\ntwo genuine Gowalla subsets bundled in `data/bundled/`" in text
    assert "source .venv/bin/activate" in text and ".venv/bin/snakemake" in text
    assert "[data guide](docs/guide/data.md)" in text  # the data sources are explained there
    data = (REPO / "docs" / "guide" / "data.md").read_text()
    assert "`data.source: auto`" in data and "config/quick.yaml" in data


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
