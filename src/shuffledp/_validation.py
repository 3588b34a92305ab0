"""Argument checks shared by the whole library.

Each check returns the cleaned value or raises: ``TypeError`` for a wrong type, ``ValueError`` for a
value out of range. Messages follow one pattern -- the parameter, the accepted range, the value
received -- e.g. "`epsilon_local` must be in (0, inf); got -1.0."
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable

import numpy as np

__all__ = [
    "check_integer",
    "check_real",
    "check_real_array",
    "check_probability",
    "check_choice",
]


def _interval(low, high, low_open: bool, high_open: bool) -> str:
    left = "(" if low_open or low is None else "["
    right = ")" if high_open or high is None else "]"
    lo = "-inf" if low is None else f"{low:g}" if isinstance(low, float) else str(low)
    hi = "inf" if high is None else f"{high:g}" if isinstance(high, float) else str(high)
    return f"{left}{lo}, {hi}{right}"


def _in_range(value, low, high, low_open, high_open) -> bool:
    below = low is not None and (value <= low if low_open else value < low)
    above = high is not None and (value >= high if high_open else value > high)
    return not (below or above)


def check_integer(
    value,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
) -> int:
    """Return ``value`` as ``int`` if it is an integer in the closed range [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and float(value).is_integer():
            value = math.trunc(value)  # int() of a whole Real, spelled so the type checker follows
        else:
            raise TypeError(f"`{name}` must be an integer; got {value!r} ({type(value).__name__}).")
    value = int(value)
    if not _in_range(value, low, high, False, False):
        raise ValueError(f"`{name}` must be an integer in {_interval(low, high, False, False)}; got {value}.")
    return value


def check_real(
    value,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a finite ``float`` inside the given interval."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{name}` must be a real number; got {value!r} ({type(value).__name__}).")
    value = float(value)
    if math.isnan(value) or not _in_range(value, low, high, low_open, high_open):
        raise ValueError(f"`{name}` must be in {_interval(low, high, low_open, high_open)}; got {value!r}.")
    return value


def check_real_array(
    values,
    name: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> np.ndarray:
    """Return ``values`` as a 1-d float array whose entries all lie inside the interval.

    A scalar is accepted and returned as an array of shape (1,).
    """
    try:
        array = np.atleast_1d(np.asarray(values, dtype=float))
    except (TypeError, ValueError) as error:
        raise TypeError(f"`{name}` must be real numbers; got {values!r}.") from error
    if array.ndim != 1:
        raise ValueError(f"`{name}` must be a scalar or a 1-d sequence; got shape {array.shape}.")
    bad = np.isnan(array)
    if low is not None:
        bad |= array <= low if low_open else array < low
    if high is not None:
        bad |= array >= high if high_open else array > high
    if bad.any():
        first = array[np.argmax(bad)]
        raise ValueError(
            f"`{name}` must be in {_interval(low, high, low_open, high_open)}; got {float(first)!r}."
        )
    return array


def check_probability(value, name: str, *, allow_zero: bool = False, allow_one: bool = False) -> float:
    """Return ``value`` if it is a probability in (0, 1), optionally including the endpoints."""
    return check_real(value, name, low=0.0, high=1.0, low_open=not allow_zero, high_open=not allow_one)


def check_choice(value, name: str, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``."""
    choices = list(choices)
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {', '.join(map(repr, choices))}; got {value!r}.")
    return value
