"""shuffledp._bytecode: the package's sources compiled once, where Python itself would cache them, also
under PYTHONDONTWRITEBYTECODE; quietly, and without failing on a file that cannot be compiled."""

from __future__ import annotations

import importlib.util
import struct
import subprocess
import sys
from pathlib import Path

from shuffledp._bytecode import compile_package


def _valid_cache(source: Path) -> bool:
    """Whether the timestamp-checked .pyc that Python would read for ``source`` is there and up to date."""
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.exists():
        return False
    header = cached.read_bytes()[:16]
    flags, mtime, size = struct.unpack("<III", header[4:16])
    stat = source.stat()
    return (
        header[:4] == importlib.util.MAGIC_NUMBER
        and flags == 0
        and (mtime, size)
        == (
            int(stat.st_mtime) & 0xFFFFFFFF,
            stat.st_size & 0xFFFFFFFF,
        )
    )


def _package(root: Path) -> Path:
    folder = root / "toy"
    (folder / "inner").mkdir(parents=True)
    (folder / "__init__.py").write_text("VALUE = 1\n")
    (folder / "inner" / "__init__.py").write_text("")
    (folder / "inner" / "deep.py").write_text("def f():\n    return 2\n")
    return folder


def test_writes_what_python_would_read_even_when_told_not_to(tmp_path, monkeypatch, capsys):
    folder = _package(tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    sources = sorted(folder.rglob("*.py"))
    assert not any(_valid_cache(source) for source in sources)
    assert compile_package(folder) is True
    assert all(_valid_cache(source) for source in sources)
    # an edit within the same second (same modification time, another size) makes it stale, and it is
    # compiled again (compileall would keep it: it checks the time only)
    (folder / "inner" / "deep.py").write_text("def f():\n    return 3  # edited\n")
    assert not _valid_cache(folder / "inner" / "deep.py")
    assert compile_package(folder) is True and _valid_cache(folder / "inner" / "deep.py")
    assert capsys.readouterr() == ("", "")


def test_a_file_that_does_not_compile_is_reported_by_the_result_only(tmp_path, capsys):
    folder = _package(tmp_path)
    (folder / "broken.py").write_text("def f(:\n")
    assert compile_package(folder) is False
    assert _valid_cache(folder / "inner" / "deep.py")  # the others are still compiled
    assert capsys.readouterr() == ("", "")


def test_the_package_itself_is_compiled_and_used_by_a_process_that_writes_nothing(tmp_path):
    import shuffledp

    assert compile_package() is True
    package = Path(shuffledp.__file__).resolve().parent
    assert all(_valid_cache(source) for source in package.rglob("*.py"))
    # the child imports from those caches: importlib reports a source-less compile only when it compiles
    code = (
        "import importlib.machinery, sys\n"
        "compiled = []\n"
        "original = importlib.machinery.SourceFileLoader.source_to_code\n"
        "def spy(self, data, path, *a, **k):\n"
        "    compiled.append(path)\n"
        "    return original(self, data, path, *a, **k)\n"
        "importlib.machinery.SourceFileLoader.source_to_code = spy\n"
        "import shuffledp.accounting, shuffledp.experiments.utility\n"
        "print(sum('shuffledp' in str(p) for p in compiled))\n"
    )
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"
    # the probe: pointed at an empty cache folder, the same child compiles the package's modules itself
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "empty")
    probe = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert probe.returncode == 0 and int(probe.stdout) > 10, probe.stdout + probe.stderr
