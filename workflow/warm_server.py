"""The workflow's warm server: ``python warm_server.py ADDRESS PIPE MODULE...``, started by ``onstart``.

It imports every module the job scripts import at their top (the names are ``shuffledp._warm.script_imports``
of the scripts), then serves the run's jobs: each one a fork of this interpreter (``shuffledp._warm``;
docs/decisions/workflow.md, "Jobs forked from a warm interpreter"). A module that fails to import here is
left to the jobs that import it, which then fail, or not, exactly as they would without the server.
"""

import contextlib
import importlib
import sys

from shuffledp._allocator import keep_freed_memory
from shuffledp._warm import serve


def warm_up(modules: list[str]) -> None:
    """Import each module. A name that is a function or a class of its package (``from package import
    name``) fails after its package is imported, which is all the server needs of it.

    Args:
        modules: dotted names.
    """
    for name in modules:
        with contextlib.suppress(Exception):  # the job that imports it meets the same failure itself
            importlib.import_module(name)


if __name__ == "__main__":
    address, pipe, *names = sys.argv[1:]
    keep_freed_memory()  # every fork inherits it (shuffledp._allocator)
    warm_up(names)
    serve(address, int(pipe))
