"""Log-space numerical helpers shared across the package (the accountants, the mechanisms).

Everything here works with natural logarithms. ``-inf`` stands for log(0). No function returns NaN
for valid input. The binomial pmf lives in :mod:`shuffledp.accounting.numerics.binomial`.

**scipy's log-sum-exp, to the bit, with less overhead.** Three forms give the value of
:func:`scipy.special.logsumexp` (scipy 1.17's ``_logsumexp``) to the last bit, each for a shape the
accountants ask for thousands of times, where scipy's general function pays for array-API dispatch, array
copies and passes it needs only in general:

* :func:`logsumexp`: scipy's signature; a 1-D float64 array with no other argument (most calls) by the
  steps below, every other call by scipy itself;
* :func:`row_logsumexp`: ``logsumexp(rows, axis=1)`` of a 2-D float64 array in fewer passes, optionally in
  place (the composed tail's grid of orders);
* :func:`mgf_logsumexp`: ``logsumexp(np.arange(len(masses)) * order, b=masses)``, the log moment-generating
  function of a mass array at one order, for one array at many orders (:class:`MgfMasses`, prepared once;
  dp_accounting's self-convolution bounds).

The method, common to the three: scipy's own steps in scipy's order. The largest entries, m of them, are
taken out of the sum (with weights b: m is the sum of their weights); the rest are shifted by the largest,
exponentiated (times their weights) and summed to s; s is kept where it is 0 and divided by m otherwise;
the result is log1p(s / m) + log(m) + largest. numpy's pairwise sum adds the same numbers in the same
order as scipy's, so each value is scipy's to the bit. Wherever this is not finite (a largest entry that
is -inf, inf or NaN; with weights, no non-zero weight or a negative sum), scipy itself gives the value.
tests/accounting/test_logsumexp.py holds the three to scipy on random arrays and at the corners.

**Shared and kept apart.** Shared: the last step, log1p(s / m) + log(m) + largest (:func:`_undo_shift`),
the same ufuncs in the same order for the three forms, at the cost of one Python call (about 50 ns, against
about 20 us for a 1-D call on 1000 entries). Kept apart, side by side below, because sharing them would
change the speed or nothing:

* the division of s by m: a Python conditional on numpy scalars in the 1-D and weighted forms (``np.where``
  on a scalar costs about 3 us), ``np.where`` per row in the row form;
* scipy's sign steps (the signs of s + 1 and of m, s < -1 reflected, |m|): in the weighted form only;
  without weights they change no value and would cost time;
* the hand-over to scipy: each form tests something else at another point (the 1-D form its largest entry
  and its result; the row form every row's largest, before any work, and then scipy sums the whole array;
  the weighted form its non-zero masses and its result) and calls scipy with other arguments, so a shared
  rule would be a function taking the call as an argument, no shorter;
* the 1-D form as one row of :func:`row_logsumexp`: the same bits, but about 1.6 times as long on small
  arrays (the fixed cost of the 2-D steps).

:func:`segment_logsumexp` is another method: the textbook log-sum-exp per segment of a flat array (the
largest kept in the sum, log of the sum), not scipy's steps, so its values are its own (within rounding of
scipy's). :func:`binned_logsumexp` applies it per bin of an index (the privacy-loss grids of the binned
views).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp as _scipy_logsumexp

__all__ = [
    "log1mexp",
    "log_expm1",
    "log_add",
    "log_sub",
    "logsumexp",
    "row_logsumexp",
    "MgfMasses",
    "mgf_logsumexp",
    "segment_logsumexp",
    "binned_logsumexp",
]


_LOG_2 = float(np.log(2.0))


def _log1mexp_near_zero(x):
    return np.log(-np.expm1(np.minimum(x, 0.0)))


def _log1mexp_far(x):
    return np.log1p(-np.exp(np.minimum(x, 0.0)))


def log1mexp(x):
    """log(1 - exp(x)) for x <= 0, accurate everywhere (Maechler 2012); -inf at x = 0.

    One value (most calls: the searches' scalars) takes only its own branch, by the same ufuncs on the same
    0-d array as the elementwise form, so the same bits.

    Args:
        x: array-like of values <= 0 (x >= 0 gives -inf).

    Returns:
        log(1 - exp(x)) as an array of x's shape (0-d for one value).
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        if x.ndim == 0:
            if x >= 0:
                return np.array(-np.inf)
            return np.array(_log1mexp_near_zero(x) if x > -_LOG_2 else _log1mexp_far(x))
        out = np.where(x > -_LOG_2, _log1mexp_near_zero(x), _log1mexp_far(x))
    return np.where(x >= 0, -np.inf, out)


def _log_expm1_small(x):
    return np.log(np.expm1(np.minimum(x, 1.0)))


def _log_expm1_large(x):
    return x + np.log1p(-np.exp(-np.maximum(x, 1.0)))


def log_expm1(x):
    """log(e^x - 1) for x >= 0, accurate for every finite x (no overflow above x = 709); -inf at 0.

    Small x: log(expm1(x)) (expm1 keeps full precision); large x: x + log(1 - e^-x). One value takes only
    its own branch (the same ufuncs on the same 0-d array, so the same bits).

    Args:
        x: array-like of values >= 0.

    Returns:
        log(e^x - 1) as an array of x's shape (0-d for one value).
    """
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", over="ignore"):
        if x.ndim == 0:
            return np.array(_log_expm1_large(x) if x > 1.0 else _log_expm1_small(x))
        return np.where(x > 1.0, _log_expm1_large(x), _log_expm1_small(x))


def log_add(a, b):
    """log(exp(a) + exp(b)) elementwise."""
    return np.logaddexp(a, b)


def log_sub(a, b):
    """log(exp(a) - exp(b)) elementwise for a >= b; -inf where a == b."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    with np.errstate(invalid="ignore"):
        return np.where(np.isneginf(b), a, a + log1mexp(b - a))


def _undo_shift(scaled: Any, count: Any, largest: Any) -> Any:
    """scipy's last step: log1p(s / m) + log(m) + largest, the same ufuncs in the same order for every form.

    Args:
        scaled: s / m (s where it is 0), a scalar or an array.
        count: m (|m| with weights), broadcastable against ``scaled``.
        largest: the largest entry, broadcastable against ``scaled``.

    Returns:
        The log-sum-exp, of the inputs' broadcast shape.
    """
    return np.log1p(scaled) + np.log(count) + largest


def logsumexp(
    a: Any,
    axis: int | tuple[int, ...] | None = None,
    b: Any = None,
    keepdims: bool = False,
    return_sign: bool = False,
) -> Any:
    """:func:`scipy.special.logsumexp`, to the bit, without its per-call overhead on a 1-D float array.

    A 1-D float64 array with a finite largest entry and no other argument (the form of most calls here, in
    loops of thousands) is summed by scipy's own steps in the same order (module docstring) on numpy
    scalars; a result that is not finite, and every other call, goes to scipy itself.

    Args:
        a: the logs.
        axis: as scipy's.
        b: as scipy's (weights).
        keepdims: as scipy's.
        return_sign: as scipy's.

    Returns:
        scipy's value (with ``return_sign``, scipy's pair of value and sign).
    """
    if axis is None and b is None and not keepdims and not return_sign:
        x = np.asarray(a)
        if x.ndim == 1 and x.dtype == np.float64 and x.size:
            largest = x.max()
            if np.isfinite(largest):
                top = x == largest
                count = np.float64(np.count_nonzero(top))
                with np.errstate(divide="ignore", invalid="ignore"):
                    total = np.sum(np.exp(np.where(top, -np.inf, x) - largest))
                    total = total if total == 0 else total / count
                    out = _undo_shift(total, count, largest)
                if np.isfinite(out):
                    return out
    if return_sign:
        return _scipy_logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
    return _scipy_logsumexp(a, axis=axis, b=b, keepdims=keepdims)


def row_logsumexp(rows: np.ndarray, *, overwrite: bool = False) -> np.ndarray:
    """``scipy.special.logsumexp(rows, axis=1)``, to the bit, in fewer passes over a 2-D float array.

    scipy's own steps in the same order (module docstring), row by row, on one work array: the row's largest
    entries taken out, the rest shifted, exponentiated and summed along the row. When any row's largest entry
    is not finite (a row of -inf, an infinite or NaN entry), scipy itself sums the whole array.

    Args:
        rows: a 2-D float64 array.
        overwrite: whether ``rows`` may be used as the work array (its values are then lost).

    Returns:
        The log-sum-exp of each row.
    """
    largest = rows.max(axis=1, keepdims=True)
    if not np.all(np.isfinite(largest)):
        return _scipy_logsumexp(rows, axis=1)
    top = rows == largest
    count = np.count_nonzero(top, axis=1, keepdims=True).astype(float)
    shifted = rows if overwrite else rows.copy()
    shifted -= largest
    np.copyto(shifted, -np.inf, where=top)
    with np.errstate(under="ignore"):
        np.exp(shifted, out=shifted)
    total = np.sum(shifted, axis=1, keepdims=True)
    total = np.where(total == 0, total, total / count)
    return _undo_shift(total, count, largest)[:, 0]


@dataclass(frozen=True)
class MgfMasses:
    """A mass array prepared once for :func:`mgf_logsumexp` at many orders.

    Holds the indices of its non-zero masses, those indices as floats (the integers exactly), their masses,
    and a scratch array of the terms ``masses * exp(exponents - top)`` whose zero-mass entries are set once
    (each is its mass, +-0.0, at any order: ``+-0.0`` times a finite or zero ``exp``) and whose other
    entries each call overwrites (so one prepared array serves one caller at a time).
    """

    masses: np.ndarray
    nonzero: np.ndarray
    positions: np.ndarray
    weights: np.ndarray
    terms: np.ndarray

    @classmethod
    def of(cls, masses: np.ndarray) -> MgfMasses:
        """Prepare ``masses``.

        Args:
            masses: a 1-D float64 array (kept, not copied; not to be changed while prepared).

        Returns:
            The prepared array.
        """
        nonzero = np.flatnonzero(masses)
        return cls(masses, nonzero, nonzero.astype(float), masses[nonzero], masses.copy())


def _scipy_mgf_logsumexp(masses: np.ndarray, order: float) -> Any:
    """scipy's own call for :func:`mgf_logsumexp`, where its shifted sum is not finite."""
    return _scipy_logsumexp(np.arange(len(masses)) * order, b=masses)


