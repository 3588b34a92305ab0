"""Benchmark: composed PLD accounting (shuffledp.accounting.composition.compose) against Koskela et al.'s own code.

Usage::

    python benchmarks/bench_compositions.py [--koskela-dir DIR | --koskela-mirror GIT_DIR] [--skip-koskela] [--out results/benchmarks/compositions.csv]

Rows (one CSV line each: method, accountant, n, k, eps0, T, delta, epsilon, seconds, note):

1. ours, ``weak-adversary`` at n = 10^6, k = 4, eps0 = log 13 (gamma = 1/4: Koskela et al.'s blanket
   experiment, blankets_fig4/blanket_weak_fa_tight.py lines 10-14), T = 1000 rounds, delta = 1e-6:
   view built and composed (target <= 30 s on 2 cores).
2. Koskela et al.'s weak-adversary code (blankets_fig4/compute_epsilon_bin_weak_tight.py ``get_omega``,
   ``get_epsilons``) at their own parameters n = 1000, k = 4, gamma = 1/4, nx = 10^7, L = 100, with
   T = 1, 4, 16 (composition by the FFT power, as in their blanket_weak_fa_tight.py), beside ours.
   Their code at n = 10^6 is not run: it loops in Python over every (b, i, j) triple, about 8800 x
   (2.5e5)^2 iterations.
3. Koskela et al.'s clones PLD (clones_comparison_fig1/delta_shuffler_fa.py ``get_omega``; nx = 10^7,
   L = 20 as in that script) at n = ``--clones-n`` (default 10^5), eps0 = 4, T = 1 and 1000, beside our
   ``feldman-numerical`` (the 2021 Thm 3.2 pair, C ~ Bin(n - 1, e^-eps0)) and our ``clones-krr`` at
   k = 2, whose C ~ Bin(n - 1, 2 / (e^eps0 + 1)) is the pair their code evaluates.

Koskela's functions are loaded at run time from a checkout (--koskela-dir) or a bare mirror (--koskela-mirror) (their module files, or only the function
definitions of their script files, via ``ast``); nothing of theirs is copied here. Their printing is
silenced. Times are wall-clock seconds on this machine (shared cores: expect noise).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import io
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from shuffledp.accounting.composition import compose

FIELDS = ["method", "accountant", "n", "k", "eps0", "T", "delta", "epsilon", "seconds", "note"]


def koskela_tree(directory: Path | None, mirror: Path | None) -> Path:
    """A checkout of Koskela et al.'s repository (extracted from a bare git ``mirror`` when not given)."""
    if directory is not None:
        return directory
    if mirror is None:
        raise SystemExit(
            "--koskela-dir or --koskela-mirror (or KOSKELA_MIRROR) is required unless --skip-koskela; "
            "got neither."
        )
    target = Path(tempfile.mkdtemp(prefix="koskela-"))
    archive = subprocess.run(
        ["git", f"--git-dir={mirror}", "archive", "HEAD"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def load_functions(path: Path, name: str):
    """Module namespace holding only the imports and function definitions of ``path`` (no script code)."""
    tree = ast.parse(path.read_text())
    tree.body = [
        node
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef))
        and not (isinstance(node, ast.ImportFrom) and node.module and "matplotlib" in node.module)
        and not (isinstance(node, ast.Import) and any("matplotlib" in a.name for a in node.names))
    ]
    namespace = {"__name__": name}
    exec(compile(tree, str(path), "exec"), namespace)
    return namespace


def fft_compose(omega: np.ndarray, T: int) -> np.ndarray:
    """T-fold convolution of a PLD on a symmetric grid by the FFT power (their scripts' composition step)."""
    half = omega.size // 2
    flipped = np.concatenate([omega[half:], omega[:half]])
    composed = np.fft.ifft(np.fft.fft(flipped) ** T)
    return np.concatenate([composed[half:], composed[:half]])


def quiet(function, *args, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*args, **kwargs)


