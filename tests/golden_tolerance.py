"""How far a golden value may move from one machine to another: the one place for the tolerance and its derivation.

numpy evaluates float64 exp, log, log1p, expm1 and power with Intel's SVML routines where the CPU has AVX-512
(``AVX512_SKX``) and with the C library's (glibc's libm) elsewhere; Python's ``math`` module always calls libm.
The two paths round differently in the last bits, so a value recorded on one machine is not reproduced bit for
bit on another (docs/decisions/numerics.md has the sources and the measurements). What is documented:

* glibc's manual ("Known Maximum Errors in Math Functions", from ``sysdeps/x86_64/fpu/libm-test-ulps``):
  exp, log, log1p, expm1 and pow of a double at most 1 ulp on x86_64;
* numpy's own accuracy test (``numpy/_core/tests/test_umath_accuracy.py`` and its ``umath-validation-set-*``
  tables) holds float64 exp, log, log1p and expm1 to 1 ulp on either path.

Both are maxima over test sets, not proofs; the budget takes :data:`ELEMENTARY_ULPS` = 4 ulp per call, the
accuracy class of SVML's vector routines, so that a value certified here stays certified on the other path.

What a golden value may move by follows from what the value is:

* **delta** (and log delta): every accountant's delta is widened to its own safe side by
  W = log1p(r) + LOG_ULPS ulp x |log delta| in log delta (:mod:`shuffledp.accounting.numerics.safe_side`; r the
  accountant's declared relative rounding, which tests/accounting/test_safe_side.py holds on both paths). Two
  machines whose values are both certified lie in the same band of width 2 W on the safe side of the exact
  value: :func:`log_delta_tolerance` = 2 W.
* **epsilon**: found by a bracketing search that stops when the bracket is narrower than its tolerance
  (relative, absolute below 1; 1e-10 in ``Accountant.epsilon_for_delta``, 1e-9 in the composed and remainder
  searches). A delta that moves by 2 W can flip one yes/no answer near the crossing and so move the returned
  end by up to the bracket: :func:`epsilon_tolerance` = :data:`EPSILON_SEARCH_TOLERANCE` x max(1, |eps|).
* anything else the CLI prints (a ratio of two epsilons, an eps0 from calibration, a utility figure computed
  from them): :data:`DERIVED_RELATIVE` of the value (a ratio of two searched epsilons >= 0.1 moves by at most
  2 x 1e-9 / 0.1).

A bound is compared on its own side (:func:`check_on_safe_side`): an upper bound may come out higher than
recorded by the tolerance (looser, still valid) and never lower by more than it; a lower bound the mirror
image. The message says which side a value left by.

**On the recording platform, bit for bit.** The golden files were recorded with numpy on its AVX-512 paths
(:data:`RECORDED_ON`). Where the running numpy takes the same paths (:func:`numpy_path`), the same code gives the
same bits, so the golden tests compare outputs exactly there (:func:`same_path_as_recording`): a refactor that
moves a value by one ulp is caught on that platform, and the tolerance above applies only across platforms.

README numbers (:func:`printed_numbers_match`): a number shown with fewer than 15 significant digits matches
an output that rounds to it (within half a unit of its last digit, plus the tolerance); one shown in full
(repr, 15 digits or more) matches within the tolerance of its key.
"""

from __future__ import annotations

import math
import re

from shuffledp.accounting.numerics.safe_side import DEFAULT_RELATIVE_ROUNDING, LOG_ULPS

__all__ = [
    "ULP",
    "ELEMENTARY_ULPS",
    "EPSILON_SEARCH_TOLERANCE",
    "DERIVED_RELATIVE",
    "log_delta_tolerance",
    "epsilon_tolerance",
    "tolerance_of",
    "check_on_safe_side",
    "printed_numbers_match",
    "RECORDED_ON",
    "numpy_path",
    "same_path_as_recording",
]

