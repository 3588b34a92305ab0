"""The peer part of bench_performance.py: ours beside the public tools that do the same job.

Every job runs in a fresh child process (``bench_performance.py --peer-job JSON``) with a time limit,
so one peer's slowness or memory cannot stop the run; the child times only the job itself (imports
and loading excluded; our accountants are built inside the timed section), wall and CPU seconds, and
returns its values so that the table shows what each side computed, not only how fast.

**Wang et al.'s grid, summed (the goals table's first row).** ``wangsw/PrivacyAmplification``,
``unifiedamplification.py``, loaded at run time by bench_peers_krr.load_peer; nothing copied. The grid
is theirs: n in {10^4, 10^5, 10^6} x k in {10, 100} x eps0 in {1, 2, 4}, and at each cell every eps
of 0.02, 0.04, ..., 1.00 below eps0 (49 at eps0 = 1, 50 otherwise). :func:`grid_sum` runs one child
that runs the whole grid for one side and reports each cell's CPU seconds and the sum:

* ours (``grid-ours``): ``get_accountant(name, ...).log_delta_for_epsilon(the cell's eps)`` for one of
  ``weak-adversary``, ``worst-case-upper``, ``worst-case-lower`` (the accountant built inside the timed
  section, one call per cell: all eps in one pass);
* theirs (``grid-wang``): ``Delta(eps, alpha, r0, r1, n, p, tol) + tol n`` once per eps, exactly as
  their ``amplificationUB`` calls it at every bisection step (bench_peers_krr.peer_delta, tol = 1e-19).

The goal is ours >= 10x faster than theirs in the same run (bench_performance.py prints the ratio).

Detail grids (opt-in):

* **Wang et al., cell by cell** (``--wang-cells``): the same grid, each cell of each side in its own
  child, with their value flagged where it is below our certified lower bound (then it is not an
  upper bound on the worst case there).
* **Su, Cheng & Wang** (``Optimal-amplification-bound/Decomposition-Based-Optimal-Bounds-for-Shuffle-DP``,
  on the CPU through benchmarks/peers/cupy_standin; bench_peers_k3plus.load_scw): n in {10^3, 10^4},
  k in {10, 100}, eps0 in {1, 2, 4}. Job: delta at one epsilon, their upper (``FFTbound``) and lower
  (``FFTLowerBound``) beside our ``worst-case-upper`` and ``worst-case-lower``. The epsilon is our
  ``worst-case-upper`` epsilon at delta = 1e-6, so every delta compared is near 1e-6 (their
  ``threshold_delta`` floors deltas at 1e-11). A cell whose FFT would be longer than
  ``SCW_MAX_LENGTH`` complex numbers (memory) is reported as skipped, with the length.
* **Koskela et al.** (``DPBayes/numerical-shuffler-experiments``, blankets_fig4/
  compute_epsilon_bin_weak_tight.py ``get_omega`` / ``get_epsilons``, loaded by
  bench_compositions.load_functions): their weak adversary at their own setting (k = 4, gamma = 1/4,
  nx = 10^7, L = 100) at n = 10^3 and 10^4 where it finishes in the time limit. Job: epsilon at
  delta = 1e-6 (one round), beside our ``weak-adversary``.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EPSILONS = [round(0.02 * i, 10) for i in range(1, 51)]
DELTA = 1e-6
WANG_GRID = [(n, k, e0) for n in (10**4, 10**5, 10**6) for k in (10, 100) for e0 in (1.0, 2.0, 4.0)]


def below(eps0: float) -> list[float]:
    """The grid's epsilons at one cell: every one of 0.02, ..., 1.00 below eps0."""
    return [e for e in EPSILONS if e < eps0]


SCW_GRID = [(n, k, e0) for n in (10**3, 10**4) for k in (10, 100) for e0 in (1.0, 2.0, 4.0)]
SCW_MAX_LENGTH = 1 << 26  # complex128 FFT of 2^26 points: 1 GiB per array; their code holds several
KOSKELA_USERS = (10**3, 10**4)
KOSKELA = {"k": 4, "gamma": 0.25, "nx": 10**7, "L": 100.0}  # their blanket_weak_fa_tight.py setting
OURS_DELTA = ("weak-adversary", "worst-case-upper", "worst-case-lower")
OURS_SCW = ("worst-case-upper", "worst-case-lower")