def mgf_logsumexp(prepared: MgfMasses, order: float) -> Any:
    """``scipy.special.logsumexp(np.arange(len(masses)) * order, b=masses)``, to the bit, for
    ``prepared.masses``.

    scipy's steps with weights, sign handling included, in the same order (module docstring), on every term
    that can change the result. scipy sets the exponent of a zero weight to -inf, so its largest exponent is
    the largest over the non-zero masses, and a zero mass adds ``+-0.0 * exp(-inf)``, its own signed zero, to
    the sum: exponents, the largest and the exponentials are computed for the non-zero masses only (most of
    a PLD's grid is empty), and the terms are summed over the whole array (:class:`MgfMasses`), so numpy's
    pairwise sum adds the same numbers in the same order. Where the shifted sum is not finite (and when
    every mass is zero), scipy's own call decides.

    Args:
        prepared: the mass array, prepared by :meth:`MgfMasses.of`.
        order: the order (the exponent of each index's term is index x order).

    Returns:
        scipy's value (NaN where scipy gives NaN: a negative sum).
    """
    masses, weights, nonzero, terms = prepared.masses, prepared.weights, prepared.nonzero, prepared.terms
    if nonzero.size == 0:  # every exponent -inf: scipy's shifted sum is nan, so its own call decides
        return _scipy_mgf_logsumexp(masses, order)
    exponents = prepared.positions * order
    top = np.max(exponents)
    first = np.flatnonzero(exponents == top)
    # the weights of the largest terms, summed apart: one term is its own sum (every other addend is 0.0)
    if first.size == 1:
        scale = weights[first[0]]
    else:
        at_top = np.zeros(len(masses), dtype=bool)
        at_top[nonzero[first]] = True
        scale = np.sum(masses * at_top.astype(float))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        np.subtract(exponents, top, out=exponents)
        np.exp(exponents, out=exponents)
        terms[nonzero] = np.multiply(weights, exponents, out=exponents)
        terms[nonzero[first]] = weights[first] * 0.0  # scipy's exp(-inf) of the largest terms
        total = np.sum(terms)
        total = total if total == 0 else total / scale
        negative = np.sign(total + 1) * np.sign(scale) < 0
        if total < -1:
            total = -total - 2
        out = _undo_shift(total, np.abs(scale), top)
    if negative:
        out = np.nan
    if not np.isfinite(out):
        return _scipy_mgf_logsumexp(masses, order)
    return out


