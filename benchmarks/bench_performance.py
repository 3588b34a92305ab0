"""Benchmark: every row of issue 24's goals table in one run, before / after, beside Wang et al.'s accountant.

Rows (what is timed; the goal of issue 24 in brackets):

* ``weak-50eps``, ``lower-50eps``, ``upper-50eps``: ``log_delta_for_epsilon`` of ``weak-adversary``,
  ``worst-case-lower``, ``worst-case-upper`` at the 50 epsilons 0.02, 0.04, ..., 1.00, n = 10^6,
  k = 10, eps0 = 1, in-process, accountant built inside the timed section [<= 0.1 s each];
* ``cli-weak-50eps``, ``cli-lower-50eps``, ``cli-upper-50eps``: the same through
  ``python -m shuffledp delta ... --json``, CPU seconds of the child process (imports included) [<= 0.5 s];
* ``k2-search-1e6``, ``k2-search-1e8``: ``worst-case-upper`` at k = 2, eps0 = 0.5: epsilon at
  delta = 1e-6 (certified search) at n = 10^6 / 10^8 [<= 0.5 s / <= 5 s];
* ``biswas-1e9``: ``biswas-exact`` at n = 10^9, k = 10, eps0 = 1, n_x0 = 0.8 n: epsilon at
  delta = 1e-6 [<= 2 s];
* ``compose-T1000``: ``weak-adversary`` composed T = 1000 times (dp_accounting PLDs) at n = 10^6, k = 4,
  eps0 = log 13 (Koskela et al.'s blanket setting, as in bench_compositions.py): epsilon at delta = 1e-6
  [<= 5 s];
* ``ci`` (opt-in, ``--ci``): ``python -m pytest -q -n 2 --dist loadfile`` of the tree (the README's
  command) [<= 7 min];
* ``workflow`` (opt-in, ``--workflow DATA_DIR``): the stand-in workflow from clean in a temporary copy of
  the tree, then its no-op rerun [a minute].

Each row runs in a fresh child process ``python bench_performance.py --row NAME`` with
``PYTHONPATH=<tree>/src``, once for the tree under test ("after", this checkout) and, with
``--before-src DIR`` (the src/ of an older checkout, e.g. from `git worktree add ../base <commit>`: ../base/src), once for that tree ("before"); a row that
exceeds ``--timeout`` seconds is reported as such (its time is then only a lower bound). Reported per
row: wall and CPU seconds of the timed section (child-process CPU for the CLI rows), and a digest of
the row's output, so that "before" and "after" can be seen to give the same numbers.

Peer (same job only): Wang et al.'s public k-RR upper bound (``wangsw/PrivacyAmplification``,
``unifiedamplification.py``; loaded at run time from a checkout, nothing copied, see
bench_peers_krr.py): their delta at the same 50 epsilons (beside the three 50-eps rows) and their
epsilon at delta = 1e-6 with k = 2 (beside the k = 2 searches; 20 bisection steps). Pass
``--wang DIR`` (a checkout) or ``--wang-mirror GIT_DIR`` (a bare mirror: its HEAD is extracted to a
temporary directory); without either the peer rows say "peer not available".

Peers on the issue's own grids (benchmarks/performance_peers.py; each job in a fresh child process with
the ``--timeout``): Wang et al. (n in {10^4, 10^5, 10^6} x k in {10, 100} x eps0 in {1, 2, 4}, delta at
the 50 epsilons, beside our three accountants) with ``--wang``/``--wang-mirror``; Su, Cheng & Wang
(n in {10^3, 10^4}, delta at one epsilon) with ``--scw DIR``; Koskela et al.'s weak adversary (their
setting, n = 10^3 and 10^4, where it finishes) with ``--koskela DIR``. ``--no-goal-rows`` runs only
the peers.

Writes results/benchmarks/performance.csv (goal rows and peer rows) and prints the table. Times are for
this machine (2 shared cores): read the before / after ratios, not the seconds.

Run: python benchmarks/bench_performance.py [--before-src DIR] [--rows a,b,...] [--timeout S]
     [--wang DIR | --wang-mirror GIT_DIR] [--scw DIR] [--koskela DIR] [--no-goal-rows] [--ci]
     [--workflow DATA_DIR]
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
OUTPUT = ROOT / "results" / "benchmarks" / "performance.csv"
EPSILONS = [round(0.02 * i, 10) for i in range(1, 51)]
DELTA = 1e-6
FIFTY = {"n_users": 10**6, "k": 10, "epsilon_local": 1.0}
K2 = {"k": 2, "epsilon_local": 0.5}
BISWAS = {"n_users": 10**9, "k": 10, "epsilon_local": 1.0, "n_x0": 8 * 10**8}
COMPOSE = {"n_users": 10**6, "k": 4, "epsilon_local": math.log(13.0), "compositions": 1000}

#: row -> (goal in seconds, what is timed)
ROWS = {
    "weak-50eps": (0.1, "weak-adversary, 50 eps, n=1e6 k=10 eps0=1, in-process"),
    "lower-50eps": (0.1, "worst-case-lower, 50 eps, n=1e6 k=10 eps0=1, in-process"),
    "upper-50eps": (0.1, "worst-case-upper, 50 eps, n=1e6 k=10 eps0=1, in-process"),
    "cli-weak-50eps": (0.5, "shuffle-dp delta weak-adversary, 50 eps: child CPU"),
    "cli-lower-50eps": (0.5, "shuffle-dp delta worst-case-lower, 50 eps: child CPU"),
    "cli-upper-50eps": (0.5, "shuffle-dp delta worst-case-upper, 50 eps: child CPU"),
    "k2-search-1e6": (0.5, "worst-case-upper k=2 eps0=0.5 n=1e6: eps at delta=1e-6"),
    "k2-search-1e8": (5.0, "worst-case-upper k=2 eps0=0.5 n=1e8: eps at delta=1e-6"),
    "biswas-1e9": (2.0, "biswas-exact n=1e9 k=10 eps0=1 n_x0=0.8n: eps at delta=1e-6"),
    "compose-T1000": (5.0, "weak-adversary T=1000 n=1e6 k=4 eps0=log 13: eps at delta=1e-6"),
    "ci": (420.0, "python -m pytest -q -n 2 --dist loadfile (opt-in: --ci)"),
    "workflow": (60.0, "stand-in workflow from clean; no-op rerun in the note (opt-in: --workflow)"),
}
CLI_ACCOUNTANTS = {"cli-weak-50eps": "weak-adversary", "cli-lower-50eps": "worst-case-lower",
                   "cli-upper-50eps": "worst-case-upper"}
IN_PROCESS_ACCOUNTANTS = {"weak-50eps": "weak-adversary", "lower-50eps": "worst-case-lower",
                          "upper-50eps": "worst-case-upper"}


def _digest(values) -> str:
    """Short digest of a row's output (repr of each float: equal digests mean equal numbers)."""
    return hashlib.sha256(json.dumps([repr(float(v)) for v in values]).encode()).hexdigest()[:12]


