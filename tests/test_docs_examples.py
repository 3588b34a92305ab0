"""Every code example on the documentation site runs in the test suite, or says why not.

Each ```python or ```bash block of a page under docs/ is preceded by a marker line:

* ``<!-- test: run -->``: run here (Python blocks as a script; bash blocks line by line, each line a
  ``shuffle-dp`` command, run by :func:`run_cli` as ``python -m shuffledp`` runs it, which must exit with
  status 0);
* ``<!-- test: tests/PATH.py -->``: run by that test file, which names the page;
* ``<!-- test: none (REASON) -->``: not run, for the stated reason (a template, a command that needs your
  own files, a computation too long for the suite).

Every ``$ shuffle-dp ...`` line of a ```console or ```text block is real output: it is run and what it
prints must equal the lines shown under it.

The ``shuffle-dp`` commands run in this process (:func:`run_cli`: the console script's ``main`` with the
working directory, stdout, stderr and the warning filters of a fresh interpreter), not as one Python process
each (~0.5 CPU s of start-up and imports per command): what is checked is what the command prints and its exit
status. The entry points as processes are tested by tests/test_cli.py and tests/test_packaging.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from golden_tolerance import printed_numbers_match

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", flags=re.S | re.M)
MARKER = re.compile(r"^<!-- test: (run|none \(.+\)|tests/[\w/.-]+\.py) -->$")


def _pages() -> dict[str, str]:
    return {
        str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in sorted(DOCS.rglob("*.md"))
    }


def code_blocks(text: str) -> list[tuple[str, str, str | None]]:
    """(language, code, marker line or None) of every ```python and ```bash block of ``text``."""
    blocks = []
    for match in FENCE.finditer(text):
        language, code = match.group(1), match.group(2)
        if language not in ("python", "bash"):
            continue
        before = [line for line in text[: match.start()].splitlines() if line.strip()]
        blocks.append((language, code, before[-1].strip() if before else None))
    return blocks


def marker_problems(page: str, text: str) -> list[str]:
    """What is wrong with the markers of ``text`` (the page at ``page``): one line per block."""
    problems = []
    for language, code, marker in code_blocks(text):
        first = code.strip().splitlines()[0] if code.strip() else ""
        matched = MARKER.match(marker) if marker is not None else None
        if matched is None:
            problems.append(f"{page}: ```{language} block {first!r} has no test marker (got {marker!r})")
            continue
        kind = matched.group(1)
        if kind.startswith("tests/"):
            test = ROOT / kind
            if not test.is_file():
                problems.append(f"{page}: marker names {kind}, which does not exist")
            elif page not in test.read_text(encoding="utf-8"):
                problems.append(f"{page}: {kind} does not name the page, so it does not run its block")
    return problems


def run_python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
    )


#: the warning filters a fresh interpreter starts with (no -W option, no PYTHONWARNINGS), newest first
FRESH_FILTERS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, ""),
    ("ignore", PendingDeprecationWarning, ""),
    ("ignore", ImportWarning, ""),
    ("ignore", ResourceWarning, ""),
)


def run_cli(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``shuffle-dp ARGV`` as ``python -m shuffledp ARGV`` runs it, in this process: ``shuffledp.cli.main``
    in ``cwd``, its stdout and stderr captured, a warning printed to that stderr under a fresh interpreter's
    filters (not pytest's), an argparse exit taken as the exit status. An exception other than the CLI's
    own one-line errors propagates (the process would print a traceback and exit 1: the test fails either way).
    """
    from shuffledp.cli import main

    out, err = io.StringIO(), io.StringIO()

    def show(message, category, filename, lineno, file=None, line=None):
        err.write(warnings.formatwarning(message, category, filename, lineno, line))

    blas = os.environ.get("OPENBLAS_NUM_THREADS")  # main() sets it for the process it assumes it owns
    with contextlib.ExitStack() as stack:
        stack.enter_context(warnings.catch_warnings())
        warnings.resetwarnings()
        for action, category, module in reversed(FRESH_FILTERS):
            warnings.filterwarnings(action, category=category, module=module)
        warnings.showwarning = show
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            status = main(list(argv))
        except SystemExit as exit_:  # argparse: --help, --version, a bad option
            code = exit_.code
            status = code if isinstance(code, int) else (0 if code is None else 1)
            if isinstance(code, str):
                err.write(code + "\n")
    if blas is None:
        os.environ.pop("OPENBLAS_NUM_THREADS", None)
    else:
        os.environ["OPENBLAS_NUM_THREADS"] = blas
    return subprocess.CompletedProcess(["shuffle-dp", *argv], status, out.getvalue(), err.getvalue())


def run_bash(code: str, cwd: Path) -> list[subprocess.CompletedProcess]:
    results = []
    for line in code.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        words = shlex.split(line)
        assert words[0] == "shuffle-dp", f"a runnable bash block runs shuffle-dp commands only; got {line!r}"
        results.append(run_cli(words[1:], cwd))
    return results


