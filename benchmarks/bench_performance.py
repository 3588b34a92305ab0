"""Benchmark: every row of the performance goals table in one run, this tree beside an older one and beside the peers.

Rows (what is timed; the goal in brackets; the peer measured in the same run where one does the
same job, and the ratio peer / ours printed beside it):

* ``wang-grid-weak``, ``wang-grid-upper``, ``wang-grid-lower``: Wang et al.'s grid summed
  (performance_peers.py: n in {10^4, 10^5, 10^6} x k in {10, 100} x eps0 in {1, 2, 4}, every eps in
  0.02..1.00 below eps0; ``log_delta_for_epsilon`` of ``weak-adversary`` / ``worst-case-upper`` /
  ``worst-case-lower``, one call per cell, accountant built inside the timed section), CPU seconds
  [>= 10x faster than Wang et al.'s ``Delta`` called as their ``amplificationUB`` calls it, one eps per
  call, summed over the same grid in the same run: the goal in seconds is their time / 10];
* ``weak-50eps``, ``lower-50eps``, ``upper-50eps``: the same accountants at the 50 epsilons 0.02, ...,
  1.00, n = 10^6, k = 10, eps0 = 1, in-process [<= 0.05 s each]; Wang et al.'s 50 ``Delta`` calls beside;
* ``lower-50eps-1e4``: ``worst-case-lower`` at the 50 epsilons, n = 10^4, k = 10, eps0 = 1 [<= 0.5 s];
* ``k2-search-1e6``, ``k2-search-1e8``: ``worst-case-upper`` at k = 2, eps0 = 0.5: epsilon at
  delta = 1e-6 (certified search) at n = 10^6 / 10^8 [10^8: <= 5 s; 10^6: <= 0.5 s]; beside
  Wang et al.'s ``amplificationUB`` (20 bisection steps);
* ``compose-T1000``: ``weak-adversary`` composed T = 1000 times (dp_accounting PLDs) at n = 10^6,
  k = 4, eps0 = log 13: epsilon at delta = 1e-6 [<= 5 s]. This is the goals table's "weak-adversary
  T = 1000, n = 10^6" row: Koskela et al.'s blanket setting (k = 4, gamma = 1/4), the setting of
  bench_compositions.py;
* ``biswas-1e9``, ``cli-weak-50eps``, ``cli-lower-50eps``, ``cli-upper-50eps``: rows kept so that a
  regression of the start-up and of the large-n paths shows (``biswas-exact`` at n = 10^9: epsilon at
  delta = 1e-6 [2 s]; the 50-eps rows through ``python -m shuffledp delta ... --json``, child CPU with imports [0.5 s]);
* opt-in ``workflow`` and ``workflow-noop`` (``--workflow DATA_DIR``): the stand-in workflow from clean
  in a temporary copy of the tree's HEAD (wall [<= 60 s on 2 quiet cores] and CPU [<= 100 s] of
  snakemake and its children), then its no-op rerun [<= 1.5 s];
* opt-in ``ci`` (``--ci``): ``python -m pytest -q -n 2 --dist loadfile`` (the README's command).

Each row runs in a fresh child process (``python bench_performance.py --row NAME``, the grid rows
through performance_peers.py's ``--peer-job``) with ``PYTHONPATH=<tree>/src``, once for the tree under
test ("after", this checkout) and, with ``--before-src DIR`` (the src/ of an older checkout, e.g. from
`git worktree add ../base <commit>`: ../base/src), once for that tree ("before"); a row that exceeds
``--timeout`` seconds is reported as such (its time is then only a lower bound). Reported per row: wall
and CPU seconds of the timed section (child-process CPU for the CLI and workflow rows) and a digest of
the row's output (repr of every float), so that "before" and "after" can be seen to give the same
numbers or not.

Peer: Wang et al.'s public k-RR upper bound (``wangsw/PrivacyAmplification``,
``unifiedamplification.py``; loaded at run time from a checkout, nothing copied, see
bench_peers_krr.py). Pass ``--wang DIR`` (a checkout) or ``--wang-mirror GIT_DIR`` (a bare mirror: its
HEAD is extracted to a temporary directory); without either the peer columns say "peer not available".
Its grid time runs in a child process like ours. Detail grids (performance_peers.py): ``--wang-cells``
(Wang et al. cell by cell beside our three accountants, their value checked against our lower bound),
``--scw DIR`` (Su, Cheng & Wang), ``--koskela DIR`` (Koskela et al.); ``--no-goal-rows`` runs only them.

Writes results/benchmarks/performance.csv (one record per row and tree, and per peer; the grid rows also
per cell) and prints the table: before, after, peer, peer / after. Times are for this machine (2 cores
shared with other jobs): read the ratios measured in the same run, not the seconds.

Run: python benchmarks/bench_performance.py [--before-src DIR] [--rows a,b,...] [--timeout S]
     [--wang DIR | --wang-mirror GIT_DIR] [--wang-cells] [--scw DIR] [--koskela DIR] [--no-goal-rows]
     [--ci] [--workflow DATA_DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
OUTPUT = ROOT / "results" / "benchmarks" / "performance.csv"
EPSILONS = [round(0.02 * i, 10) for i in range(1, 51)]
DELTA = 1e-6
FIFTY = {"n_users": 10**6, "k": 10, "epsilon_local": 1.0}
FIFTY_1E4 = {"n_users": 10**4, "k": 10, "epsilon_local": 1.0}
K2 = {"k": 2, "epsilon_local": 0.5}
BISWAS = {"n_users": 10**9, "k": 10, "epsilon_local": 1.0, "n_x0": 8 * 10**8}
COMPOSE = {"n_users": 10**6, "k": 4, "epsilon_local": math.log(13.0), "compositions": 1000}
PEER = "peer: wang-vldb24"

#: row -> (goal in seconds, what is timed); a grid row's goal is Wang et al.'s time / 10 in the same run (nan here)
ROWS = {
    "wang-grid-weak": (math.nan, "weak-adversary on Wang et al.'s grid (18 cells, eps < eps0), summed"),
    "wang-grid-upper": (math.nan, "worst-case-upper on Wang et al.'s grid (18 cells, eps < eps0), summed"),
    "wang-grid-lower": (math.nan, "worst-case-lower on Wang et al.'s grid (18 cells, eps < eps0), summed"),
    "weak-50eps": (0.05, "weak-adversary, 50 eps, n=1e6 k=10 eps0=1, in-process"),
    "lower-50eps": (0.05, "worst-case-lower, 50 eps, n=1e6 k=10 eps0=1, in-process"),
    "upper-50eps": (0.05, "worst-case-upper, 50 eps, n=1e6 k=10 eps0=1, in-process"),
    "lower-50eps-1e4": (0.5, "worst-case-lower, 50 eps, n=1e4 k=10 eps0=1, in-process"),
    "k2-search-1e6": (0.5, "worst-case-upper k=2 eps0=0.5 n=1e6: eps at delta=1e-6"),
    "k2-search-1e8": (5.0, "worst-case-upper k=2 eps0=0.5 n=1e8: eps at delta=1e-6"),
    "compose-T1000": (
        5.0,
        "weak-adversary T=1000 n=1e6 k=4 eps0=log 13 (Koskela's blanket setting): eps at delta=1e-6",
    ),
    "biswas-1e9": (2.0, "biswas-exact n=1e9 k=10 eps0=1 n_x0=0.8n: eps at delta=1e-6"),
    "cli-weak-50eps": (0.5, "shuffle-dp delta weak-adversary, 50 eps: child CPU"),
    "cli-lower-50eps": (0.5, "shuffle-dp delta worst-case-lower, 50 eps: child CPU"),
    "cli-upper-50eps": (0.5, "shuffle-dp delta worst-case-upper, 50 eps: child CPU"),
    "workflow": (
        60.0,
        "stand-in workflow from clean, --cores 2: wall (goal) and CPU (goal 100 s) (opt-in: --workflow)",
    ),
    "workflow-noop": (1.5, "stand-in workflow, no-op rerun: wall (opt-in: --workflow)"),
    "ci": (420.0, "python -m pytest -q -n 2 --dist loadfile (opt-in: --ci)"),
}
OPT_IN = ("workflow", "workflow-noop", "ci")
GRID_ACCOUNTANTS = {
    "wang-grid-weak": "weak-adversary",
    "wang-grid-upper": "worst-case-upper",
    "wang-grid-lower": "worst-case-lower",
}
CLI_ACCOUNTANTS = {
    "cli-weak-50eps": "weak-adversary",
    "cli-lower-50eps": "worst-case-lower",
    "cli-upper-50eps": "worst-case-upper",
}
IN_PROCESS_ACCOUNTANTS = {
    "weak-50eps": ("weak-adversary", FIFTY),
    "lower-50eps": ("worst-case-lower", FIFTY),
    "upper-50eps": ("worst-case-upper", FIFTY),
    "lower-50eps-1e4": ("worst-case-lower", FIFTY_1E4),
}
K2_USERS = {"k2-search-1e6": 10**6, "k2-search-1e8": 10**8}


def _digest(values) -> str:
    """Short digest of a row's output (repr of each float: equal digests mean equal numbers)."""
    return hashlib.sha256(json.dumps([repr(float(v)) for v in values]).encode()).hexdigest()[:12]


