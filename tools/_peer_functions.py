"""Load the *function definitions* of one of Koskela, Heikkilä & Honkela's experiment scripts.

Their scripts (``DPBayes/numerical-shuffler-experiments``) run their whole experiment at import time.
:func:`load_functions` parses the file and executes only its ``def`` statements (and its imports of
numpy / scipy / math) in a fresh namespace, so that each of their functions can be called on its own.
Nothing of their code is copied into this project: the functions are read from the checkout at run
time. Used by ``tools/verify_koskela_fig1_rdp.py`` and ``tools/verify_koskela_fig2_pld.py``.
"""

from __future__ import annotations

import ast
import contextlib
import io
import math
from pathlib import Path

import numpy as np
import scipy
import scipy.special

PEER_COMMIT = "75068f330d06f6abb3f2554944880237d6a63784"


def load_functions(path: Path) -> dict:
    """Namespace holding the functions defined at the top level of the script ``path``."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    tree.body = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    namespace = {"np": np, "scipy": scipy, "math": math, "__name__": "peer"}
    exec(compile(tree, str(path), "exec"), namespace)
    return namespace


def quiet(function, *args, **kwargs):
    """Call ``function`` with its (many) prints swallowed."""
    with contextlib.redirect_stdout(io.StringIO()):
        return function(*args, **kwargs)
