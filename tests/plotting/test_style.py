"""The shared plotting style: a distinct colour for every mechanism and accountant, contrasting
medians, integer ticks, log norms, hatching with a legend, and one wording of δ̂ and σ."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from figure_checks import contrast_ratio, delta_e

from shuffledp.accounting import list_accountants
from shuffledp.experiments.utility import MECHANISMS, calibrate
from shuffledp.plotting import style

#: names the palette must cover beyond the registry: the derived direction and the planned accountants
EXTRA_NAMES = ["biswas-exact-both", "weak-adversary", "worst-case-lower"]
#: drawn together by default (Figure 1, sweeps, crossover, utility figures)
DRAWN_TOGETHER = ["biswas-printed", "biswas-exact", "strong-adversary", "gaussian", "shuffle", "shuffle+INV"]


def test_palette_covers_every_mechanism_and_accountant():
    names = [*MECHANISMS, *list_accountants(), *EXTRA_NAMES]
    missing = [name for name in names if name not in style.PALETTE]
    assert not missing


def test_palette_colours_are_distinct_and_far_apart_where_drawn_together():
    colours = dict(style.PALETTE)
    pairs = list(itertools.combinations(colours, 2))
    closest = min(pairs, key=lambda pair: delta_e(colours[pair[0]], colours[pair[1]]))
    assert delta_e(colours[closest[0]], colours[closest[1]]) >= 15.0, closest
    together = min(delta_e(colours[a], colours[b]) for a, b in itertools.combinations(DRAWN_TOGETHER, 2))
    assert together >= 30.0


@pytest.mark.parametrize("name", sorted(style.PALETTE))
def test_box_median_contrasts_with_its_fill_and_keeps_its_hue(name):
    colours = style.box_colours(style.PALETTE[name])
    assert contrast_ratio(colours["median"], colours["fill"]) >= 3.0  # WCAG minimum for graphics
    # a dark shade, not black: the median still says which mechanism it belongs to
    assert colours["median"] != (0.0, 0.0, 0.0) or style.PALETTE[name] == "#000000"


def test_colours_for_unknown_names_are_distinct_reserve_colours():
    colours = style.colours_for(["biswas-exact", "new-accountant-a", "new-accountant-b", "new-accountant-a"])
    assert colours["biswas-exact"] == style.PALETTE["biswas-exact"]
    assert colours["new-accountant-a"] != colours["new-accountant-b"]
    assert not {colours["new-accountant-a"], colours["new-accountant-b"]} & set(style.PALETTE.values())


def test_colour_of_names_the_palette_when_missing():
    with pytest.raises(ValueError, match=r"`name` must be a mechanism or accountant .*PALETTE; got 'nope'"):
        style.colour_of("nope")


def test_integer_ticks_on_grid_indices():
    figure, ax = plt.subplots()
    ax.imshow(np.arange(17 * 24).reshape(17, 24))
    style.integer_ticks(ax)
    figure.canvas.draw()
    for ticks in (ax.get_xticks(), ax.get_yticks()):
        assert np.all(ticks == np.round(ticks))


def test_log_norm_spans_at_least_one_decade_and_rejects_non_positive_minimum():
    norm = style.log_norm(1e-5, 2e-5)
    assert norm.vmin == 1e-5 and norm.vmax == pytest.approx(1e-4)
    with pytest.raises(
        ValueError, match=r"`vmin` must be a positive finite number for a log colour scale; got 0"
    ):
        style.log_norm(0.0, 1.0)


def test_out_of_range_entries_count_what_the_colour_bar_clips():
    values = np.array([0.5, 2.0, 3.0, -1.0, np.nan, 11.0])
    handles = style.out_of_range_entries(
        values, vmin=1.0, vmax=10.0, below="{count} below", above="{count} above"
    )
    assert [h.get_label() for h in handles] == [
        f"{int((values < 1).sum())} below",
        f"{int((values > 10).sum())} above",
    ]
    assert style.colorbar_extend(values, vmin=1.0, vmax=10.0) == "both"
    assert style.colorbar_extend(np.array([1.0, 5.0]), vmin=1.0, vmax=10.0) == "neither"


def test_hatch_cells_draws_one_hatched_patch_per_flagged_cell():
    _, ax = plt.subplots()
    mask = np.array([[True, False, False], [False, True, True]])
    patches = style.hatch_cells(ax, mask)
    assert len(patches) == int(mask.sum())
    assert all(p.get_hatch() == style.FLAG_HATCH for p in patches)
    centres = sorted((p.get_x() + 0.5, p.get_y() + 0.5) for p in patches)
    assert centres == sorted((float(c), float(r)) for r, c in zip(*np.nonzero(mask)))


def _gaussian_rows(
    deltas, n_values, *, epsilon=4.0, epsilon_local=4.0, accountant="strong-adversary", floor=1e-300
):
    rows = []
    for delta, n in zip(deltas, n_values):
        calibration = calibrate(delta, epsilon=epsilon, sensitivity=np.sqrt(2), delta_floor=floor)
        rows.append(
            {
                "mechanism": "gaussian",
                "n_users": n,
                "epsilon": epsilon,
                "epsilon_local": epsilon_local,
                "accountant": accountant,
                **calibration.columns(),
            }
        )
    return pd.DataFrame(rows)


def test_calibration_text_states_range_floor_sigma_and_accountant():
    frame = _gaussian_rows([3.3e-7, 1e-60, 0.0], [1000, 10000, 100000])
    text = style.calibration_text(frame)
    assert "strong-adversary (upper bound)" in text
    assert (
        f"from {style.format_delta(3.3e-7)} (n = 1,000) to {style.format_delta(1e-60)} (n = 10,000)" in text
    )
    assert "δ̂ = 0 at n = 100,000: Gaussian at the floor δ = 1e-300" in text
    assert f"σ from {frame['sigma'].min():.3g} to {frame['sigma'].max():.3g}" in text
    assert "at ε ≥ ε0 δ = 0 also holds" in text  # eps = eps0 and a positive bound


def test_calibration_text_when_every_n_is_floored_and_below_eps0():
    frame = _gaussian_rows([0.0, 0.0], [1000, 2000], epsilon=1.0, accountant="biswas-printed")
    text = style.calibration_text(frame)
    assert "= 0 at every n: Gaussian at the floor δ = 1e-300" in text
    assert "also holds" not in text and "biswas-printed (as printed)" in text
    assert f"σ = {frame['sigma'].iloc[0]:.3g}" in text


def test_calibration_text_says_below_the_floor_when_delta_is_positive_but_tiny():
    frame = _gaussian_rows([1e-305, 1e-5], [1000, 2000], epsilon=1.0, accountant="biswas-exact")
    assert "δ̂ < 1e-300 (floor) at n = 1,000" in style.calibration_text(frame)


def test_delta_text_at_eps_equal_eps0():
    text = style.delta_text(1.35e-103, accountant="strong-adversary", epsilon=4.0, epsilon_local=4.0)
    assert text == "δ̂ = 1.35e-103 [strong-adversary (upper bound); at ε ≥ ε0 δ = 0 also holds]"
    floored = style.delta_text(
        0.0, accountant="biswas-printed", epsilon=4.0, epsilon_local=4.0, floored=True, delta_used=1e-300
    )
    assert "below the floor: Gaussian at δ = 1e-300" in floored and "also holds" not in floored
