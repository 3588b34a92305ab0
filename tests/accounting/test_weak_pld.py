"""The weak view's binned PLD (WeakView.binned, by shuffledp.accounting.views.weak.pld; issue 35): its pmf rows against Loader's
formula per element, and its mirrored side against the generic binning of the view's own stream.

Known values: :func:`shuffledp._numerics.log_binom_pmf_loader` per element (Loader 2000), and the generic
binned PLD of :mod:`shuffledp.accounting.views.derived.pld`, which bins every outcome of the stream on its own.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from shuffledp._numerics import log_binom_pmf_loader
from shuffledp.accounting.numerics.pld_epsilon import epsilon_for_delta
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.derived import pld as derived_pld
from shuffledp.accounting.views.weak import pld as weak_pld
from shuffledp.accounting.views.weak import view as weak


@pytest.mark.parametrize(
    "trials,p", [(875_000.0, 1 / 7), (40.0, 0.3), (10**8, 1e-3), (3000.0, 0.5), (60.0, 1e-9)]
)
def test_pmf_rows_are_loaders_values(trials, p):
    """Anchored running products against a Loader value per element: relative difference below 1e-14 plus
    1e-15 |log pmf|. The second part is Loader's own: a log value's absolute rounding (a few ulp of |log pmf|)
    becomes a relative error after exp, in every Loader value and so in the anchors (two consecutive Loader
    values at log pmf -47 differ from the exact ratio by up to 2.5e-14). Rows that start where the pmf
    underflows are evaluated per element (so they match too); zeros beyond ``last``."""
    mean, sd = trials * p, math.sqrt(trials * p * (1 - p))
    first = np.floor(np.array([max(0.0, mean - 9 * sd), max(0.0, mean - 60 * sd - 5), 0.0, mean]))
    width = int(18 * sd) + 40
    last = np.minimum(first + width - 7, trials)
    got = weak_pld._binomial_rows(
        first, width, np.full(first.size, trials), math.log(p), math.log1p(-p), last
    )
    x = first[:, None] + np.arange(width)[None, :]
    want = np.where(
        x <= last[:, None], np.exp(log_binom_pmf_loader(x, trials, math.log(p), math.log1p(-p))), 0.0
    )
    assert np.all((got == 0) == (want == 0))
    big = want > 1e-290
    assert np.all(np.abs(got[big] / want[big] - 1.0) < 1e-14 - 1e-15 * np.log(want[big]))


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
