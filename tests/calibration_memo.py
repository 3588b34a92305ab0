"""The one-round comparison's calibrations computed once per setting, for tests that render the same setting
several times (the command line's table and JSON, `--compositions 1` against the plain command).

``compare`` calibrates eps0 for every calibration of the shuffled k-RR (:func:`shuffledp.experiments.compare.calibrate`)
and the side-by-side table calibrates every shuffled randomizer
(:func:`shuffledp.experiments.which_randomizer.calibrate_tightest`); both are functions of their arguments alone.
Inside :func:`calibrations_once` each is computed at the first call with given arguments and the later calls get
a copy of that answer, so the tests still check what they check (the dispatch and the rendering), once per
setting instead of once per rendering. The calibrations' own values are tested against their references in
tests/experiments/test_which_randomizer.py and tests/experiments/test_compare.py.
"""

from __future__ import annotations

import contextlib
import copy
import functools

import pytest


def memoized(function):
    """``function`` computed once per distinct (positional, keyword) arguments; each call returns a deep copy
    of the first answer (a caller that changes its answer does not change the next caller's)."""
    answers: dict = {}

    @functools.wraps(function)
    def once(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in answers:
            answers[key] = function(*args, **kwargs)
        return copy.deepcopy(answers[key])

    return once


@contextlib.contextmanager
def calibrations_once():
    """Inside: ``compare``'s and the side-by-side table's calibrations memoized (module docstring)."""
    from shuffledp.experiments import compare, which_randomizer

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compare, "calibrate", memoized(compare.calibrate))
        patch.setattr(which_randomizer, "calibrate_tightest", memoized(which_randomizer.calibrate_tightest))
        yield