# ----------------------------------------------------------------------------------- child side
def _row_job(name: str):
    """The timed job of an in-process row: returns a function giving the row's output values."""
    from shuffledp.accounting import get_accountant

    if name in IN_PROCESS_ACCOUNTANTS:
        accountant, setting = IN_PROCESS_ACCOUNTANTS[name]
        get_accountant(accountant, n_users=100, k=10, epsilon_local=1.0).log_delta_for_epsilon(
            [0.5]
        )  # imports
        return lambda: list(get_accountant(accountant, **setting).log_delta_for_epsilon(EPSILONS))
    if name in K2_USERS:
        return lambda: [
            get_accountant("worst-case-upper", n_users=K2_USERS[name], **K2).epsilon_for_delta(DELTA)
        ]
    if name == "biswas-1e9":
        return lambda: [get_accountant("biswas-exact", **BISWAS).epsilon_for_delta(DELTA)]
    if name == "compose-T1000":
        from shuffledp.accounting.composition import compose

        return lambda: [compose("weak-adversary", **COMPOSE).epsilon_for_delta(DELTA)]
    raise SystemExit(f"`--row` must be one of the in-process rows; got {name!r}.")


def run_child(name: str) -> None:
    job = _row_job(name)
    start, start_cpu = time.perf_counter(), time.process_time()
    values = job()
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    print(json.dumps({"wall": wall, "cpu": cpu, "digest": _digest(values), "first": repr(float(values[0]))}))


