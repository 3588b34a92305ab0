"""Report stage end to end: the tiny .test workflow, its manifests and reproduction report,
`snakemake --report`, and a dry run with the SLURM profile (no sbatch needed)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path

import pytest
from snakemake_runner import run_snakemake

from shuffledp.provenance import config_sha256, file_sha256

REPO = Path(__file__).resolve().parents[1]
RULES = REPO / "workflow" / "rules"
SNAKEFILE = ["-s", str(REPO / "Snakefile")]
STAGES = ("data", "accounting", "utility")


def _run(arguments, cwd, env=None, timeout=900):
    result = run_snakemake([*SNAKEFILE, *arguments], cwd=cwd, env=env, timeout=timeout)
    assert result.returncode == 0, (
        f"snakemake {' '.join(arguments)} failed:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
    return result


def _workdir(tmp_path: Path) -> Path:
    work = tmp_path / "run"
    shutil.copytree(REPO / ".test", work, ignore=shutil.ignore_patterns("results", "logs", ".snakemake"))
    return work


def test_every_report_caption_file_exists():
    captions = []
    for rule_file in sorted(RULES.glob("*.smk")):
        for caption in re.findall(r"caption\s*=\s*\"([^\"]+)\"", rule_file.read_text()):
            captions.append((rule_file.name, caption, (RULES / caption).resolve()))
    assert captions, "no report(..., caption=...) found in workflow/rules"
    missing = [f"{name}: {caption}" for name, caption, path in captions if not path.is_file()]
    assert not missing, f"caption files missing: {missing}"
    empty = [f"{name}: {caption}" for name, caption, path in captions if not path.read_text().strip()]
    assert not empty, f"caption files empty: {empty}"


@pytest.fixture(scope="module")
def tiny_run(tiny_workflow_run):
    """The real workflow on the tiny .test config (the same run CI does), then snakemake --report:
    built once per session and shared with tests/test_workflow.py (tests/conftest.py); read only here."""
    return tiny_workflow_run


@pytest.mark.slow
def test_manifests_trace_outputs_to_config_and_inputs(tiny_run):
    import yaml

    config = yaml.safe_load((tiny_run / "config" / "config.yaml").read_text())
    manifests = {stage: tiny_run / "results" / stage / "MANIFEST.json" for stage in (*STAGES, "report")}
    present = {stage: path for stage, path in manifests.items() if path.is_file()}
    assert "data" in present and "report" in present
    for stage, path in present.items():
        manifest = json.loads(path.read_text())
        assert manifest["stage"] == stage
        assert manifest["missing_files"] == []
        assert manifest["seeds"] == {"seed": config["seed"]}
        # the config hash is of the config the workflow ran with (the file, after validation)
        assert manifest["config"]["sha256"] == config_sha256(yaml.safe_load(manifest["config"]["yaml"]))
        assert yaml.safe_load(manifest["config"]["yaml"])["seed"] == config["seed"]
        for record in manifest["outputs"] + manifest["inputs"]:
            assert record["sha256"] == file_sha256(tiny_run / record["path"]), record["path"]
    data = json.loads(present["data"].read_text())
    assert [Path(r["path"]).name for r in data["inputs"]] == ["checkins_fixture.txt"]
    assert data["inputs"][0]["source"]["kind"] == "local file"
    assert {Path(r["path"]).name for r in data["outputs"]} >= {"summary.csv", "fig3.png", "cell_counts.csv"}


@pytest.mark.slow
def test_reproduction_report_lists_every_stage_output(tiny_run):
    report_dir = tiny_run / "results" / "report"
    markdown = (report_dir / "reproduction-report.md").read_text()
    page = (report_dir / "reproduction-report.html").read_text()
    for heading in ("## Errata", "### FPS 2023"):
        assert heading in markdown
    # each paper table with comparison rows has its section of cells in the appendix; the others are named
    # as absent in the Biswas section
    tables = {
        row.split(",", 1)[0]
        for path in (tiny_run / "results").glob("*/table*_comparison.csv")
        for row in path.read_text().splitlines()[1:]
    }
    for table in ("II", "IV", "V", "VI"):
        assert (f"#### Table {table}:" in markdown) == (table in tables), table
        if table not in tables:
            assert re.search(rf"No comparison rows in this run for [^\n]*Table {table}\b", markdown), table
    for number in range(1, 8):
        assert f"### Figure {number}:" in markdown
    # every figure the workflow made is embedded in the HTML, and nothing is loaded from outside
    images = sorted((tiny_run / "results").glob("*/fig*.png"))
    assert images
    for image in images:
        assert f"({os.path.relpath(image, report_dir)})" in markdown
    assert page.count('src="data:image/png;base64,') == markdown.count("![") >= len(images)
    assert all(src.startswith("data:") for src in re.findall(r'src="([^"]*)"', page))
    # every comparison CSV the workflow made is read (named as a source) by the report
    for comparison in sorted((tiny_run / "results").glob("*/*_comparison.csv")):
        assert f"`{comparison.relative_to(tiny_run)}`" in markdown
    for stage in STAGES:
        if (tiny_run / "results" / stage / "MANIFEST.json").is_file():
            assert f"(../{stage}/MANIFEST.json)" in markdown
    # with every stage present, each figure gets a reading derived from its data, none is absent
    if all((tiny_run / "results" / stage / "MANIFEST.json").is_file() for stage in STAGES):
        assert "no data file for this figure" not in markdown
        assert "absent from this run" not in markdown
        assert "could not be read" not in markdown


@pytest.mark.slow
def test_epsilon_comparison_and_bracket_outputs_and_readings(tiny_run):
    """The epsilon-comparison and bracket outputs of the tiny run: every configured (accountant, point) is a CSV row (also those
    that cannot reach delta), the bracket covers its grid, and the report reads both."""
    import pandas as pd
    import yaml

    section = yaml.safe_load((tiny_run / "config" / "config.yaml").read_text())["accounting"]
    results = tiny_run / "results" / "accounting"
    comparison = pd.read_csv(results / "epsilon_comparison.csv")
    points = len(section["epsilon_comparison"]["against_n"]["n_users"]) + len(
        section["epsilon_comparison"]["against_epsilon_local"]["epsilon_local"]
    )
    assert len(comparison) == points * len(section["epsilon_comparison"]["accountants"])
    assert comparison["status"].notna().all()
    assert (results / "epsilon_comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    grid = section["bracket"]
    bracket = pd.read_csv(results / "bracket.csv")
    assert len(bracket) == len(grid["n_users"]) * len(grid["k"]) * len(grid["epsilon_local"]) * len(
        grid["delta"]
    )
    assert (bracket["eps_lower"] <= bracket["eps_upper"]).all()
    assert (results / "bracket.md").read_text().count("\n| ") == len(bracket) + 1
    markdown = (tiny_run / "results" / "report" / "reproduction-report.md").read_text()
    for heading in ("### Epsilon at a fixed delta", "### Worst-case bracket"):
        assert heading in markdown
    assert f"Bracket of the worst-case ε over {len(bracket)} settings" in markdown
    assert "A guarantee below the lower bound: 0 points (must be 0)." in markdown


@pytest.mark.slow
def test_report_opens_with_verdicts_and_keeps_its_main_part_short(tiny_run):
    """One verdict line per seed paper, then Findings, Errata and contents; each seed paper's
    section shows its stage's figures; the main part (before the appendix) is under 250 lines and no
    paragraph is repeated; epsilon_comparison.csv (not a paper comparison) is never an input problem."""
    report_dir = tiny_run / "results" / "report"
    markdown = (report_dir / "reproduction-report.md").read_text()
    assert "epsilon_comparison" not in "".join(
        line for line in markdown.splitlines() if "Input problem" in line
    )
    order = [
        markdown.index(h)
        for h in (
            "## Verdicts",
            "## Findings",
            "## Errata",
            "## Contents",
            "## Biswas et al.",
            "## Koskela et al.",
            "## Balle et al.",
            "## Girgis et al.",
            "## Appendix",
        )
    ]
    assert order == sorted(order)
    # the first screen names the data (the .test fixture, a local file) and the grids before any verdict
    first_screen = markdown[: order[0]]
    assert "**Data: local files** `fixture`:" in first_screen and "**Grids:** this report ran" in first_screen
    verdicts = markdown[order[0] : order[1]]
    for paper in ("Biswas, Jung & Palamidessi", "Koskela et al.", "Balle et al.", "Girgis et al."):
        assert verdicts.count(f"- **{paper}**") == 1
    findings = markdown[order[1] : order[2]]
    assert findings.count("\n- ") >= 7 and "not available in this run" not in findings
    main = markdown[: order[-1]]
    assert main.count("\n") < 250
    blocks = [b for b in markdown.split("\n\n") if len(b) > 40 and not b.startswith("|")]
    items = [i for b in blocks for i in (b.split("\n- ") if b.startswith("- ") else [b])]
    assert len(items) == len(set(items)), [i[:80] for i in items if items.count(i) > 1]
    for stage, heading in (("koskela", "## Koskela et al."), ("balle", "## Balle et al.")):
        section = markdown[markdown.index(heading) :]
        section = section[: section.index("\n## ", 1)]
        for image in sorted((tiny_run / "results" / stage).glob("*.png")):
            assert f"({os.path.relpath(image, report_dir)})" in section, image.name
    assert "### Phase diagram" in markdown and "(../utility/phase_diagram_" in markdown


@pytest.mark.slow
def test_the_browser_check_is_a_workflow_output_and_never_pretends(tiny_run):
    """report_first_screen: with chromium, first_screen.png and a JSON saying the check passed; without it,
    only the JSON, saying it did not check and why."""
    report_dir = tiny_run / "results" / "report"
    result = json.loads((report_dir / "first_screen.json").read_text())
    if shutil.which("chromium") and shutil.which("chromedriver"):
        assert result["checked"] is True and result["ok"] is True, result
        assert (report_dir / "first_screen.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert result["images"] >= 1 and result["tables"] >= 1
    else:
        assert result["checked"] is False and result["ok"] is None and "not found" in result["reason"]
        assert not (report_dir / "first_screen.png").exists()


@pytest.mark.slow
def test_snakemake_report_contains_figures_and_the_reproduction_report(tiny_run):
    names = zipfile.ZipFile(tiny_run / "report.zip").namelist()
    assert any(name.endswith("report.html") for name in names)
    assert any(name.endswith("reproduction-report.html") for name in names)
    for image in (tiny_run / "results").glob("*/fig*.png"):
        assert any(name.endswith("/" + image.name) for name in names), image.name


@pytest.mark.slow  # a Snakemake dry run
def test_slurm_profile_dry_run_without_sbatch(tmp_path):
    pytest.importorskip("snakemake_executor_plugin_slurm")
    work = _workdir(tmp_path)
    # The PATH without any folder holding SLURM's commands, so this holds even on a SLURM machine.
    # (folders that hold SLURM's commands are replaced by a folder of links to everything else they
    # hold: /usr/bin keeps sh and bash on a machine where slurm-wlm is installed)
    slurm_tools = ("sbatch", "sinfo", "squeue", "sacct", "srun", "scontrol")
    folders = [str(Path(sys.executable).parent), *os.environ.get("PATH", "").split(os.pathsep)]
    links = tmp_path / "bin-without-slurm"
    links.mkdir()
    kept = []
    for folder in (f for f in folders if f and Path(f).is_dir()):
        if not any((Path(folder) / tool).exists() for tool in slurm_tools):
            kept.append(folder)
            continue
        for entry in Path(folder).iterdir():
            if entry.name not in slurm_tools and not (links / entry.name).exists():
                (links / entry.name).symlink_to(entry)
        kept.append(str(links))
    env = {**os.environ, "PATH": os.pathsep.join(dict.fromkeys(kept))}
    assert shutil.which("sbatch", path=env["PATH"]) is None
    result = _run(["-n", "--profile", str(REPO / "profiles" / "slurm")], cwd=work, env=env, timeout=300)
    assert "This was a dry-run" in result.stdout + result.stderr
    # the profile is really read: an unknown executor in a copy of it is rejected in a dry run too
    bad = tmp_path / "bad-profile"
    bad.mkdir()
    text = (
        (REPO / "profiles" / "slurm" / "config.yaml")
        .read_text()
        .replace("executor: slurm", "executor: nosuch")
    )
    (bad / "config.yaml").write_text(text)
    failed = run_snakemake([*SNAKEFILE, "-n", "--profile", str(bad)], cwd=work, env=env, timeout=300)
    assert failed.returncode != 0 and "nosuch" in failed.stderr