# ----------------------------------------------------------------------------------- child side
def _row_job(name: str):
    """The timed job of an in-process row: returns a function giving the row's output values."""
    from shuffledp.accounting import get_accountant

    if name in IN_PROCESS_ACCOUNTANTS:
        return lambda: list(get_accountant(IN_PROCESS_ACCOUNTANTS[name], **FIFTY).log_delta_for_epsilon(EPSILONS))
    if name.startswith("k2-search-"):
        n = 10**6 if name.endswith("1e6") else 10**8
        return lambda: [get_accountant("worst-case-upper", n_users=n, **K2).epsilon_for_delta(DELTA)]
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
        return {"wall": time.perf_counter() - start, "cpu": _children_cpu() - cpu0}, f"timeout > {timeout:g} s"
    record = {"process_wall": time.perf_counter() - start, "process_cpu": _children_cpu() - cpu0,
              "stdout": done.stdout}
    if done.returncode != 0:
        return record, f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}"
    return record, "ok"


def measure(name: str, src: Path, timeout: float, workflow_data: str | None) -> dict:
    python = sys.executable
    if name in CLI_ACCOUNTANTS:
        argv = [python, "-m", "shuffledp", "delta", "--accountant", CLI_ACCOUNTANTS[name], "--eps0", "1",
                "--n", str(FIFTY["n_users"]), "--k", str(FIFTY["k"]), "--json", "--eps", *map(str, EPSILONS)]
        record, status = _run(argv, src, timeout)
        if status != "ok":
            return {"wall": record.get("wall", math.nan), "cpu": record.get("cpu", math.nan), "digest": "", "status": status}
        digest = hashlib.sha256(record["stdout"].encode()).hexdigest()[:12]
        return {"wall": record["process_wall"], "cpu": record["process_cpu"], "digest": digest, "status": status}
    if name == "ci":
        tree = src.parent
        command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile"]
        record, status = _run(command, src, timeout, cwd=tree)
        return {"wall": record.get("process_wall", record.get("wall")), "cpu": record.get("process_cpu", math.nan),
                "digest": "", "status": status}
    if name == "workflow":
        return _measure_workflow(src, timeout, workflow_data)
    record, status = _run([python, str(Path(__file__).resolve()), "--row", name], src, timeout)
    if status != "ok":
        return {"wall": record.get("wall", math.nan), "cpu": record.get("cpu", math.nan), "digest": "", "status": status}
    child = json.loads(record["stdout"].strip().splitlines()[-1])
    return {"wall": child["wall"], "cpu": child["cpu"], "digest": child["digest"], "status": status,
            "value": child["first"]}


