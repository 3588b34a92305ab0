"""The weak adversary's binned PLD, pairs binned m by m on dense tiles summed per bin (shuffledp.accounting.views.weak.pld):
the same bits as the flat m-by-m reference (one element per outcome, gathered per element), in both rounding
modes, where the composed phase diagram's calibrations use it; and a probe showing the comparison sees one
outcome planted in the wrong bin."""

from __future__ import annotations

import numpy as np
import pytest

from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.binned import flat_rows
from shuffledp.accounting.views.weak import pld as weak_pld


def _flat_direct(side, ch, each, interval, ceil_mode):
    """The m-by-m binning on flat arrays, one element per (pair, m), each per-pair value gathered per element."""
    m_lo, pos, beta = ch.m_lo, ch.pos, ch.beta
    for first in range(0, each.size, weak_pld._BLOCK):
        rows = each[first : first + weak_pld._BLOCK]
        if np.all(ch.m_hi[pos[rows]] == m_lo[pos[rows]]):
            mm_rows, m_values = rows, m_lo[pos[rows]]
        else:
            mm_rows, m_values, _ = flat_rows(rows.astype(float), m_lo[pos[rows]], ch.m_hi[pos[rows]])
            mm_rows = mm_rows.astype(np.int64)
        flat = pos[mm_rows] * (ch.m_width - 1) + (m_values - m_lo[pos[mm_rows]]).astype(np.int64)
        g = ch.pmf.ravel()[flat]
        sr, ar, cr = ch.ss[mm_rows], ch.a[mm_rows], ch.c[mm_rows]
        loss = np.log1p(beta * (ar - cr) / (sr + m_values + beta * cr))
        j = (np.ceil(loss / interval) if ceil_mode else np.floor(loss / interval)).astype(np.int64)
        mass = ch.row_mass[mm_rows] * g
        side.add(j, mass * (sr + m_values + beta * ar), mass * (sr + m_values + beta * cr), int(j.max()))


def _binned(monkeypatch, direct, setting, interval, pessimistic):
    calls = []

    def counting(side, ch, each, *args):
        calls.append(int(np.sum(ch.m_hi[ch.pos[each]] - ch.m_lo[ch.pos[each]] + 1)))
        direct(side, ch, each, *args)

    monkeypatch.setattr(weak_pld, "_add_direct", counting)
    view = weak_pld.binned_by_runs(setting, interval=interval, pessimistic=pessimistic, K=9.0)
    monkeypatch.undo()
    return view, sum(calls)


def _same_bits(a, b) -> bool:
    return (
        np.array_equal(a.index, b.index)
        and a.p_mass.tobytes() == b.p_mass.tobytes()
        and a.q_mass.tobytes() == b.q_mass.tobytes()
        and (a.p_infinity, a.q_infinity, a.dropped) == (b.p_infinity, b.q_infinity, b.dropped)
    )


CASES = [
    (3000, 4, 1.5, 1e-4, True),
    (3000, 4, 1.5, 1e-4, False),
    (2000, 15, 2.0, 1e-5, True),
    (500, 192, 4.0, 1e-5, True),
    (400, 2, 1.0, 1e-4, True),  # k = 2: one m per pair (m = 0), the flat branch
]


@pytest.mark.parametrize("n,k,eps0,interval,pessimistic", CASES)
def test_tiles_give_the_flat_reference_bit_for_bit(monkeypatch, n, k, eps0, interval, pessimistic):
    setting = ShuffleSetting(epsilon_local=eps0, n_users=n, k=k)
    tiled, outcomes = _binned(monkeypatch, weak_pld._add_direct, setting, interval, pessimistic)
    flat, _ = _binned(monkeypatch, _flat_direct, setting, interval, pessimistic)
    assert outcomes > 0  # the m-by-m path ran
    assert _same_bits(tiled, flat)


def test_probe_one_outcome_in_the_wrong_bin_is_seen(monkeypatch):
    """A tile path that puts one outcome (the heaviest) one bin up fails the comparison above."""
    setting = ShuffleSetting(epsilon_local=1.5, n_users=3000, k=4)
    flat, _ = _binned(monkeypatch, _flat_direct, setting, 1e-4, True)
    original = weak_pld._direct_tiles

    def planted(*args):
        for number, (bins, p_mass, q_mass, inside) in enumerate(original(*args)):
            if number == 0:
                bins[np.unravel_index(np.argmax(np.where(inside, p_mass, 0.0)), bins.shape)] += 1
            yield bins, p_mass, q_mass, inside

    monkeypatch.setattr(weak_pld, "_direct_tiles", planted)
    tiled, _ = _binned(monkeypatch, weak_pld._add_direct, setting, 1e-4, True)
    assert not _same_bits(tiled, flat)