def segment_logsumexp(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The log-sum-exp of each segment ``values[starts[i]:starts[i + 1]]`` of a flat array (the last segment
    runs to the end).

    Not scipy's steps (module docstring): each segment's largest entry (0 in its place where it is not
    finite) is subtracted from every entry of the segment, all entries are exponentiated and summed per
    segment (``np.add.reduceat``), then log of the sum + the largest.

    Args:
        values: a 1-D float array of logs.
        starts: the first index of each segment, increasing, each segment non-empty.

    Returns:
        One log-sum-exp per segment (``-inf`` for every segment when ``values`` is empty).
    """
    if values.size == 0:
        return np.full(starts.size, -np.inf)
    peak = np.maximum.reduceat(values, starts)
    finite_peak = np.where(np.isfinite(peak), peak, 0.0)
    lengths = np.diff(np.append(starts, values.size))
    sums = np.add.reduceat(np.exp(values - np.repeat(finite_peak, lengths)), starts)
    with np.errstate(divide="ignore"):
        return np.log(sums) + finite_peak


def binned_logsumexp(index: np.ndarray, log_mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The log-sum-exp of ``log_mass`` over each bin of ``index``: its non-finite entries dropped, the rest
    sorted by bin (stable), and :func:`segment_logsumexp` over each run of one bin.

    Args:
        index: 1-D integer-valued bin of each entry.
        log_mass: 1-D logs of the same length.

    Returns:
        (the bins present, ascending; their log-sum-exps); both empty when no entry is finite.
    """
    finite = np.isfinite(log_mass)
    index, log_mass = index[finite], log_mass[finite]
    if index.size == 0:
        return index, log_mass
    order = np.argsort(index, kind="stable")
    index, log_mass = index[order], log_mass[order]
    starts = np.flatnonzero(np.r_[True, index[1:] != index[:-1]])
    return index[starts], segment_logsumexp(log_mass, starts)
