"""Benchmark: the whole equal-guarantee grid on 2 cores, and its calibrations.

Target: <= 5 minutes on 2 cores for the shipped ``utility.equal_guarantee`` grid. Runs the same jobs as
the workflow (one calibration per (k, n), one utility job per (dataset, n)) in a pool of 2 processes,
without Snakemake's per-job start-up; regions use ``results/data/<region>/cell_counts.csv`` when the
data stage has run, else a skewed stand-in with the same number of cells. Also times the calibration
search against the former bisection at n = 10^6 (the largest n), and summarises the workflow's own
``benchmark:`` files when present. Writes results/benchmarks/equal_guarantee.csv and prints it.

Run: python benchmarks/bench_equal_guarantee.py [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from shuffledp.accounting.calibrate import calibrate_epsilon_local_traced
from shuffledp.experiments import equal_guarantee as E
from shuffledp.io import atomic_write_text

ROOT = Path(__file__).resolve().parents[1]
SEED = 1


def _config() -> dict:
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))


def _cells(config: dict, dataset: str) -> np.ndarray | None:
    if dataset == E.SYNTHETIC:
        return None
    path = ROOT / "results" / "data" / dataset / "cell_counts.csv"
    if path.is_file():
        return pd.read_csv(path).sort_values("cell")["count"].to_numpy()
    rng = np.random.default_rng(0)
    return rng.multinomial(20_000, rng.dirichlet(np.full(E.dataset_k(config, dataset), 0.3)))


def _calibrate(args):
    equal, k, n_users = args
    started = time.perf_counter()
    return E.calibration_job(equal, k=k, n_users=n_users), time.perf_counter() - started


def _utility(args):
    config, dataset, n_users, calibration = args
    started = time.perf_counter()
    counts = E.dataset_counts(
        dataset, n_users, utility=config["utility"], seed=SEED, cell_counts=_cells(config, dataset)
    )
    E.utility_job(
        counts,
        calibration,
        dataset=dataset,
        equal=config["utility"]["equal_guarantee"],
        neighbouring=config["utility"]["neighbouring"],
        seed=SEED,
    )
    return time.perf_counter() - started


def _methods(equal: dict, ks, n_users: int) -> list[dict]:
    rows = []
    for method in ("illinois", "bisection"):
        for accountant in E.ACCOUNTANTS:
            started, evaluations, count = time.perf_counter(), 0, 0
            for k in ks:
                for target in E.targets(equal, n_users):
                    result = calibrate_epsilon_local_traced(
                        accountant,
                        n_users=n_users,
                        k=k,
                        epsilon=target.epsilon,
                        delta=target.delta,
                        method=method,
                    )
                    evaluations, count = evaluations + result.evaluations, count + 1
            rows.append(
                {
                    "case": f"calibration {method}, {accountant}, n = {n_users:,}, k in {sorted(ks)}",
                    "seconds": time.perf_counter() - started,
                    "calibrations": count,
                    "evaluations": evaluations,
                }
            )
    return rows


def _workflow_benchmarks() -> list[dict]:
    folder = ROOT / "results" / "benchmarks" / "utility"
    rows = []
    for kind, pattern in (
        ("calibration", "equal_guarantee_calibration_*.tsv"),
        ("utility", "equal_guarantee_[!c]*.tsv"),
    ):
        files = sorted(folder.glob(pattern))
        if files:
            seconds = sum(float(pd.read_csv(f, sep="\t")["s"].iloc[-1]) for f in files)
            rows.append(
                {
                    "case": f"workflow {kind} jobs (sum of {len(files)} benchmark files, with start-up)",
                    "seconds": seconds,
                    "calibrations": math.nan,
                    "evaluations": math.nan,
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    workers = parser.parse_args().workers
    config = _config()
    equal = config["utility"]["equal_guarantee"]
    ks = {dataset: E.dataset_k(config, dataset) for dataset in equal["datasets"]}
    rows = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        keys = sorted({(k, n) for k in ks.values() for n in equal["n_users"]}, key=lambda key: -key[1])
        calibrations = dict(zip(keys, pool.map(_calibrate, [(equal, k, n) for k, n in keys])))
        calibrated = time.perf_counter()
        jobs = [
            (config, dataset, n, calibrations[(ks[dataset], n)][0])
            for dataset in ks
            for n in equal["n_users"]
        ]
        job_seconds = list(pool.map(_utility, jobs))
    finished = time.perf_counter()
    frames = [frame for frame, _ in calibrations.values()]
    everything = pd.concat(frames, ignore_index=True)
    rows.append(
        {
            "case": f"whole grid on {workers} processes: calibrations + utility jobs",
            "seconds": finished - started,
            "calibrations": len(everything),
            "evaluations": int(everything["evaluations"].sum()),
        }
    )
    rows.append(
        {
            "case": f"  calibration phase ({len(keys)} jobs)",
            "seconds": calibrated - started,
            "calibrations": len(everything),
            "evaluations": int(everything["evaluations"].sum()),
        }
    )
    rows.append(
        {
            "case": f"  utility phase ({len(jobs)} jobs, {equal['replicates']} replicates)",
            "seconds": finished - calibrated,
            "calibrations": math.nan,
            "evaluations": math.nan,
        }
    )
    for accountant, group in everything.groupby("accountant"):
        rows.append(
            {
                "case": f"  calibration CPU, {accountant} (max per calibration {group['seconds'].max():.2f} s)",
                "seconds": group["seconds"].sum(),
                "calibrations": len(group),
                "evaluations": int(group["evaluations"].sum()),
            }
        )
    rows.append(
        {
            "case": "  utility CPU (sum over jobs)",
            "seconds": sum(job_seconds),
            "calibrations": math.nan,
            "evaluations": math.nan,
        }
    )
    rows += _methods(equal, sorted(set(ks.values())), max(equal["n_users"]))
    rows += _workflow_benchmarks()
    table = pd.DataFrame(rows)
    table["target_seconds"] = [300.0] + [math.nan] * (len(table) - 1)
    atomic_write_text(ROOT / "results" / "benchmarks" / "equal_guarantee.csv", table.to_csv(index=False))
    with pd.option_context("display.max_colwidth", 90, "display.width", 200):
        print(table.to_string(index=False))


if __name__ == "__main__":
    main()