# ---------------------------------------------------------------------------------- parent side
def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv, src: Path, timeout: float, cwd: Path | None = None) -> tuple[dict, str]:
    """Run argv with PYTHONPATH=src; (its JSON line or {}, status)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    start, cpu0 = time.perf_counter(), _children_cpu()
    try:
        done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:  # the child was killed and reaped: its CPU so far is counted
        return {
            "wall": time.perf_counter() - start,
            "cpu": _children_cpu() - cpu0,
        }, f"timeout > {timeout:g} s"
    record = {
        "process_wall": time.perf_counter() - start,
        "process_cpu": _children_cpu() - cpu0,
        "stdout": done.stdout,
    }
    if done.returncode != 0:
        return (
            record,
            f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}",
        )
    return record, "ok"


def _failed(record: dict, status: str) -> dict:
    return {
        "wall": record.get("wall", math.nan),
        "cpu": record.get("cpu", math.nan),
        "digest": "",
        "status": status,
    }


def measure(name: str, src: Path, timeout: float, workflow_data: str | None, wang_dir: str | None) -> dict:
    """One row on the tree ``src``: wall, cpu, digest, status (and, for the grid rows, per-cell seconds)."""
    python = sys.executable
    if name in GRID_ACCOUNTANTS:
        import performance_peers

        result = performance_peers.grid_sum(
            {"kind": "grid-ours", "accountant": GRID_ACCOUNTANTS[name]}, src, timeout
        )
        return {
            "wall": result["wall"],
            "cpu": result["cpu"],
            "digest": _digest(result["values"]) if result["values"] else "",
            "status": result["status"],
            "cells": result.get("cells", []),
        }
    if name in CLI_ACCOUNTANTS:
        argv = [
            python,
            "-m",
            "shuffledp",
            "delta",
            "--accountant",
            CLI_ACCOUNTANTS[name],
            "--eps0",
            "1",
            "--n",
            str(FIFTY["n_users"]),
            "--k",
            str(FIFTY["k"]),
            "--json",
            "--eps",
            *map(str, EPSILONS),
        ]
        record, status = _run(argv, src, timeout)
        if status != "ok":
            return _failed(record, status)
        digest = hashlib.sha256(record["stdout"].encode()).hexdigest()[:12]
        return {
            "wall": record["process_wall"],
            "cpu": record["process_cpu"],
            "digest": digest,
            "status": status,
        }
    if name == "ci":
        command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile"]
        record, status = _run(command, src, timeout, cwd=src.parent)
        return {
            "wall": record.get("process_wall", record.get("wall")),
            "cpu": record.get("process_cpu", math.nan),
            "digest": "",
            "status": status,
        }
    if name in ("workflow", "workflow-noop"):
        return _measure_workflow(src, timeout, workflow_data)[name]
    record, status = _run([python, str(Path(__file__).resolve()), "--row", name], src, timeout)
    if status != "ok":
        return _failed(record, status)
    child = json.loads(record["stdout"].strip().splitlines()[-1])
    return {
        "wall": child["wall"],
        "cpu": child["cpu"],
        "digest": child["digest"],
        "status": status,
        "value": child["first"],
    }


_WORKFLOW: dict = {}


def _measure_workflow(src: Path, timeout: float, data_dir: str | None) -> dict:
    """The quick-profile workflow from clean in a temporary copy of the tree's HEAD, then its no-op rerun (once per
    tree: both rows read the one run)."""
    if src in _WORKFLOW:
        return _WORKFLOW[src]
    if not data_dir:
        missing = {
            "wall": math.nan,
            "cpu": math.nan,
            "digest": "",
            "status": "not run (opt-in: --workflow DATA_DIR)",
        }
        return {"workflow": missing, "workflow-noop": missing}
    tree = src.parent
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    with tempfile.TemporaryDirectory(prefix="bench-workflow-") as work:
        archive = subprocess.run(["git", "-C", str(tree), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", work], input=archive.stdout, check=True)
        argv = [
            snakemake,
            "--cores",
            "2",
            "--configfile",
            "config/config.yaml",
            "config/quick.yaml",
        ]
        first, status = _run(argv, Path(work) / "src", timeout, cwd=Path(work))
        again, status_again = _run(argv, Path(work) / "src", timeout, cwd=Path(work))
    _WORKFLOW[src] = {
        "workflow": {
            "wall": first.get("process_wall", first.get("wall")),
            "cpu": first.get("process_cpu", math.nan),
            "digest": "",
            "status": status,
        },
        "workflow-noop": {
            "wall": again.get("process_wall", again.get("wall")),
            "cpu": again.get("process_cpu", math.nan),
            "digest": "",
            "status": status_again,
        },
    }
    return _WORKFLOW[src]


# ---------------------------------------------------------------------------------------- peer
def _load_wang(arguments) -> str | None:
    """A directory holding Wang et al.'s checkout (extracted from the mirror into a temporary one), or None."""
    if arguments.wang:
        return str(Path(arguments.wang).resolve())
    if arguments.wang_mirror and Path(arguments.wang_mirror).is_dir():
        work = tempfile.mkdtemp(prefix="wang-")
        archive = subprocess.run(
            ["git", f"--git-dir={arguments.wang_mirror}", "archive", "HEAD"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", work], input=archive.stdout, check=True)
        return work
    return None


def peer_rows(wang_dir: str, rows, timeout: float) -> dict:
    """Wang et al.'s timings for the rows where they do the same job: row -> (wall, cpu, note)."""
    import performance_peers
    from bench_peers_krr import load_peer, peer_delta, peer_epsilon

    out = {}
    if any(name in GRID_ACCOUNTANTS for name in rows):
        theirs = performance_peers.grid_sum({"kind": "grid-wang", "dir": wang_dir}, ROOT / "src", timeout)
        note = f"their Delta + tol n, one eps per call, {len(theirs['values'])} calls ({theirs['status']})"
        for name in GRID_ACCOUNTANTS:
            out[name] = (theirs["wall"], theirs["cpu"], note, theirs.get("cells", []))
    peer = load_peer(wang_dir)
    if any(name in IN_PROCESS_ACCOUNTANTS for name in rows):
        for name, (_, setting) in IN_PROCESS_ACCOUNTANTS.items():
            start, cpu = time.perf_counter(), time.process_time()
            values = [
                peer_delta(peer, setting["n_users"], setting["k"], setting["epsilon_local"], e)
                for e in EPSILONS
            ]
            out[name] = (
                time.perf_counter() - start,
                time.process_time() - cpu,
                f"their delta at the 50 eps (delta(0.02) = {values[0]:.3g})",
                [],
            )
    for name, n in K2_USERS.items():
        if name in rows:
            start, cpu = time.perf_counter(), time.process_time()
            epsilon = peer_epsilon(peer, n, 2, K2["epsilon_local"], DELTA, 20)
            out[name] = (
                time.perf_counter() - start,
                time.process_time() - cpu,
                f"their eps = {epsilon:.6g} (20 bisection steps)",
                [],
            )
    return out


def _detail_grids(arguments, wang_dir: str | None) -> list[dict]:
    """The opt-in detail grids (performance_peers.py), each job in a fresh process on this tree."""
    import performance_peers

    src, records = ROOT / "src", []
    for directory, part in (
        (wang_dir if arguments.wang_cells else None, performance_peers.wang_part),
        (arguments.scw, performance_peers.scw_part),
        (arguments.koskela, performance_peers.koskela_part),
    ):
        if directory:
            records += part(str(Path(directory).resolve()), src, arguments.timeout)
    return records


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", help=argparse.SUPPRESS)
    parser.add_argument(
        "--rows",
        default=",".join(name for name in ROWS if name not in OPT_IN),
        help="comma-separated rows (default: all but the opt-in ones)",
    )
    parser.add_argument("--before-src", help="src directory of the older tree ('before' column)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per row and tree")
    parser.add_argument("--wang", help="checkout of wangsw/PrivacyAmplification")
    parser.add_argument("--wang-mirror", help="bare git mirror of wangsw/PrivacyAmplification")
    parser.add_argument(
        "--wang-cells", action="store_true", help="also Wang et al.'s grid cell by cell beside ours"
    )
    parser.add_argument(
        "--scw", help="checkout of Su, Cheng & Wang's Decomposition-Based-Optimal-Bounds-for-Shuffle-DP"
    )
    parser.add_argument("--koskela", help="checkout of DPBayes/numerical-shuffler-experiments")
    parser.add_argument("--no-goal-rows", action="store_true", help="only the detail grids")
    parser.add_argument("--peer-job", help=argparse.SUPPRESS)
    parser.add_argument("--ci", action="store_true", help="also time the test suite (minutes)")
    parser.add_argument(
        "--workflow", metavar="DATA_DIR", help="also time the stand-in workflow and its no-op rerun (minutes)"
    )
    parser.add_argument("--out", default=str(OUTPUT))
    return parser


def _print_row(name: str, by_tree: dict, peer) -> None:
    """One line of the table: before, after, peer and peer / after (CPU seconds where measured)."""

    def seconds(m):
        value = m.get("cpu", math.nan)
        return m.get("wall", math.nan) if not isinstance(value, float) or math.isnan(value) else value

    goal = ROWS[name][0]
    if name in GRID_ACCOUNTANTS and peer is not None:
        goal = peer[1] / 10.0
    cells = [f"{label} {seconds(m):8.3f} s ({m['digest'] or m['status']})" for label, m in by_tree.items()]
    text = f"{name:16s} goal {goal:7.3f} s  " + "  ".join(cells)
    if peer is not None:
        after = seconds(by_tree["after"])
        text += f"  | wang {peer[1]:8.3f} s  wang/after {peer[1] / after if after > 0 else math.inf:6.2f}x"
    print(text, flush=True)


def main(argv=None) -> int:
    parser = _parser()
    arguments = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    if arguments.row:
        run_child(arguments.row)
        return 0
    if arguments.peer_job:
        from performance_peers import run_peer_child

        run_peer_child(arguments.peer_job)
        return 0
    rows = [] if arguments.no_goal_rows else [r for r in arguments.rows.split(",") if r]
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        parser.error(f"`--rows` must name rows among {', '.join(ROWS)}; got {', '.join(unknown)}.")
    for flag, names in ((arguments.ci, ("ci",)), (arguments.workflow, ("workflow", "workflow-noop"))):
        rows += [name for name in names if flag and name not in rows]
    wang_dir = _load_wang(arguments)
    peers = peer_rows(wang_dir, rows, arguments.timeout) if wang_dir and rows else {}
    trees = [("after", ROOT / "src")] + (
        [("before", Path(arguments.before_src).resolve())] if arguments.before_src else []
    )
    import pandas as pd
    import performance_peers

    records = []
    for name in rows:
        goal, what = ROWS[name]
        peer = peers.get(name)
        if name in GRID_ACCOUNTANTS and peer is not None:
            goal = peer[1] / 10.0
        by_tree = {}
        for label, src in trees:
            m = by_tree[label] = measure(name, src, arguments.timeout, arguments.workflow, wang_dir)
            records.append(
                {
                    "row": name,
                    "tree": label,
                    "src": str(src),
                    "goal_seconds": goal,
                    "wall_seconds": m["wall"],
                    "cpu_seconds": m["cpu"],
                    "output_digest": m["digest"],
                    "status": m["status"],
                    "what": what,
                    "peer_over_ours": (peer[1] / m["cpu"]) if peer is not None and m["cpu"] > 0 else math.nan,
                }
            )
            for cell, seconds in zip(performance_peers.WANG_GRID, m.get("cells", [])):
                records.append(
                    {
                        "row": f"{name} n={cell[0]:.0e} k={cell[1]} eps0={cell[2]:g}",
                        "tree": label,
                        "src": str(src),
                        "cpu_seconds": seconds,
                        "status": m["status"],
                        "what": "one cell",
                    }
                )
        if peer is not None:
            records.append(
                {
                    "row": name,
                    "tree": PEER,
                    "src": "",
                    "goal_seconds": goal,
                    "wall_seconds": peer[0],
                    "cpu_seconds": peer[1],
                    "output_digest": "",
                    "status": peer[2],
                    "what": what,
                }
            )
            for cell, seconds in zip(performance_peers.WANG_GRID, peer[3]):
                records.append(
                    {
                        "row": f"{name} n={cell[0]:.0e} k={cell[1]} eps0={cell[2]:g}",
                        "tree": PEER,
                        "cpu_seconds": seconds,
                        "status": "ok",
                        "what": "one cell",
                    }
                )
        elif name in IN_PROCESS_ACCOUNTANTS or name in K2_USERS or name in GRID_ACCOUNTANTS:
            records.append(
                {
                    "row": name,
                    "tree": PEER,
                    "src": "",
                    "goal_seconds": goal,
                    "wall_seconds": math.nan,
                    "cpu_seconds": math.nan,
                    "output_digest": "",
                    "status": "peer not available",
                    "what": what,
                }
            )
        _print_row(name, by_tree, peer)
    records += _detail_grids(arguments, wang_dir)
    if wang_dir and not arguments.wang:
        shutil.rmtree(wang_dir, ignore_errors=True)
    frame = pd.DataFrame.from_records(records)
    frame.insert(0, "load_average_1min", os.getloadavg()[0])
    from shuffledp.io import atomic_write_text

    Path(arguments.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(arguments.out, frame.to_csv(index=False))
    print(f"wrote {arguments.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
