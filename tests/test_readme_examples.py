"""The README's command examples marked as real output are real output.

Every ``$ shuffle-dp ...`` line in a ```console or ```text block of README.md is run (as
``python -m shuffledp ...``) and its stdout and stderr, stripped, must be the lines the README shows
under it: the text character for character (runs of spaces as one), each number within the budget of
tests/golden_tolerance.py -- a number the README shows rounded to d significant digits matches an output
that rounds to it, one shown in full matches within the tolerance its machine-to-machine budget allows (the
same output differs in its last digits on a CPU without AVX-512). A number that moves beyond that (an
accountant made tighter, a message reworded) fails here until the README shows the new output. Found stale
by hand at one stop (a lower bound that had risen twice, an error message reworded); this test keeps them
honest.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from golden_tolerance import printed_numbers_match

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _examples():
    for block in re.findall(r"```(?:console|text)\n(.*?)```", README, flags=re.S):
        lines = block.rstrip("\n").split("\n")
        starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
        for position, start in enumerate(starts):
            end = starts[position + 1] if position + 1 < len(starts) else len(lines)
            command = lines[start][2:]
            if command.startswith("shuffle-dp "):
                yield command, "\n".join(lines[start + 1 : end]).strip()


EXAMPLES = list(_examples())


def test_the_readme_has_examples():
    assert len(EXAMPLES) >= 1  # the others moved to the guide (tests/test_docs_examples.py)


@pytest.mark.parametrize("command,shown", EXAMPLES, ids=[command for command, _ in EXAMPLES])
def test_example_output_is_real(command, shown):
    arguments = shlex.split(command)[1:]
    result = subprocess.run(
        [sys.executable, "-m", "shuffledp", *arguments], capture_output=True, text=True, timeout=300
    )
    problem = printed_numbers_match(shown, (result.stdout + result.stderr).strip())
    assert problem is None, problem
