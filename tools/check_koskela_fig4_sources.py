"""Check whether the parameters or plotted numbers of Koskela, Heikkilä & Honkela's Figure 4 (Section 5,
shuffled Gaussian noise, Monte Carlo hockey-stick integral) are available, and say where they are not.

Two sources are searched:

* the authors' public code: every file of every commit of a bare clone (or mirror) of
  ``DPBayes/numerical-shuffler-experiments`` (``git log --all``), for a script or stored curve that
  mentions Gaussian noise, Monte Carlo, or a hockey-stick integral in d dimensions;
* the paper's plain text (``../shared/papers/000_*.txt`` beside the repository, or ``--papers``): the Section 5 sentence that names Fig. 4,
  printed so its missing numbers (stripped formulas) are visible.

Nothing is transcribed when nothing is found (there is then no ``koskela_figures.csv`` row for Fig. 4);
the result is recorded in docs/koskela-figures.md ("Fig. 4").

    python tools/check_koskela_fig4_sources.py <bare clone of DPBayes/numerical-shuffler-experiments>
"""

from __future__ import annotations

import argparse
import glob
import re
import subprocess
from pathlib import Path

PATTERN = re.compile(r"gauss|monte|carlo|hockey|np\.random\.normal|randn", re.IGNORECASE)


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "repo", type=Path, help="bare git directory of DPBayes/numerical-shuffler-experiments"
    )
    parser.add_argument(
        "--papers", default=str(Path(__file__).resolve().parents[2] / "shared" / "papers" / "000_*.txt")
    )
    args = parser.parse_args()
    commits = _git(args.repo, "rev-list", "--all").split()
    print(f"{len(commits)} commits: {' '.join(c[:7] for c in commits)}")
    hits = 0
    for commit in commits:
        for path in _git(args.repo, "ls-tree", "-r", "--name-only", commit).split("\n"):
            if not path.endswith(".py"):
                continue
            text = _git(args.repo, "show", f"{commit}:{path}")
            lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if PATTERN.search(line)]
            if lines:
                hits += 1
                print(f"{commit[:7]} {path}: " + "; ".join(f"line {n}: {line}" for n, line in lines))
    print(f"{hits} script versions mention any of {PATTERN.pattern!r}")
    for name in glob.glob(args.papers):
        for line in Path(name).read_text(encoding="utf-8").splitlines():
            if "Figure 4" in line and "Monte Carlo" in line:
                sentence = line[line.index("In Figure 4") :] if "In Figure 4" in line else line
                print(f"{Path(name).name}: {sentence}")


if __name__ == "__main__":
    main()