def _measure_workflow(src: Path, timeout: float, data_dir: str | None) -> dict:
    """The stand-in workflow from clean in a temporary copy of the tree's HEAD, then its no-op rerun."""
    if not data_dir:
        return {"wall": math.nan, "cpu": math.nan, "digest": "", "status": "not run (opt-in: --workflow DATA_DIR)"}
    tree = src.parent
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent)) or "snakemake"
    with tempfile.TemporaryDirectory(prefix="bench-workflow-") as work:
        archive = subprocess.run(["git", "-C", str(tree), "archive", "HEAD"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", work], input=archive.stdout, check=True)
        argv = [snakemake, "--cores", "2", "--configfile", "config/config.yaml", "config/standins.yaml",
                "--config", f"local_data_dir={Path(data_dir).resolve()}"]
        first, status = _run(argv, Path(work) / "src", timeout, cwd=Path(work))
        again, status_again = _run(argv, Path(work) / "src", timeout, cwd=Path(work))
    return {"wall": first.get("process_wall", first.get("wall")), "cpu": first.get("process_cpu", math.nan),
            "digest": "", "status": f"{status}; no-op rerun {again.get('process_wall', math.nan):.1f} s ({status_again})"}


# ---------------------------------------------------------------------------------------- peer
def _load_wang(arguments):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_peers_krr import load_peer

    if arguments.wang:
        return load_peer(arguments.wang), None
    if arguments.wang_mirror and Path(arguments.wang_mirror).is_dir():
        work = tempfile.mkdtemp(prefix="wang-")
        archive = subprocess.run(["git", f"--git-dir={arguments.wang_mirror}", "archive", "HEAD"],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", work], input=archive.stdout, check=True)
        return load_peer(work), work
    return None, None


def peer_rows(peer, rows) -> dict:
    """Wang et al.'s timings for the rows where they do the same job (delta at 50 eps; eps at delta, k = 2)."""
    from bench_peers_krr import peer_delta, peer_epsilon

    out = {}
    start = time.perf_counter()
    values = [peer_delta(peer, FIFTY["n_users"], FIFTY["k"], FIFTY["epsilon_local"], e) for e in EPSILONS]
    elapsed = time.perf_counter() - start
    for name in list(IN_PROCESS_ACCOUNTANTS):
        out[name] = (elapsed, f"their delta at the 50 eps (delta(0.02) = {values[0]:.3g})")
    for name, n in (("k2-search-1e6", 10**6), ("k2-search-1e8", 10**8)):
        if name not in rows:
            continue
        start = time.perf_counter()
        epsilon = peer_epsilon(peer, n, 2, K2["epsilon_local"], DELTA, 20)
        out[name] = (time.perf_counter() - start, f"their eps = {epsilon:.6g} (20 bisection steps)")
    return out


def _peer_grids(arguments, wang_dir: str | None) -> list[dict]:
    """The issue's peer grids (performance_peers.py), each job in a fresh process on this tree."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import performance_peers

    src, records = ROOT / "src", []
    wang = arguments.wang or wang_dir
    for directory, part in ((wang, performance_peers.wang_part), (arguments.scw, performance_peers.scw_part),
                            (arguments.koskela, performance_peers.koskela_part)):
        if directory:
            records += part(str(Path(directory).resolve()), src, arguments.timeout)
    return records


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--row", help=argparse.SUPPRESS)
    parser.add_argument("--rows", default=",".join(name for name in ROWS if name not in ("ci", "workflow")),
                        help="comma-separated rows (default: all but ci and workflow)")
    parser.add_argument("--before-src", help="src directory of the older tree ('before' column)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per row and tree")
    parser.add_argument("--wang", help="checkout of wangsw/PrivacyAmplification")
    parser.add_argument("--wang-mirror", help="bare git mirror of wangsw/PrivacyAmplification")
    parser.add_argument("--scw", help="checkout of Su, Cheng & Wang's Decomposition-Based-Optimal-Bounds-for-Shuffle-DP")
    parser.add_argument("--koskela", help="checkout of DPBayes/numerical-shuffler-experiments")
    parser.add_argument("--no-goal-rows", action="store_true", help="only the peer grids")
    parser.add_argument("--peer-job", help=argparse.SUPPRESS)
    parser.add_argument("--ci", action="store_true", help="also time the test suite (minutes)")
    parser.add_argument("--workflow", metavar="DATA_DIR", help="also time the stand-in workflow (minutes)")
    parser.add_argument("--out", default=str(OUTPUT))
    arguments = parser.parse_args(argv)
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
    if arguments.ci and "ci" not in rows:
        rows.append("ci")
    if arguments.workflow and "workflow" not in rows:
        rows.append("workflow")
    peer, peer_dir = _load_wang(arguments)
    peers = peer_rows(peer, rows) if peer is not None and rows else {}
    trees = [("after", ROOT / "src")] + ([("before", Path(arguments.before_src).resolve())] if arguments.before_src else [])
    import pandas as pd

    records = []
    for name in rows:
        goal, what = ROWS[name]
        for label, src in trees:
            m = measure(name, src, arguments.timeout, arguments.workflow)
            records.append({"row": name, "tree": label, "src": str(src), "goal_seconds": goal, "wall_seconds": m["wall"],
                            "cpu_seconds": m["cpu"], "output_digest": m["digest"], "status": m["status"], "what": what})
            print(f"{name:16s} {label:6s} wall {m['wall']:9.3f} s  cpu {m['cpu']:9.3f} s  {m['digest']:12s}  {m['status']}",
                  flush=True)
        if name in peers:
            seconds, note = peers[name]
            records.append({"row": name, "tree": "peer: wang-vldb24", "src": "", "goal_seconds": goal,
                            "wall_seconds": seconds, "cpu_seconds": math.nan, "output_digest": "", "status": note,
                            "what": what})
            print(f"{name:16s} wang   wall {seconds:9.3f} s  {note}", flush=True)
        elif name in IN_PROCESS_ACCOUNTANTS or name.startswith("k2-search"):
            records.append({"row": name, "tree": "peer: wang-vldb24", "src": "", "goal_seconds": goal,
                            "wall_seconds": math.nan, "cpu_seconds": math.nan, "output_digest": "",
                            "status": "peer not available", "what": what})
            print(f"{name:16s} wang   peer not available", flush=True)
    records += _peer_grids(arguments, peer_dir)
    if peer_dir:
        shutil.rmtree(peer_dir, ignore_errors=True)
    frame = pd.DataFrame.from_records(records)
    frame.insert(0, "load_average_1min", os.getloadavg()[0])
    from shuffledp.io import atomic_write_text

    Path(arguments.out).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(arguments.out, frame.to_csv(index=False))
    print(f"wrote {arguments.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
