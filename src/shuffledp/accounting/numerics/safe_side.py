"""Safe-side rounding of every accountant's delta: one place, so that certified bounds never cross.

A certified pair of bounds must never cross, whatever the rounding. Each accountant declares a bound on the
relative rounding error of its delta (``Accountant.relative_rounding``; measured against 50-digit values,
tests/accounting/test_safe_side.py), and :func:`widen` moves each value outward by that bound plus the
representation error of the log itself: an UPPER bound up, a LOWER bound down, and an EXACT value (one
dataset's delta, which every caller uses as a lower bound on the worst case) down too. AS_PRINTED and RATE
values claim no bound and are returned as they are. The widening in log delta is

    log1p(relative) + LOG_ULPS * 2^-52 * |log delta|,

so a value whose rounding error is at most ``relative`` (relative, in delta) lands on its own safe side of
the exact value. -inf (delta = 0, exact wherever an accountant returns it) and +-0 stay; an upper bound is
still capped at log delta = 0 (delta <= 1 holds for every pair of distributions).

The same code rounds differently on different CPUs: numpy evaluates exp, log, log1p and expm1 with SVML where
the CPU has AVX-512 and with libm elsewhere (docs/decisions/numerics.md). Both paths are documented to 1 ulp a
call (glibc's manual for x86_64; numpy's accuracy tables), budgeted at 4. The widening is held to 50-digit
values on both paths (tests/accounting/test_safe_side.py, run a second time without AVX-512 by .ci/run): the
largest need measured is 60 ulp x |log delta| on top of the relative part (biswas-exact, log delta = -709.6,
eps0 = 36, n = 30, k = 10), the same on both paths. With every numpy and ``math`` exp, log, log1p and expm1 moved
by the full budget of 4 ulp in one direction it is 76, and it grows by about 4 per ulp of such a bias:
:data:`LOG_ULPS` = 128 covers the whole budget with a margin of 52 (a consistent bias of up to 17 ulp a call;
docs/decisions/numerics.md, "Safe-side margin"). Two machines' certified values of one delta differ by at most
twice the widening in log delta, the tolerance of the golden tests (tests/golden_tolerance.py).
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.params import BoundKind

__all__ = ["widen", "LOG_ULPS", "DEFAULT_RELATIVE_ROUNDING"]

#: ulps of |log delta| added: the log itself is known to ~|log delta| ulp at best, and values formed from
#: exponentiated log-probabilities carry ~|log| ulp each (biswas-exact needs 60 ulp x |log delta| beyond the
#: relative part at log delta = -709.6 on both numpy paths, 76 with every elementary function off by the
#: budget's 4 ulp in one direction; tests/accounting/test_safe_side.py, docs/decisions/numerics.md)
LOG_ULPS = 128.0
#: the relative rounding bound an accountant declares unless it states its own (tests hold each to it)
DEFAULT_RELATIVE_ROUNDING = 5e-13


def widen(kind: BoundKind, log_values, relative: float) -> np.ndarray:
    """``log_values`` (natural log of delta) moved outward to their safe side (module docstring)."""
    values = np.asarray(log_values, dtype=float)
    if kind not in (BoundKind.UPPER, BoundKind.LOWER, BoundKind.EXACT):
        return values
    with np.errstate(invalid="ignore"):
        step = LOG_ULPS * 2.0**-52 * np.abs(values)
        if kind is BoundKind.UPPER:
            out = np.minimum(values + math.log1p(relative) + step, 0.0)
        else:
            out = values + math.log1p(-relative) - step
    return np.where(np.isfinite(values), out, values)