def console_examples(text: str) -> list[tuple[str, str]]:
    """(command, shown output) of every ``$ shuffle-dp`` line in the ```console / ```text blocks of ``text``."""
    examples = []
    for language, block in ((m.group(1), m.group(2)) for m in FENCE.finditer(text)):
        if language not in ("console", "text"):
            continue
        lines = block.rstrip("\n").split("\n")
        starts = [i for i, line in enumerate(lines) if line.startswith("$ ")]
        for position, start in enumerate(starts):
            end = starts[position + 1] if position + 1 < len(starts) else len(lines)
            command = lines[start][2:]
            if command.startswith("shuffle-dp "):
                examples.append((command, "\n".join(lines[start + 1 : end]).strip()))
    return examples


PAGES = _pages()
RUNNABLE = [
    (page, language, code)
    for page, text in PAGES.items()
    for language, code, marker in code_blocks(text)
    if marker == "<!-- test: run -->"
]
CONSOLE = [
    (page, command, shown) for page, text in PAGES.items() for command, shown in console_examples(text)
]


def test_every_code_block_is_marked():
    problems = [problem for page, text in PAGES.items() for problem in marker_problems(page, text)]
    assert not problems, "\n".join(problems)
    assert RUNNABLE and CONSOLE


@pytest.mark.parametrize(
    "page,language,code", RUNNABLE, ids=[f"{page}:{code.splitlines()[0][:40]}" for page, _, code in RUNNABLE]
)
def test_runnable_block_runs(page, language, code, tmp_path):
    if language == "python":
        result = run_python(code, tmp_path)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    else:
        for result in run_bash(code, tmp_path):
            assert result.returncode == 0, result.args + [result.stdout[-2000:], result.stderr[-2000:]]


@pytest.mark.parametrize(
    "page,command,shown", CONSOLE, ids=[f"{page}:{command}" for page, command, _ in CONSOLE]
)
def test_console_example_is_real_output(page, command, shown):
    result = run_cli(shlex.split(command)[1:])
    # numbers within the machine-to-machine budget of tests/golden_tolerance.py, the text exactly
    problem = printed_numbers_match(shown, (result.stdout + result.stderr).strip())
    assert problem is None, problem


PLANTED = """# A page

<!-- test: run -->
```python
print("fine")
```

Text between.

```python
print("unmarked")
```

<!-- test: none -->
```bash
shuffle-dp accountants
```

<!-- test: tests/test_nothing_here.py -->
```bash
shuffle-dp accountants
```

<!-- test: tests/test_docs_examples.py -->
```python
print("named by a test that does not name this page")
```
"""


def test_probe_unmarked_and_badly_marked_blocks_are_found():
    problems = marker_problems("docs/" + "planted.md", PLANTED)
    assert len(problems) == 4, problems
    assert "'print(\"unmarked\")' has no test marker" in problems[0]
    assert "has no test marker (got '<!-- test: none -->')" in problems[1]  # a reason is required
    assert "tests/test_nothing_here.py, which does not exist" in problems[2]
    assert "does not name the page" in problems[3]


def test_probe_a_failing_example_fails(tmp_path):
    assert run_python("raise SystemExit(3)", tmp_path).returncode == 3
    (failed,) = run_bash(
        "shuffle-dp delta --accountant no-such-accountant --eps0 1 --n 10 --k 2 --eps 0.1", tmp_path
    )
    assert failed.returncode != 0
    with pytest.raises(AssertionError, match="shuffle-dp commands only"):
        run_bash("rm -rf results", tmp_path)
    (shown,) = console_examples("```text\n$ shuffle-dp --version\nshuffle-dp 0.0.0\n```\n")
    assert shown == ("shuffle-dp --version", "shuffle-dp 0.0.0")


def test_probe_run_cli_prints_what_the_process_prints(tmp_path, monkeypatch):
    """run_cli gives a command's stdout, stderr and exit status as ``python -m shuffledp`` does (a result, a
    one-line error, an argparse exit), and a warning raised inside a command reaches its stderr as it would in
    a fresh interpreter (a DeprecationWarning outside __main__ does not)."""
    for argv in (
        shlex.split(
            "delta --accountant biswas-printed --eps0 0.49 --n 100 --k 10 --nx0 80 --eps 0.01 0.1 0.4"
        ),
        shlex.split("delta --accountant no-such-accountant --eps0 1 --n 10 --k 2 --eps 0.1"),
        shlex.split("delta --no-such-option"),
    ):
        process = subprocess.run(
            [sys.executable, "-m", "shuffledp", *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        ours = run_cli(argv, tmp_path)
        assert (ours.returncode, ours.stdout, ours.stderr) == (
            process.returncode,
            process.stdout,
            process.stderr,
        ), argv
    import shuffledp.cli

    def warns(argv):
        warnings.warn("probe shown", UserWarning, stacklevel=1)
        warnings.warn("probe hidden", DeprecationWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(shuffledp.cli, "_main", warns)
    warned = run_cli(["accountants"], tmp_path)
    assert "UserWarning: probe shown" in warned.stderr and "probe hidden" not in warned.stderr
