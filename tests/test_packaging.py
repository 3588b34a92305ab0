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
    # the workflow needs none of the test tools (docs/decisions/code.md, "The README's two installs")
    assert (
        run_all
        == "python3 -m venv .venv && .venv/bin/pip install -c requirements.lock -e . && .venv/bin/snakemake --cores 2"
    )
    assert run_tests == f"{install} && .venv/bin/python -m pytest -n 2 --dist loadfile"
    lines = [
        line
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    # the settings, then the steps after the step machinery (`start`, `await`, the trap: tests/test_ci.py runs
    # it with stand-ins)
    assert lines[4:6] == [
        "unset PYTHONDONTWRITEBYTECODE  # Python caches what it compiles (above)",
        "UV_VERSION=0.13.9",
    ]
    assert "trap stop_steps EXIT" in lines and lines.index("trap stop_steps EXIT") < lines.index("start() {")
    steps = lines[lines.index("}", lines.index("await() {")) + 1 :]
    readme_env = install.replace("[test]", "[test,docs]").replace(
        ".venv/bin/pip install", '"$SHUFFLEDP_UV" pip install --python .venv/bin/python'
    )
    # every step starts once what it needs is installed; the README's test command is its install, then its
    # pytest, each as the README writes it
    assert steps == [
        # a pinned uv installs CI's two environments (the README's own pip install runs as written below)
        'python3 -m pip install -q --no-compile --target .ci-uv "uv==$UV_VERSION" || exit',
        'export SHUFFLEDP_UV="$PWD/.ci-uv/bin/uv"  # .ci/newest-python installs with it too',
        'start "installing the system packages (apt-get)" .ci-system-packages.log bash .ci/system-packages',
        "system_install=$LAST_STEP",
        """start "the newest Python's install or tests (without AVX-512)" .venv-newest.log env PYTEST_ADDOPTS="-p no:cacheprovider" bash -c 'bash .ci/newest-python install && NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" SHUFFLEDP_NEWEST_WORKERS=0 bash .ci/newest-python test'""",
        "newest=$LAST_STEP",
        # the README's environment with the docs extra, from the same lock, by uv (which does not byte-compile:
        # CI caches what Python compiles)
        f"""start "installing the README's environment" .venv.log bash -c '{readme_env.replace("venv .venv", "venv --without-pip .venv")}'""",
        'await "$LAST_STEP"',
        'start "the lint step" .ci-lint.log bash .ci/lint  # ruff, ruff format, snakefmt and mypy from .venv',
        "lint=$LAST_STEP",
        f"""start "the README's install" - bash -c '{install}'""",
        'await "$LAST_STEP"',
        """start "the documentation site's strict build" .ci-docs.log bash .ci/docs build""",
        "docs_build=$LAST_STEP",
        "export SHUFFLEDP_SITE_BUILT=.ci/docs  # the suite's own strict build (tests/test_docs_site.py) is not repeated",
        """start "the collection that caches the suite's bytecode" .ci-collect.log .venv/bin/python -m pytest --collect-only -q -p no:cacheprovider""",
        'await "$LAST_STEP"',
        'await "$system_install"',
        "tail -n 3 .ci-system-packages.log",
        f"""start "the README's test command" - {run_tests.removeprefix(install + " && ")}""",
        'await "$LAST_STEP"',
        'await "$lint"',
        'await "$docs_build"',
        'await "$newest"',
        "cat .ci-lint.log",
        "tail -n 3 .ci-docs.log",
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