#: relative size of one ulp of a double (2^-52: the spacing at 1, an upper bound on ulp(x) / |x|)
ULP = 2.0**-52
#: budget per call of exp, log, log1p, expm1 or pow: 4 ulp (glibc and numpy document 1 ulp on their test sets)
ELEMENTARY_ULPS = 4
#: the coarsest stopping rule of the epsilon searches (relative; absolute below 1)
EPSILON_SEARCH_TOLERANCE = 1e-9
#: relative tolerance of a number derived from searched epsilons (a ratio of two >= 0.1: 2 x 1e-9 / 0.1)
DERIVED_RELATIVE = 2e-8

#: the numpy path the golden files were recorded on (see :func:`numpy_path`)
RECORDED_ON = "avx512"

_UPPER, _LOWER = "upper bound", "lower bound"


def numpy_path() -> str:
    """Which float64 exp/log loops this numpy dispatches to: ``"avx512"`` (SVML) or ``"libm"``.

    Returns:
        ``"avx512"`` when numpy's AVX-512 (SKX) loops are enabled on this CPU and not switched off by
        ``NPY_DISABLE_CPU_FEATURES``, else ``"libm"``.
    """
    from numpy._core._multiarray_umath import __cpu_features__ as features

    return "avx512" if features.get("AVX512_SKX") and features.get("X86_V4", True) else "libm"


def same_path_as_recording() -> bool:
    """Whether golden values must be reproduced bit for bit here (the path they were recorded on).

    Returns:
        True when :func:`numpy_path` is :data:`RECORDED_ON`.
    """
    return numpy_path() == RECORDED_ON


def log_delta_tolerance(log_delta: float, relative_rounding: float = DEFAULT_RELATIVE_ROUNDING) -> float:
    """Twice the safe-side widening at ``log_delta``: how far two certified machines' log delta may differ.

    Args:
        log_delta: the natural log of the delta (finite).
        relative_rounding: the accountant's declared relative rounding (the library's default unless given).

    Returns:
        The tolerance in log delta, 2 (log1p(relative_rounding) + LOG_ULPS ulp x |log_delta|).
    """
    return 2.0 * (math.log1p(relative_rounding) + LOG_ULPS * ULP * abs(log_delta))


def epsilon_tolerance(epsilon: float) -> float:
    """The absolute tolerance of a searched epsilon: the search's bracket, ``EPSILON_SEARCH_TOLERANCE`` x
    max(1, |epsilon|).

    Args:
        epsilon: the recorded epsilon.

    Returns:
        The absolute tolerance.
    """
    return EPSILON_SEARCH_TOLERANCE * max(1.0, abs(epsilon))


def tolerance_of(key: str | None, value: float) -> float:
    """The absolute tolerance of a printed number, by what it is (its JSON key or table column).

    Args:
        key: ``eps``, ``eps_lower``, ``eps_upper``, ``eps0`` (searched epsilons), ``delta``, ``delta_lower``,
            ``delta_upper`` (deltas), ``log_delta``; anything else (or None) is a derived number.
        value: the recorded value.

    Returns:
        The absolute tolerance (0 for a zero delta, which is exact wherever an accountant returns it).
    """
    if not math.isfinite(value):
        return 0.0
    if key in ("eps", "eps_lower", "eps_upper", "eps0"):
        return epsilon_tolerance(value)
    if key == "log_delta":
        return log_delta_tolerance(value)
    if key in ("delta", "delta_lower", "delta_upper"):
        if value <= 0.0:
            return 0.0
        return value * math.expm1(log_delta_tolerance(math.log(value)))
    return DERIVED_RELATIVE * abs(value)


