"""Keep freed memory for the next array: glibc's allocator set for many large, short-lived numpy arrays.

The costly accountants work on arrays of a few megabytes to a few tens of megabytes that live for one
step of a sum (the weak adversary's view over output types: blocks of up to 2^21 count vectors, 16 MiB
per array, a dozen of them at a time). glibc's ``malloc`` gives such blocks back to the kernel as soon
as they are freed: a chunk above its *mmap threshold* is unmapped on ``free``, and free memory at the
top of the heap beyond its *trim threshold* (twice the mmap threshold, which it raises up to 32 MiB as
it sees large blocks freed) is trimmed. The next block is then new memory, and every one of its pages
faults on first touch; where transparent huge pages are on (numpy asks for them for arrays of 4 MiB
and more), each fault zeroes 2 MiB. Measured on a process that runs two evaluations of the weak
adversary over OUE's output types (n = 1000, k = 15, eps0 = 1.03 and 0.98, 4.2 and 4.5 million count
vectors): 63,000 page faults and 0.3 to 3.7 CPU s in the kernel, against 23,000 and 0.1 to 0.5 s with
the settings below (given through ``GLIBC_TUNABLES``), in five runs of each.

:func:`keep_freed_memory` fixes the mmap threshold at its largest accepted value (32 MiB: every smaller
block comes from the heap), raises the trim threshold to 1 GiB and asks the kernel for 64 MiB more
whenever the heap grows, so a process keeps the memory of its largest step until it ends. Only where
memory comes from: no value computed changes. It is called by the processes that compute (the
``shuffle-dp`` command, every workflow job and the warm server that forks them, the test suite's
workers); the library itself never changes the allocator of a program that imports it.
"""

from __future__ import annotations

import os

__all__ = ["MMAP_THRESHOLD", "TOP_PAD", "TRIM_THRESHOLD", "keep_freed_memory", "on_glibc"]

#: largest block served from the heap: glibc's largest accepted mmap threshold on 64-bit systems
MMAP_THRESHOLD = 32 * 2**20
#: free memory kept at the top of the heap before any is given back
TRIM_THRESHOLD = 2**30
#: extra memory asked of the kernel each time the heap grows
TOP_PAD = 64 * 2**20
# mallopt's parameter numbers (glibc's malloc.h)
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3

_DONE: bool | None = None


def keep_freed_memory() -> bool:
    """Set glibc's allocator to keep freed memory for reuse (module docstring); once per process.

    Returns:
        True where glibc accepted the three settings; False for another C library (nothing is changed) or
        where glibc refused one (the settings it accepted stay).
    """
    global _DONE
    if _DONE is None:
        _DONE = _set()
    return _DONE


def on_glibc() -> bool:
    """Whether this process runs on glibc (the only C library whose allocator is set).

    Returns:
        True on glibc, False elsewhere (another C library, or a system without ``confstr``).
    """
    try:
        library = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):  # not a POSIX system, or no such name here
        library = ""
    return library.startswith("glibc")


def _set() -> bool:
    if not on_glibc():
        return False
    import ctypes  # here: the processes that hand their job to the warm server never need it

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    settings = (
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
        (_M_TOP_PAD, TOP_PAD),
    )
    return all(mallopt(parameter, value) == 1 for parameter, value in settings)