# ----------------------------------------------------------------------------------- child side
def _prepare(job: dict):
    """(function to time, nothing else): loads what the job needs outside the timed section."""
    sys.path.insert(0, str(HERE))
    kind = job["kind"]
    if kind in ("grid-ours", "grid-wang"):
        return _grid_job(job)
    if kind == "ours-delta":
        from shuffledp.accounting import get_accountant

        return lambda: [
            float(x)
            for x in get_accountant(
                job["accountant"], n_users=job["n"], k=job["k"], epsilon_local=job["eps0"]
            ).log_delta_for_epsilon(job["eps"])
        ]
    if kind == "ours-eps":
        from shuffledp.accounting import get_accountant

        return lambda: [
            get_accountant(
                job["accountant"], n_users=job["n"], k=job["k"], epsilon_local=job["eps0"]
            ).epsilon_for_delta(job["delta"])
        ]
    if kind == "wang-delta":
        from bench_peers_k3plus import _log
        from bench_peers_krr import load_peer, peer_delta

        peer = load_peer(job["dir"])
        return lambda: [_log(peer_delta(peer, job["n"], job["k"], job["eps0"], e)) for e in job["eps"]]
    if kind == "scw-delta":
        from bench_peers_k3plus import _log, load_scw

        bounds, mechanisms = load_scw(job["dir"])
        e, e0, n, k = job["eps"][0], job["eps0"], job["n"], job["k"]
        return lambda: [
            _log(float(bounds.FFTbound(mechanisms.RRMechanism(e0, k)).get_delta(e, e0, n))),
            _log(float(bounds.FFTLowerBound(mechanisms.RRMechanism_lowerbound(e0, k)).get_delta(e, e0, n))),
        ]
    if kind == "koskela-eps":
        from bench_compositions import load_functions, quiet

        weak = load_functions(
            Path(job["dir"]) / "blankets_fig4" / "compute_epsilon_bin_weak_tight.py", "koskela_weak"
        )
        setting = KOSKELA

        def run():
            omega, grid, error = quiet(
                weak["get_omega"], job["n"], setting["gamma"], setting["k"], nx=setting["nx"], L=setting["L"]
            )
            return [
                float(
                    quiet(
                        weak["get_epsilons"],
                        omega,
                        error,
                        grid,
                        setting["L"],
                        setting["nx"],
                        target_delta=job["delta"],
                    )
                )
            ]

        return run
    raise SystemExit(
        f"`--peer-job` kind must be one of grid-ours, grid-wang, ours-delta, ours-eps, wang-delta, scw-delta, koskela-eps; got {kind!r}."
    )


def _grid_job(job: dict):
    """One side of Wang et al.'s grid, every cell timed on its own (CPU seconds); returns a function giving
    (values, per-cell seconds)."""
    if job["kind"] == "grid-wang":
        from bench_peers_k3plus import _log
        from bench_peers_krr import load_peer, peer_delta

        peer = load_peer(job["dir"])

        def cell(n, k, e0):
            return [_log(peer_delta(peer, n, k, e0, e)) for e in below(e0)]
    else:
        from shuffledp.accounting import get_accountant

        get_accountant(job["accountant"], n_users=100, k=10, epsilon_local=1.0).log_delta_for_epsilon(
            [0.5]
        )  # imports

        def cell(n, k, e0):
            return get_accountant(job["accountant"], n_users=n, k=k, epsilon_local=e0).log_delta_for_epsilon(
                below(e0)
            )

    def run():
        values, seconds = [], []
        for n, k, e0 in WANG_GRID:
            start = time.process_time()
            values += [float(v) for v in cell(n, k, e0)]
            seconds.append(time.process_time() - start)
        return values, seconds

    return run


def run_peer_child(spec: str) -> None:
    job = _prepare(json.loads(spec))
    start, start_cpu = time.perf_counter(), time.process_time()
    values = job()
    extra = {}
    if isinstance(values, tuple):  # a grid job: (values, seconds per cell)
        values, extra = values[0], {"cells": values[1]}
    print(
        json.dumps(
            {
                "wall": time.perf_counter() - start,
                "cpu": time.process_time() - start_cpu,
                "values": [repr(float(v)) for v in values],
                **extra,
            }
        )
    )


# ---------------------------------------------------------------------------------- parent side
def _child(job: dict, src: Path, timeout: float) -> dict:
    """One job in a fresh process through bench_performance's runner: its record, or its status."""
    from bench_performance import _run

    argv = [sys.executable, str(HERE / "bench_performance.py"), "--peer-job", json.dumps(job)]
    record, status = _run(argv, src, timeout)
    if status != "ok":
        return {"status": status, "wall": math.nan, "cpu": math.nan, "values": []}
    record = json.loads(record["stdout"].strip().splitlines()[-1])
    record["values"] = [float(v) for v in record["values"]]
    return {"status": "ok", **record}


def grid_sum(side: dict, src: Path, timeout: float) -> dict:
    """One side of Wang et al.'s grid summed, in one child on the tree ``src``: its record (wall, cpu: the
    timed section; cells: CPU seconds per cell; values: every log delta, for the digest)."""
    return _child(side, src, timeout)


