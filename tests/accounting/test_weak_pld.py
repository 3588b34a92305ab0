"""The weak view's binned PLD (WeakView.binned, by shuffledp.accounting.views.weak.pld): its pmf rows against Loader's
formula per element (to a tolerance derived from the documented accuracy of exp and log, tests/golden_tolerance.py), and its mirrored side against the generic binning of the view's own stream.

Known values: :func:`shuffledp.accounting.numerics.binomial.log_binom_pmf_loader` per element (Loader 2000), and the generic
binned PLD of :mod:`shuffledp.accounting.views.derived.pld`, which bins every outcome of the stream on its own.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.numerics.pld_epsilon import epsilon_for_delta
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.derived import pld as derived_pld
from shuffledp.accounting.views.weak import pld as weak_pld
from shuffledp.accounting.views.weak import view as weak

_spec = importlib.util.spec_from_file_location(
    "golden_tolerance", Path(__file__).resolve().parents[1] / "golden_tolerance.py"
)
assert _spec is not None and _spec.loader is not None
golden_tolerance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden_tolerance)
ULP, ELEMENTARY_ULPS = golden_tolerance.ULP, golden_tolerance.ELEMENTARY_ULPS


def _loader_terms(x, trials, p):
    """The sum of the magnitudes of the terms Loader's log pmf adds up (:func:`log_binom_pmf_loader`): the two
    deviances x log1p(d / np) - d and (n - x) log1p(-d / nq) + d in their general form (an overestimate of the
    series used near the mean), 0.5 |log(2 pi x (n - x) / n)| term by term, and the Stirling errors (< 1)."""
    d = x - trials * p
    with np.errstate(divide="ignore", invalid="ignore"):
        deviances = np.nan_to_num(np.abs(x * np.log1p(d / (trials * p))), nan=0.0) + np.nan_to_num(
            np.abs((trials - x) * np.log1p(-d / (trials * (1 - p)))), nan=0.0
        )
        logs = 0.5 * (
            math.log(2 * math.pi) + np.log(np.maximum(x, 1.0)) + np.log(np.maximum(trials - x, 1.0))
        )
    return deviances + 2.0 * np.abs(d) + logs + 0.5 * math.log(trials) + 1.0


def _row_tolerance(x, trials, log_p, log_q):
    """Relative tolerance of a row value against Loader's value per element, from documented accuracy: each of
    the two Loader values (the row's anchor and the element's own) carries (ELEMENTARY_ULPS + 5) ulp of its
    terms' magnitude in log (each term one elementary call and a product, then a sum of about eight terms) and
    exp adds ELEMENTARY_ULPS ulp; the running product between anchors adds up to _ANCHOR - 1 steps of 4 half-ulp
    roundings and the ratio p / q = exp(log p - log q) (ELEMENTARY_ULPS ulp, and one ulp of |log p - log q| from
    the difference)."""
    p = math.exp(log_p)
    loader = (ELEMENTARY_ULPS + 5) * ULP * _loader_terms(x, trials, p) + ELEMENTARY_ULPS * ULP
    chain = (weak_pld._ANCHOR - 1) * (2.0 * ULP + (ELEMENTARY_ULPS + abs(log_p - log_q)) * ULP)
    return 2.0 * loader + chain


def _rows_match_loader(got, x, trials, log_p, log_q, last) -> bool:
    want = np.where(x <= last[:, None], np.exp(log_binom_pmf_loader(x, trials, log_p, log_q)), 0.0)
    if not np.all((got == 0) == (want == 0)):
        return False
    big = want > 1e-290
    return bool(np.all(np.abs(got[big] / want[big] - 1.0) <= _row_tolerance(x[big], trials, log_p, log_q)))


def _rows(trials, p):
    mean, sd = trials * p, math.sqrt(trials * p * (1 - p))
    first = np.floor(np.array([max(0.0, mean - 9 * sd), max(0.0, mean - 60 * sd - 5), 0.0, mean]))
    width = int(18 * sd) + 40
    last = np.minimum(first + width - 7, trials)
    got = weak_pld._binomial_rows(
        first, width, np.full(first.size, trials), math.log(p), math.log1p(-p), last
    )
    return got, first[:, None] + np.arange(width)[None, :], last


@pytest.mark.parametrize(
    "trials,p", [(875_000.0, 1 / 7), (40.0, 0.3), (10**8, 1e-3), (3000.0, 0.5), (60.0, 1e-9)]
)
def test_pmf_rows_are_loaders_values(trials, p):
    """Anchored running products against a Loader value per element, to the tolerance of the documented accuracy
    of exp and log (:func:`_row_tolerance`; the tolerance 1e-14 + 1e-15 |log pmf| this replaced held on a CPU with
    AVX-512 and not without it: 1.5 times over at trials = 3000, log pmf = -83). Rows that start where the pmf
    underflows are evaluated per element (so they match too); zeros beyond ``last``."""
    got, x, last = _rows(trials, p)
    assert _rows_match_loader(got, x, trials, math.log(p), math.log1p(-p), last)


def test_a_row_value_outside_its_tolerance_fails():
    """Probe: one value moved by 1.01 times its tolerance (or a zero made non-zero) is refused."""
    trials, p = 3000.0, 0.5
    got, x, last = _rows(trials, p)
    row, column = 0, 40
    assert got[row, column] > 1e-290
    tolerance = _row_tolerance(x[row, column], trials, math.log(p), math.log1p(-p))
    moved = got.copy()
    moved[row, column] *= 1.0 + 1.01 * tolerance
    assert not _rows_match_loader(moved, x, trials, math.log(p), math.log1p(-p), last)
    moved = got.copy()
    moved[row, -1] = 1e-300  # beyond ``last``: must be zero
    assert not _rows_match_loader(moved, x, trials, math.log(p), math.log1p(-p), last)


def _epsilon(view, q, interval, T, delta):
    pld = derived_pld.pld(view, q)
    if T > 1:
        pld = pld.self_compose(T)
    return float(epsilon_for_delta(pld, delta))


@pytest.mark.parametrize("n,k,e0", [(7, 3, 2.0), (40, 2, 1.0), (60, 4, 0.7), (25, 10, 9.0)])
@pytest.mark.parametrize("q", [1.0, 0.3])
def test_mirrored_pld_is_on_the_safe_side_of_the_stream(n, k, e0, q):
    """The run reduction with the side a < c mirrored, composed (T = 1, 5) and subsampled: its epsilon equals
    the generic binning's (every outcome binned on its own) to 1e-9. The grid 0.97e-3 puts no loss on a bin
    edge here (at 1e-3 the loss eps0 = 2 of c = m = 0 is one: the run reduction bins it exactly, at 2000,
    the generic binning from log P - log Q rounded at 2001; the mirror's direction at an edge is the next
    test's)."""
    interval = 0.97e-3
    view = weak.WeakView(ShuffleSetting(epsilon_local=e0, n_users=n, k=k))
    ours = view.binned(interval=interval, pessimistic=True, K=9.0)
    stream = derived_pld.binned(
        view,
        interval=interval,
        pessimistic=True,
        K=9.0,
    )
    for T in (1, 5):
        for delta in (1e-3, 1e-6):
            mine, generic = _epsilon(ours, q, interval, T, delta), _epsilon(stream, q, interval, T, delta)
            assert math.isclose(mine, generic, rel_tol=0, abs_tol=1e-9)


def test_mirror_moves_an_exact_edge_to_the_safe_side():
    """n = 50, eps0 = 4, Delta = 0.01: the outcome c = m = 0 has loss -eps0 = -400 Delta exactly; pessimistic,
    the mirror puts it in bin -399 (REMOVE loss rounded up one more bin; the bin's lower edge is -4 itself,
    so the ADD direction's loss is exact), optimistic in bin -401."""
    for pessimistic, expected, other in ((True, -399, -400), (False, -401, -400)):
        view = weak.WeakView(ShuffleSetting(epsilon_local=4.0, n_users=50, k=10)).binned(
            interval=0.01, pessimistic=pessimistic
        )
        index = list(view.index)
        assert expected in index and (
            other not in index or view.p_mass[index.index(other)] < view.p_mass[index.index(expected)]
        )