def check_on_safe_side(got: float, recorded: float, kind: str | None, tolerance: float) -> str | None:
    """Whether ``got`` is within ``tolerance`` of ``recorded``, told by the side it left on.

    Args:
        got: the value computed now.
        recorded: the golden value.
        kind: ``"upper bound"`` (its safe side is higher), ``"lower bound"`` (lower), or anything else (an exact
            or printed value: no safe side).
        tolerance: the absolute tolerance (:func:`tolerance_of`).

    Returns:
        None when it is within; otherwise one line saying how far, on which side.
    """
    if got == recorded or (math.isnan(got) and math.isnan(recorded)):
        return None
    if not (math.isfinite(got) and math.isfinite(recorded)):
        return f"{got!r} != {recorded!r}"
    move = got - recorded
    if abs(move) <= tolerance:
        return None
    if kind in (_UPPER, _LOWER):
        safe = (move > 0) == (kind == _UPPER)
        side = "its safe side (a looser bound)" if safe else "its UNSAFE side"
        return (
            f"{kind} {got!r} moved to {side} by {abs(move):.3g} from {recorded!r} (tolerance {tolerance:.3g})"
        )
    return f"{got!r} moved by {abs(move):.3g} from {recorded!r} (tolerance {tolerance:.3g})"


# a decimal number not glued to a word or another number (identifiers such as x0, eps0 or L2 are text)
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_KEY_BEFORE = re.compile(r'"(\w+)":\s*$')
_KIND = re.compile(r'"kind":\s*"([^"]*)"')
#: significant digits from which a printed number is taken as shown in full (repr of a double)
FULL_DIGITS = 15


def _significant_digits(text: str) -> int:
    mantissa = re.split(r"[eE]", text.lstrip("+-"))[0]
    digits = mantissa.replace(".", "").lstrip("0")
    return max(1, len(digits))


def _last_digit_unit(text: str) -> float:
    """The value of one unit in the last digit shown (1 for an integer, 0.01 for 3.14, 1e-7 for 1.5e-06)."""
    mantissa, _, exponent = text.lstrip("+-").lower().partition("e")
    return 10.0 ** (int(exponent or "0") - len(mantissa.partition(".")[2]))


def printed_numbers_match(shown: str, got: str) -> str | None:
    """Whether the text ``got`` is the text ``shown`` with each number within its budget (module docstring).

    Text between numbers must be equal, runs of spaces compared as one (a column padded for a rounded number).
    A number shown with fewer than :data:`FULL_DIGITS` significant digits matches an output within half a unit
    of its last digit plus the tolerance (so ``0.0801313`` accepts 0.08013128 and 0.080131341, never
    0.0801315; an integer matches only itself); one shown in full matches within the tolerance. A number's
    side is that of its row's ``kind``, or of its key (``eps_lower``: a lower bound's).

    Args:
        shown: the expected text (from the README).
        got: the program's output.

    Returns:
        None when they match; otherwise one line naming the first difference.
    """
    shown_numbers, got_numbers = list(_NUMBER.finditer(shown)), list(_NUMBER.finditer(got))
    shown_text = [re.sub(r" +", " ", part) for part in _NUMBER.split(shown)]
    got_text = [re.sub(r" +", " ", part) for part in _NUMBER.split(got)]
    if len(shown_numbers) != len(got_numbers) or shown_text != got_text:
        return f"the text differs outside its numbers:\n{got}\n--- shown ---\n{shown}"
    for s, g in zip(shown_numbers, got_numbers):
        if s.group() == g.group():
            continue
        key_match = _KEY_BEFORE.search(shown[: s.start()])
        key = key_match.group(1) if key_match else None
        kinds = _KIND.findall(shown[s.end() :])
        kind = kinds[0] if kinds else None
        if key is not None and key.endswith(("_lower", "_upper")):
            kind = _LOWER if key.endswith("_lower") else _UPPER
        recorded, value = float(s.group()), float(g.group())
        tolerance = tolerance_of(key, recorded)
        if _significant_digits(s.group()) < FULL_DIGITS:
            tolerance += 0.5 * _last_digit_unit(s.group()) * (1.0 + 1e-9)
        problem = check_on_safe_side(value, recorded, kind, tolerance)
        if problem is not None:
            return f"{key or 'number'} shown as {s.group()}, printed {g.group()}: {problem}"
    return None
