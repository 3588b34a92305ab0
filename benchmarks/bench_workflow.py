"""Benchmark: the quick-profile workflow from clean and its no-op rerun.

Goal: from clean on 2 quiet cores <= 60 s wall and <= 100 CPU s; a no-op rerun <= 1.5 s.
Copies this checkout's files (``git ls-files``, or the tree of commit ``--ref``: no results/, logs/ or
.snakemake/) into a temporary folder, runs there

    snakemake --cores N --configfile config/config.yaml config/quick.yaml

(data.source auto: the SNAP file where it can be downloaded, else the bundled subsets; offline, the
bundled subsets)

timing its wall clock and the CPU seconds of Snakemake and every job (this process's children), then the
same command again (nothing to do). The library is the copy's own (``PYTHONPATH=<copy>/src``), so
``--ref main`` measures main's code with this interpreter's packages.

Per job: Snakemake's ``benchmark:`` files sample CPU every 0.5 s and, after 15 s, every 30 s, so a long
job's last seconds are missed (a 79 s job read 18 CPU s on a loaded machine). Instead every Python
process of the run records its own CPU seconds (user + system, its children included) at exit, through a
``sitecustomize`` module put first on ``PYTHONPATH``: a job is named by its rule's script and its first
log file, Snakemake itself by its command. The machine's load average is recorded beside each run: on a
shared machine timings are noisy, so compare runs made in the same session under the same load.

Writes results/benchmarks/workflow.csv (one row per run) and results/benchmarks/workflow_jobs.csv
(one row per job, largest CPU first), and prints both.

Run: python benchmarks/bench_workflow.py [--cores 2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from shuffledp.io import atomic_write_csv

ROOT = Path(__file__).resolve().parents[1]
RUN_COLUMNS = [
    "run",
    "commit",
    "cores",
    "status",
    "wall_s",
    "cpu_s",
    "jobs_cpu_s",
    "snakemake_cpu_s",
    "load_before",
    "load_after",
]
JOB_COLUMNS = ["run", "commit", "job", "cpu_s", "wall_s"]

# Appends "<own CPU s>\t<its children's CPU s>\t<wall s>\t<name>" to $BENCH_WORKFLOW_RECORD when a Python
# process of the run exits.
SITECUSTOMIZE = """
import atexit, os, resource, sys, time
_started = time.time()

def _record():
    try:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        job = getattr(sys.modules.get("__main__"), "snakemake", None)
        if job is not None and hasattr(job, "rule"):
            logs = list(getattr(job, "log", []) or [])
            name = job.rule + (" " + str(logs[0]) if logs else "")
        elif "snakemake" in (sys.argv[0] if sys.argv else ""):
            name = "snakemake"
        else:
            name = " ".join(os.path.basename(arg) for arg in sys.argv[:2]) or "python"
        with open(os.environ["BENCH_WORKFLOW_RECORD"], "a") as out:
            out.write("%.3f\\t%.3f\\t%.3f\\t%s\\n" % (me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime,
                                                  time.time() - _started, name))
    except Exception:
        pass

if os.environ.get("BENCH_WORKFLOW_RECORD"):
    atexit.register(_record)
"""


def _copy_checkout(target: Path, ref: str | None) -> str:
    """Copy the checkout's files (the work tree's, or commit ``ref``'s) into ``target``; return the commit."""
    if ref is not None:
        archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
        return subprocess.run(
            ["git", "rev-parse", "--short", ref], cwd=ROOT, check=True, capture_output=True, text=True
        ).stdout.strip()
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    for name in filter(None, files.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    return commit + ("+dirty" if dirty else "")


def _loads() -> str:
    """The 1, 5 and 15 minute load averages, two decimals each."""
    return " ".join(f"{load:.2f}" for load in os.getloadavg())


def _timed(command: list[str], cwd: Path, log: Path, env: dict) -> tuple[int, float, float, str, str]:
    """(status, wall s, CPU s of the children, load before, load after) of one command."""
    load_before = _loads()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as out:
        status = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env).returncode
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return status, wall, cpu, load_before, _loads()


