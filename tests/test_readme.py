"""The user guide's Snakemake commands, run as written (dry runs): the quick profile, SLURM profile,
localrules, --config. They live on the guide's pages: docs/guide/data.md (the quick profile),
docs/guide/slurm.md (the SLURM profile), docs/guide/configuration.md (--config after the targets, the
nested override) and docs/guide/pipeline.md (an interrupted run)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from snakemake_runner import run_snakemake

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "guide"
#: the pages whose bash blocks name this file as their test (docs/guide/*.md, `<!-- test: tests/test_readme.py -->`)
PAGES = ("data.md", "slurm.md", "configuration.md")
TEXT = "\n".join((GUIDE / page).read_text() for page in PAGES)
PIPELINE = (GUIDE / "pipeline.md").read_text()


def _bash_blocks() -> list[str]:
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", TEXT, flags=re.S)]


def _block(pattern: str) -> str:
    found = [block for block in _bash_blocks() if re.search(pattern, block)]
    assert len(found) == 1, (pattern, found)
    return found[0]


def _checkout(tmp_path) -> Path:
    """A checkout-shaped folder: the workflow and the bundled data (linked), config and profiles (copied)."""
    work = tmp_path / "repo"
    work.mkdir()
    for name in ("Snakefile", "workflow"):
        (work / name).symlink_to(REPO / name)
    for name in ("config", "profiles"):
        shutil.copytree(REPO / name, work / name)
    (work / "data").mkdir()
    (work / "data" / "bundled").symlink_to(REPO / "data" / "bundled")
    return work


def _run(command: str, work: Path, *extra: str):
    words = shlex.split(command)
    program = words[0].removeprefix(".venv/bin/")
    assert program == "snakemake", command
    return run_snakemake([*words[1:], *extra], cwd=work, timeout=600)


QUICK = ".venv/bin/snakemake --cores 2 --configfile config/config.yaml config/quick.yaml"


@pytest.fixture(scope="module")
def quick_dry_run(tmp_path_factory):
    """The guide's quick command as written, dry run (``-n``) in a fresh checkout: one Snakemake start that
    test_quick_command_as_written_builds_the_whole_dag and test_light_rules_are_localrules_that_snakemake_knows
    both read."""
    return _run(QUICK, _checkout(tmp_path_factory.mktemp("quick")), "-n")


@pytest.mark.slow  # Snakemake
def test_quick_command_as_written_builds_the_whole_dag(quick_dry_run):
    command = _block(r"config/quick\.yaml")
    assert command == QUICK
    result = quick_dry_run
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    # the fetch step is a checkpoint: the jobs after it are planned once it has chosen the data
    assert "fetch_gowalla" in result.stdout and "reproduction_report" in result.stdout


# Not `slow`, on purpose: the newest Python's one Snakemake dry run of the whole workflow (parses and builds the DAG).
def test_slurm_command_adds_to_the_profile_defaults(tmp_path):
    command = _block(r"--profile profiles/slurm")
    assert command.endswith(" -n")
    profile = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())["default-resources"]
    given = dict(word.split("=", 1) for word in shlex.split(command) if re.fullmatch(r"\w+=\S+", word))
    for key, value in profile.items():
        assert given.get(key) == str(value), f"README's SLURM command must repeat the profile's {key}={value}"
    result = _run(command, _checkout(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    resources = [line for line in result.stdout.splitlines() if line.strip().startswith("resources:")]
    assert resources
    for line in resources:
        for key, value in {**profile, "slurm_partition": "P", "slurm_account": "A"}.items():
            assert f"{key}={value}" in line, line


UNKNOWN_LOCALRULE = "localrules directive specifies rules that are not present"


@pytest.mark.slow  # Snakemake
def test_light_rules_are_localrules_that_snakemake_knows(tmp_path, quick_dry_run):
    """Snakemake checks the Snakefile's localrules when it parses the workflow, whatever the configuration:
    the quick command's dry run (shared with the test above) must not warn, and the same command on a
    Snakefile with a misspelt localrules name must."""
    declared = []
    for rules in (REPO / "workflow" / "rules").glob("*.smk"):
        for block in re.findall(r"localrules:\n((?:\s+\w+,\n)+)", rules.read_text()):
            declared += re.findall(r"(\w+),", block)
    assert {
        "fetch_gowalla",
        "data_summary",
        "manifest",
        "reproduction_report",
        "utility_table5",
        "utility_table6",
    } <= set(declared)
    result = quick_dry_run
    assert result.returncode == 0 and UNKNOWN_LOCALRULE not in result.stdout + result.stderr
    work = _checkout(tmp_path)
    # Snakemake only warns about a localrules name that matches no rule: make sure it would be seen.
    (work / "Snakefile").unlink()
    (work / "Snakefile").write_text(
        (REPO / "Snakefile")
        .read_text()
        .replace(
            'include: "workflow/rules/common.smk"',
            'include: "workflow/rules/common.smk"\nlocalrules: fetch_gowala',
        )
    )
    result = _run(QUICK, work, "-n")
    assert (
        UNKNOWN_LOCALRULE in result.stdout + result.stderr and "fetch_gowala" in result.stdout + result.stderr
    )


@pytest.mark.slow  # Snakemake
def test_config_after_targets_as_the_guide_says(tmp_path):
    assert "so put it after the\ntargets" in (GUIDE / "configuration.md").read_text()
    work = _checkout(tmp_path)
    after = _run("snakemake -n --cores 1 results/accounting/table4.csv --config seed=7", work)
    assert after.returncode == 0, after.stdout[-2000:] + after.stderr[-2000:]
    before = _run("snakemake -n --cores 1 --config seed=7 results/accounting/table4.csv", work)
    assert before.returncode != 0  # the target is swallowed by --config, as the guide warns


@pytest.mark.slow  # Snakemake
def test_nested_override_example_as_written(tmp_path):
    command = _block(r"--config 'utility=")
    result = _run(command, _checkout(tmp_path), "-n")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]


@pytest.mark.slow  # Snakemake
def test_interrupted_run_paragraph_matches_what_snakemake_does(tmp_path):
    """A killed run leaves Snakemake's lock; the guide says so, gives --unlock and when it is unsafe."""
    import os
    import signal
    import time

    paragraph = PIPELINE.split("**When a run was interrupted**", 1)[1].split("\n\n", 1)[0]
    assert "--unlock" in paragraph and "Directory cannot\nbe locked" in paragraph
    assert "unsafe while another run is\nactive" in paragraph
    (tmp_path / "Snakefile").write_text(
        'rule a:\n    output: "out.txt"\n    shell: "sleep 60 && echo done > {output}"\n'
    )
    arguments = ["--cores", "1", "--workflow-profile", "none"]
    run = subprocess.Popen(  # a process of its own: the kill below is the point
        [sys.executable, "-m", "snakemake", *arguments],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    locks = tmp_path / ".snakemake" / "locks"
    deadline = time.monotonic() + 60
    while not (locks.exists() and any(locks.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(run.pid, signal.SIGKILL)  # the kill that cannot be caught
    run.wait()
    (tmp_path / "Snakefile").write_text('rule a:\n    output: "out.txt"\n    shell: "echo done > {output}"\n')
    again = run_snakemake(arguments, cwd=tmp_path, timeout=120)
    assert again.returncode != 0 and "Directory cannot be locked" in again.stdout + again.stderr
    unlocked = run_snakemake([*arguments, "--unlock"], cwd=tmp_path, timeout=120)
    assert unlocked.returncode == 0 and not (tmp_path / "out.txt").exists()
    after = run_snakemake(arguments, cwd=tmp_path, timeout=120)
    assert after.returncode == 0 and (tmp_path / "out.txt").read_text() == "done\n", (
        after.stdout + after.stderr
    )