def ours(name, *, n, k, eps0, T, delta, interval=1e-5):
    start = time.perf_counter()
    epsilon = compose(
        name, epsilon_local=eps0, n_users=n, k=k, compositions=T, value_discretization_interval=interval
    ).epsilon_for_delta(delta)
    return epsilon, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--koskela-dir", type=Path, default=None, help="checkout of DPBayes/numerical-shuffler-experiments"
    )
    parser.add_argument(
        "--koskela-mirror",
        type=Path,
        default=os.environ.get("KOSKELA_MIRROR"),
        help="bare git repository of DPBayes/numerical-shuffler-experiments (extracted to a temp dir)",
    )
    parser.add_argument("--skip-koskela", action="store_true", help="only time this package")
    parser.add_argument(
        "--clones-n", type=int, default=10**5, help="n for the clones comparison (their code ~ n)"
    )
    parser.add_argument("--out", type=Path, default=Path("results/benchmarks/compositions.csv"))
    args = parser.parse_args(argv)
    rows = []

    def add(method, accountant, n, k, eps0, T, delta, epsilon, seconds, note=""):
        row = dict(
            method=method,
            accountant=accountant,
            n=n,
            k=k,
            eps0=round(eps0, 6),
            T=T,
            delta=delta,
            epsilon=f"{epsilon:.6g}",
            seconds=f"{seconds:.2f}",
            note=note,
        )
        rows.append(row)
        print("\t".join(str(row[f]) for f in FIELDS), flush=True)

    print("\t".join(FIELDS))
    eps0_blanket = math.log(13.0)  # gamma = k / (e^eps0 + k - 1) = 1/4 at k = 4
    epsilon, seconds = ours("weak-adversary", n=10**6, k=4, eps0=eps0_blanket, T=1000, delta=1e-6)
    add(
        "shuffledp",
        "weak-adversary",
        10**6,
        4,
        eps0_blanket,
        1000,
        1e-6,
        epsilon,
        seconds,
        "view + 1000-fold PLD",
    )

    if not args.skip_koskela:
        tree = koskela_tree(args.koskela_dir, args.koskela_mirror)
        weak = load_functions(tree / "blankets_fig4" / "compute_epsilon_bin_weak_tight.py", "koskela_weak")
        n, k, gamma, nx, L = 1000, 4, 0.25, 10**7, 100.0
        start = time.perf_counter()
        omega, grid, error = quiet(weak["get_omega"], n, gamma, k, nx=nx, L=L)
        build = time.perf_counter() - start
        for T in (1, 4, 16):
            start = time.perf_counter()
            epsilon = quiet(
                weak["get_epsilons"], fft_compose(omega, T), error, grid, L, nx, target_delta=1e-6
            )
            add(
                "koskela",
                "weak adversary (their code)",
                n,
                k,
                eps0_blanket,
                T,
                1e-6,
                epsilon,
                build + time.perf_counter() - start,
                f"PLD build {build:.1f} s; nx = 1e7, L = 100",
            )
            epsilon, seconds = ours("weak-adversary", n=n, k=k, eps0=eps0_blanket, T=T, delta=1e-6)
            add("shuffledp", "weak-adversary", n, k, eps0_blanket, T, 1e-6, epsilon, seconds)
        del omega
        clones = load_functions(tree / "clones_comparison_fig1" / "delta_shuffler_fa.py", "koskela_clones")
        n, eps0, nx, L = args.clones_n, 4.0, 10**7, 20.0
        start = time.perf_counter()
        omega, grid, error = quiet(clones["get_omega"], n, 1, eps0, nx, L)
        build = time.perf_counter() - start
        for T in (1, 1000):
            start = time.perf_counter()
            epsilon = quiet(
                weak["get_epsilons"], fft_compose(omega, T), error, grid, L, nx, target_delta=1e-6
            )
            add(
                "koskela",
                "clones pair (their code)",
                n,
                "-",
                eps0,
                T,
                1e-6,
                epsilon,
                build + time.perf_counter() - start,
                f"PLD build {build:.1f} s; nx = 1e7, L = 20",
            )
            epsilon, seconds = ours("feldman-numerical", n=n, k=2, eps0=eps0, T=T, delta=1e-6)
            add(
                "shuffledp",
                "feldman-numerical",
                n,
                "-",
                eps0,
                T,
                1e-6,
                epsilon,
                seconds,
                "Feldman et al. 2021 Thm 3.2 pair: C ~ Bin(n - 1, e^-eps0)",
            )
            epsilon, seconds = ours("clones-krr", n=n, k=2, eps0=eps0, T=T, delta=1e-6)
            add(
                "shuffledp",
                "clones-krr (k = 2)",
                n,
                2,
                eps0,
                T,
                1e-6,
                epsilon,
                seconds,
                "C ~ Bin(n - 1, 2 / (e^eps0 + 1)): the pair their code uses",
            )

    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
