"""Benchmark: composed epsilon of ``worst-case-upper`` (the pair dominating its certified profile) against the
composed ``weak-adversary`` PLD, and the tighter of the two.

Usage::

    python benchmarks/composed_upper.py [--eps0 1.0] [--delta 1e-6] [--timeout 1200] \
        [--out results/benchmarks/composed_upper.csv] [--only K,N,Q ...]

``--only`` runs just the settings named (e.g. ``--only 3,200,1``) and replaces their rows in ``--out``, keeping
every other row of it as it was.

For k = 2, 3, 4; population n = 200, 10^3, 10^4, 10^6; rate q = 1 and 0.01 (q n users sampled each round out
of the population n); T = 1, 10, 100, 1000 rounds: the composed epsilon at ``--delta`` by each of the two
PLDs (:func:`shuffledp.accounting.composition.compose`, default grid), the tighter and which it is, and the
CPU seconds of each (the PLD built once per setting, then composed per T). Each setting runs in its own
process under ``--timeout`` seconds of wall clock; a setting that does not finish writes ``too slow`` rows
(with the time it was given) instead of being dropped.
"""

from __future__ import annotations

import argparse
import csv
import math
import multiprocessing
import queue as queue_module
import time
from pathlib import Path

FIELDS = [
    "k",
    "n",
    "q",
    "per_round",
    "eps0",
    "T",
    "delta",
    "epsilon_weak",
    "epsilon_profile",
    "epsilon_tighter",
    "tighter",
    "cpu_seconds_weak",
    "cpu_seconds_profile",
    "note",
]
KS = (2, 3, 4)
NS = (200, 10**3, 10**4, 10**6)
QS = (1.0, 0.01)
TS = (1, 10, 100, 1000)


def _setting(k: int, n: int, q: float, eps0: float, delta: float, queue) -> None:
    from shuffledp.accounting.composition import compose

    rows = []
    for T in TS:
        values, seconds = {}, {}
        for name in ("weak-adversary", "worst-case-upper"):
            start = time.process_time()
            accountant = compose(name, epsilon_local=eps0, n_users=n, k=k, compositions=T, subsample=q)
            values[name] = accountant.epsilon_for_delta(delta)
            seconds[name] = time.process_time() - start
        tighter = min(values, key=lambda name: (values[name], name != "weak-adversary"))
        rows.append(
            {
                "T": T,
                "epsilon_weak": values["weak-adversary"],
                "epsilon_profile": values["worst-case-upper"],
                "epsilon_tighter": values[tighter],
                "tighter": tighter,
                "cpu_seconds_weak": round(seconds["weak-adversary"], 2),
                "cpu_seconds_profile": round(seconds["worst-case-upper"], 2),
                "note": "",
            }
        )
    queue.put(rows)


def _parse_setting(text: str) -> tuple[int, int, float]:
    """(k, n, q) from "K,N,Q"."""
    parts = text.split(",")
    if len(parts) != 3:
        raise SystemExit(f"--only takes K,N,Q (three comma-separated numbers); got {text!r}")
    return int(parts[0]), int(float(parts[1])), float(parts[2])


def _kept_rows(path: Path, settings) -> list[dict]:
    """The rows of an existing ``path`` whose (k, n, q) is not among ``settings`` (none if it does not exist)."""
    if not path.exists():
        return []
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    return [row for row in rows if (int(row["k"]), int(row["n"]), float(row["q"])) not in set(settings)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--eps0", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--timeout", type=float, default=1200.0)
    parser.add_argument("--ks", type=int, nargs="+", default=list(KS))
    parser.add_argument("--ns", type=int, nargs="+", default=list(NS))
    parser.add_argument("--qs", type=float, nargs="+", default=list(QS))
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/composed_upper.csv"))
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        metavar="K,N,Q",
        help="run only these settings; their rows replace those of --out, the others are kept",
    )
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    settings = [(k, n, q) for k in args.ks for n in args.ns for q in args.qs]
    kept: list[dict] = []
    if args.only is not None:
        settings = [_parse_setting(text) for text in args.only]
        kept = _kept_rows(args.out, settings)
    context = multiprocessing.get_context("spawn")
    with args.out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(kept)
        for k, n, q in settings:
            base = {"k": k, "n": n, "q": q, "per_round": round(q * n), "eps0": args.eps0}
            base["delta"] = args.delta
            queue = context.Queue()
            process = context.Process(target=_setting, args=(k, n, q, args.eps0, args.delta, queue))
            start = time.monotonic()
            process.start()
            rows = None
            try:
                rows = queue.get(timeout=args.timeout)
            except queue_module.Empty:  # the setting did not finish in time
                rows = None
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
            if rows is None:
                rows = [
                    {
                        "T": T,
                        "epsilon_weak": math.nan,
                        "epsilon_profile": math.nan,
                        "epsilon_tighter": math.nan,
                        "tighter": "",
                        "note": f"too slow: not finished in {args.timeout:g} s wall "
                        f"(exit code {process.exitcode})",
                    }
                    for T in TS
                ]
            for row in rows:
                writer.writerow({**base, **row})
            handle.flush()
            print(f"k={k} n={n} q={q}: {time.monotonic() - start:.0f} s wall", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