def _record(part: str, cell: str, method: str, result: dict, summary: str) -> dict:
    print(
        f"{part:8s} {cell:28s} {method:22s} wall {result['wall']:9.3f} s  cpu {result['cpu']:9.3f} s  "
        f"{summary}  {result['status'] if result['status'] != 'ok' else ''}",
        flush=True,
    )
    return {
        "row": f"peer-{part} {cell}",
        "tree": method,
        "wall_seconds": result["wall"],
        "cpu_seconds": result["cpu"],
        "status": result["status"],
        "value": summary,
    }


def wang_part(wang_dir: str, src: Path, timeout: float) -> list[dict]:
    """Wang et al.'s delta beside ours on their grid, cell by cell (every eps below eps0)."""
    records = []
    for n, k, e0 in WANG_GRID:
        cell = f"n={n:.0e} k={k} eps0={e0:g}"
        base = {"n": n, "k": k, "eps0": e0, "eps": below(e0)}
        ours = {
            name: _child({"kind": "ours-delta", "accountant": name, **base}, src, timeout)
            for name in OURS_DELTA
        }
        theirs = _child({"kind": "wang-delta", "dir": wang_dir, **base}, src, timeout)
        lower = ours["worst-case-lower"]["values"]
        for name, result in ours.items():
            records.append(_record("wang", cell, name, result, _first(result)))
        under = (
            sum(their < low - 1e-9 for their, low in zip(theirs["values"], lower))
            if lower and theirs["values"]
            else math.nan
        )
        records.append(
            _record(
                "wang",
                cell,
                "peer: wang-vldb24 UB",
                theirs,
                f"{_first(theirs)}; below our certified lower at {under} of {len(base['eps'])} eps",
            )
        )
    return records


def scw_part(scw_dir: str, src: Path, timeout: float) -> list[dict]:
    """Su, Cheng & Wang's upper and lower delta at one epsilon beside ours (n = 10^3, 10^4)."""
    sys.path.insert(0, str(HERE))
    from bench_peers_k3plus import load_scw, scw_fft_length

    _, mechanisms = load_scw(scw_dir)
    records = []
    for n, k, e0 in SCW_GRID:
        found = _child(
            {
                "kind": "ours-eps",
                "accountant": "worst-case-upper",
                "n": n,
                "k": k,
                "eps0": e0,
                "delta": DELTA,
            },
            src,
            timeout,
        )
        if not found["values"]:
            records.append(_record("scw", f"n={n:.0e} k={k} eps0={e0:g}", "worst-case-upper eps", found, ""))
            continue
        eps = round(found["values"][0], 6)
        cell = f"n={n:.0e} k={k} eps0={e0:g} eps={eps:g}"
        base = {"n": n, "k": k, "eps0": e0, "eps": [eps]}
        for name in OURS_SCW:
            result = _child({"kind": "ours-delta", "accountant": name, **base}, src, timeout)
            records.append(_record("scw", cell, name, result, _first(result)))
        length = max(scw_fft_length(eps, e0, n, k, mechanisms, lower) for lower in (False, True))
        if length > SCW_MAX_LENGTH:
            skipped = {
                "status": f"skipped: FFT length {length:.3g} > {SCW_MAX_LENGTH:.3g}",
                "wall": math.nan,
                "cpu": math.nan,
                "values": [],
            }
            records.append(_record("scw", cell, "peer: scw upper+lower", skipped, ""))
            continue
        theirs = _child({"kind": "scw-delta", "dir": scw_dir, **base}, src, timeout)
        summary = (
            f"log delta upper {theirs['values'][0]:.6g}, lower {theirs['values'][1]:.6g}"
            if theirs["values"]
            else ""
        )
        records.append(_record("scw", cell, "peer: scw upper+lower", theirs, summary))
    return records


def koskela_part(koskela_dir: str, src: Path, timeout: float) -> list[dict]:
    """Koskela et al.'s weak-adversary epsilon at their setting beside ours, where their code finishes."""
    records = []
    e0 = math.log((KOSKELA["k"] / KOSKELA["gamma"]) - KOSKELA["k"] + 1)  # gamma = k / (e^eps0 + k - 1)
    for n in KOSKELA_USERS:
        cell = f"n={n:.0e} k={KOSKELA['k']} gamma={KOSKELA['gamma']:g}"
        ours = _child(
            {
                "kind": "ours-eps",
                "accountant": "weak-adversary",
                "n": n,
                "k": KOSKELA["k"],
                "eps0": e0,
                "delta": DELTA,
            },
            src,
            timeout,
        )
        records.append(_record("koskela", cell, "weak-adversary eps", ours, _first(ours)))
        theirs = _child({"kind": "koskela-eps", "dir": koskela_dir, "n": n, "delta": DELTA}, src, timeout)
        records.append(_record("koskela", cell, "peer: koskela weak eps", theirs, _first(theirs)))
    return records


def _first(result: dict) -> str:
    return f"first {result['values'][0]:.10g}" if result["values"] else ""