def job_table(record: Path) -> tuple[list[dict], float]:
    """The jobs' rows (largest CPU first; a job's CPU includes its children's) and Snakemake's own CPU s
    (without its children, the jobs) from the processes' exit records."""
    rows, snakemake_cpu = [], 0.0
    if record.exists():
        for line in record.read_text(encoding="utf-8").splitlines():
            own, children, wall, name = line.split("\t", 3)
            if name == "snakemake":
                snakemake_cpu += float(own)
            else:
                rows.append(
                    {
                        "job": name,
                        "cpu_s": round(float(own) + float(children), 2),
                        "wall_s": round(float(wall), 2),
                    }
                )
    return sorted(rows, key=lambda row: -row["cpu_s"]), snakemake_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--ref",
        action="append",
        default=[],
        help="measure this commit's tree instead of the work tree (repeat to measure several in "
        "one session; 'work' names the work tree)",
    )
    parser.add_argument("--keep", help="run in folders under this (new) folder and keep them")
    args = parser.parse_args()
    runs, jobs = [], []
    for ref in args.ref or ["work"]:
        measured, measured_jobs = _measure(None if ref == "work" else ref, args.cores, args.keep)
        runs += measured
        jobs += measured_jobs
    out = ROOT / "results" / "benchmarks"
    atomic_write_csv(out / "workflow.csv", RUN_COLUMNS, [[row[c] for c in RUN_COLUMNS] for row in runs])
    atomic_write_csv(out / "workflow_jobs.csv", JOB_COLUMNS, [[row[c] for c in JOB_COLUMNS] for row in jobs])
    return max(row["status"] for row in runs)


def _measure(ref: str | None, cores: int, keep: str | None) -> tuple[list[dict], list[dict]]:
    """The two runs' rows and the jobs' rows of one checkout (work tree or commit ``ref``)."""
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="bench-workflow-"))
    work = base / (ref or "work").replace("/", "_")
    work.mkdir(parents=True, exist_ok=False)
    commit = _copy_checkout(work, ref)
    hook = work / ".bench-hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        str(cores),
        "--configfile",
        "config/config.yaml",
        "config/quick.yaml",
    ]
    runs, jobs = [], []
    for name in ("from clean", "no-op rerun"):
        record = work / f".bench-{name.replace(' ', '_')}.tsv"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(hook), str(work / "src")]),
            "BENCH_WORKFLOW_RECORD": str(record),
        }
        status, wall, cpu, load_before, load_after = _timed(
            command, work, work / f"{name.replace(' ', '_')}.log", env
        )
        run_jobs, snakemake_cpu = job_table(record)
        runs.append(
            {
                "run": name,
                "commit": commit,
                "cores": cores,
                "status": status,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "jobs_cpu_s": round(sum(row["cpu_s"] for row in run_jobs), 2),
                "snakemake_cpu_s": round(snakemake_cpu, 2),
                "load_before": load_before,
                "load_after": load_after,
            }
        )
        jobs += [{"run": name, "commit": commit, **row} for row in run_jobs]
        print(
            f"{commit} {name}: status {status}, {wall:.1f} s wall, {cpu:.1f} CPU s (Snakemake {snakemake_cpu:.1f}); "
            f"load {load_before} -> {load_after}"
        )
        for row in run_jobs:
            print(f"  {row['cpu_s']:7.2f} CPU s {row['wall_s']:7.2f} s  {row['job']}")
        if status != 0:
            print(f"the run failed; see {work}", file=sys.stderr)
            break
    if not keep and all(row["status"] == 0 for row in runs):
        shutil.rmtree(base)
    return runs, jobs


if __name__ == "__main__":
    sys.exit(main())
