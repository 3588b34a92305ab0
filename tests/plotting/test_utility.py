"""Utility figures (Figures 2, 4-7 and the crossover): each is built from data made by the real
experiment jobs at tiny sizes, then read back for what it tells the reader: the parameters in its
titles, flags exactly where the data has them, shared scales, and no silently clipped value."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from figure_checks import contrast_ratio, figure_text, legend_texts
from matplotlib.colors import LogNorm, to_rgb
from matplotlib.patches import Rectangle

from shuffledp.experiments import utility as E
from shuffledp.experiments.crossover import crossover_sweep
from shuffledp.mechanisms import sensitivity_for
from shuffledp.plotting import style
from shuffledp.plotting.utility import (
    calibration_groups,
    crossover_log_ratio,
    figure_crossover,
    figure_heatmaps,
    figure_tv_boxplots,
    figure_tv_vs_n,
    plot_tv_boxes,
)

SEED = 20221014
#: a small region: empty cells (so the Gaussian estimate has negative cells) and one dominant cell
REGION_COUNTS = np.array([0, 5, 0, 40, 3, 0, 12, 300, 0, 7, 1, 0, 0, 2, 25, 0, 9, 0, 4, 60])
GRID = {"n_lon": 5, "n_lat": 4}


def _boxes(ax) -> dict[str, tuple]:
    """gid -> (box patch, median line) of every box drawn by plot_tv_boxes."""
    patches = {p.get_gid(): p for p in ax.patches if (p.get_gid() or "").startswith("box:")}
    medians = {
        line.get_gid(): line for line in ax.get_lines() if (line.get_gid() or "").startswith("median:")
    }
    return {gid: (patch, medians[gid.replace("box:", "median:")]) for gid, patch in patches.items()}


# ------------------------------------------------------------------------------------- Figure 2


@pytest.fixture(scope="module")
def fig2_frame(utility_config):
    setting = {**utility_config["fig2"], "replicates": 6}
    # strong-adversary: positive delta-hat at eps = eps0, so the figure has floored and unfloored boxes
    config = {**utility_config, "accountant": "strong-adversary"}
    return pd.concat(
        [E.synthetic_community_job(config, setting, n, seed=SEED, tag="fig2") for n in (200, 400, 800)],
        ignore_index=True,
    )


@pytest.fixture(scope="module")
def fig2_figure(fig2_frame, utility_config):
    """Figure 2 drawn once for the three tests that only read it (~4-5 s each; its panels share
    one y axis across subfigures, so matplotlib redraws the canvas on every limit change while it is built)."""
    return figure_tv_vs_n(fig2_frame, k=utility_config["synthetic"]["k"])


def test_fig2_hatches_exactly_the_floored_gaussian_boxes(fig2_frame, fig2_figure):
    figure = fig2_figure
    seen_floored = seen_kept = 0
    # at ε = ε0 the printed and lower δ̂ are 0 (one σ: one row), strong-adversary's is positive (its own row)
    assert calibration_groups(fig2_frame) == [["as_printed", "lower"], ["configured"]]
    for ax, calibration in zip(figure.axes, ["as_printed", "as_printed", "configured", "configured"]):
        data = fig2_frame[fig2_frame["calibration"] == calibration]
        for gid, (patch, _) in _boxes(ax).items():
            _, mechanism, n = gid.split(":")
            rows = data[(data["mechanism"] == mechanism) & (data["n_users"] == int(n))]
            flagged = mechanism == "gaussian+proj" and bool(rows["delta_floored"].any())
            assert (patch.get_hatch() == style.FLAG_HATCH) == flagged, gid
            seen_floored += flagged
            seen_kept += mechanism == "gaussian+proj" and not flagged
    assert seen_floored and seen_kept  # the data has both cases, so the check above can fail either way
    assert any("δ̂ below the floor" in text for text in legend_texts(figure))


def test_fig2_titles_state_parameters_and_panels_are_lettered_once(fig2_frame, fig2_figure, utility_config):
    figure = fig2_figure
    text = figure_text(figure)
    first = fig2_frame.iloc[0]
    for part in (
        f"k = {utility_config['synthetic']['k']}",
        f"ε = {first['epsilon']:g}",
        f"ε0 = {first['epsilon_local']:g}",
        "n = 200 … 800",
        "6 draws per box",
    ):
        assert part in text, part
    for calibration in ("as_printed", "configured", "lower"):
        rows = fig2_frame[
            (fig2_frame["calibration"] == calibration) & (fig2_frame["mechanism"] == "gaussian")
        ]
        accountant = rows["accountant"].iloc[0]
        assert style.accountant_text(accountant) in text
        assert f"{rows['sigma'].min():.3g}" in text
    letters = [ax.get_title()[:3] for ax in figure.axes]
    assert letters == ["(a)", "(b)", "(c)", "(d)"]  # two panels per distinct calibration
    assert len({ax.get_ylim() for ax in figure.axes}) == 1  # one y axis for one quantity


def test_fig2_draws_the_projected_gaussian_so_every_tv_is_at_most_one(fig2_frame, fig2_figure):
    """Figures 2, 6, 7 draw the projected Gaussian: the raw one's "TV" (½·L1 of a vector that is not a
    distribution) reaches 1.02; every box is a distribution's TV, and the data has raw values above."""
    mechanisms = {gid.split(":")[1] for ax in fig2_figure.axes for gid in _boxes(ax)}
    assert mechanisms == {"gaussian+proj", "shuffle", "shuffle+INV"}
    for ax in fig2_figure.axes:
        assert (
            max(
                max(line.get_ydata())
                for line in ax.get_lines()
                if (line.get_gid() or "").startswith("draws:")
            )
            <= 1.0
        )
    texts = legend_texts(fig2_figure)
    assert "Gaussian + projection" in texts and not any(t.startswith("Gaussian (") for t in texts)


def test_raw_gaussian_if_drawn_is_labelled_unprojected_half_l1(fig2_frame):
    _, ax = plt.subplots()
    plot_tv_boxes(fig2_frame[fig2_frame["calibration"] == "configured"], mechanisms=["gaussian"], ax=ax)
    assert "Gaussian (½·L1, unprojected)" in legend_texts(ax)
    assert ax.get_ylabel().startswith("½·L1")


def test_fig2_draws_coinciding_calibrations_once_and_says_so(utility_config):
    """With the shipped setting (ε = ε0) δ̂ = 0 under every calibration, so σ is the same:
    Figure 2 draws that experiment once, in one row titled with the calibrations that coincide."""
    setting = {**utility_config["fig2"], "replicates": 4}
    frame = pd.concat(
        [E.synthetic_community_job(utility_config, setting, n, seed=SEED, tag="fig2") for n in (200, 400)],
        ignore_index=True,
    )
    gaussian = frame[frame["mechanism"] == "gaussian+proj"]
    assert gaussian.groupby("n_users")["sigma"].nunique().eq(1).all()  # the data: one σ per n
    assert frame["calibration"].nunique() == 3
    assert calibration_groups(frame) == [["as_printed", "configured", "lower"]]
    figure = figure_tv_vs_n(frame, k=utility_config["synthetic"]["k"])
    assert len(figure.subfigs) == 1 and len(figure.axes) == 2
    assert "Calibrations as_printed, configured, lower coincide (same δ̂ and σ at every n)" in figure_text(
        figure
    )


def _fig2_png_and_draws(frame, k, monkeypatch) -> tuple[bytes, int, int]:
    """Figure 2 saved as PNG bytes, with the number of full draws while it was built and while it was saved."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    draws = []
    draw = FigureCanvasAgg.draw
    monkeypatch.setattr(
        FigureCanvasAgg, "draw", lambda canvas, *a, **kw: (draws.append(1), draw(canvas, *a, **kw))[1]
    )
    figure = figure_tv_vs_n(frame, k=k)
    built = len(draws)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=40)
    plt.close(figure)
    return buffer.getvalue(), built, len(draws) - built


def test_fig2_is_drawn_only_when_saved_and_the_png_is_the_redrawn_one(
    fig2_frame, utility_config, monkeypatch
):
    """Axes sharing y across subfigures make matplotlib redraw the whole figure at each limit change (12 full
    draws of Figure 2 before it was saved: most of the job's time). Built without them, the figure is drawn
    only by savefig, and its PNG is byte for byte the one of the build that redraws."""
    import contextlib

    from shuffledp.plotting import utility as U

    k = utility_config["synthetic"]["k"]
    png, built, saved = _fig2_png_and_draws(fig2_frame, k, monkeypatch)
    assert built == 0
    monkeypatch.setattr(U, "_no_redraws", contextlib.nullcontext)  # the build as it was: every redraw
    redrawn_png, redrawn_built, redrawn_saved = _fig2_png_and_draws(fig2_frame, k, monkeypatch)
    assert redrawn_built > 0  # so the comparison below compares two different builds
    assert saved == redrawn_saved  # savefig's own draws are untouched
    assert png == redrawn_png


def test_box_medians_contrast_with_their_fills_and_mechanisms_differ(fig2_figure):
    figure = fig2_figure
    fills = {}
    for ax in figure.axes:
        for gid, (patch, median) in _boxes(ax).items():
            fill = patch.get_facecolor()[:3]
            assert contrast_ratio(median.get_color(), fill) >= 3.0, gid
            fills.setdefault(gid.split(":")[1], set()).add(tuple(np.round(fill, 4)))
    assert all(len(colours) == 1 for colours in fills.values())
    assert len({next(iter(c)) for c in fills.values()}) == len(fills)  # one distinct fill per mechanism


def test_few_draws_are_drawn_as_dots(fig2_frame):
    _, ax = plt.subplots()
    data = fig2_frame[fig2_frame["calibration"] == "configured"]
    plot_tv_boxes(data, mechanisms=["gaussian", "shuffle+INV"], ax=ax)
    dots = [line for line in ax.get_lines() if (line.get_gid() or "").startswith("draws:")]
    assert len(dots) == data["n_users"].nunique() * 2
    assert all(len(line.get_ydata()) == 6 for line in dots)
    assert any("one draw (6 per box)" in text for text in legend_texts(ax))


# --------------------------------------------------------------------------------- Figures 6/7


@pytest.fixture(scope="module")
def community_frame(utility_config):
    rows = E.community_sweep(
        REGION_COUNTS,
        n_users_grid=[100, 200],
        settings=utility_config["gowalla"]["settings"],
        runs=4,
        replace=False,
        accountants=[("configured", utility_config["accountant"])],
        neighbouring_sensitivity=sensitivity_for(utility_config["neighbouring"]),
        delta_floor=utility_config["delta_floor"],
        estimator=utility_config["estimator"],
        seed=SEED,
        identity=("test",),
    )
    return rows.assign(region="test")


@pytest.fixture(scope="module")
def fig6_figure(community_frame):
    """Figure 6 of the community frame, drawn once for the two tests that only read it."""
    return figure_tv_boxplots(community_frame, label="Test region")


def test_fig6_titles_carry_accountant_delta_hat_and_sigma(community_frame, fig6_figure):
    figure = fig6_figure
    assert len(figure.axes) == community_frame[["epsilon", "epsilon_local"]].drop_duplicates().shape[0]
    for ax, ((epsilon, epsilon_local), data) in zip(
        figure.axes, community_frame.groupby(["epsilon", "epsilon_local"], sort=False)
    ):
        title = ax.get_title()
        gaussian = data[data["mechanism"] == "gaussian"]
        assert f"ε = {epsilon:g}, ε0 = {epsilon_local:g}" in title
        assert style.accountant_text(gaussian["accountant"].iloc[0]) in title
        assert style.format_delta(gaussian["delta"].max()) in title.replace("\n", " ")
        assert style.format_sigma(gaussian["sigma"].min()) in title and "σ" in title
    assert "4 runs per n" in figure_text(figure)


def test_fig6_gaussian_and_shuffle_boxes_have_different_colours(fig6_figure):
    figure = fig6_figure
    for ax in figure.axes:
        colour_of = {gid.split(":")[1]: patch.get_edgecolor()[:3] for gid, (patch, _) in _boxes(ax).items()}
        assert set(colour_of) == {
            "gaussian+proj",
            "shuffle",
            "shuffle+INV",
        }  # the projected Gaussian (TV <= 1)
        assert len(set(colour_of.values())) == 3
        assert colour_of["gaussian+proj"] == pytest.approx(to_rgb(style.colour_of("gaussian+proj")))


# --------------------------------------------------------------------------------- Figures 4/5


@pytest.fixture(scope="module")
def heatmap(utility_config):
    return E.heatmap_job(REGION_COUNTS, utility=utility_config, seed=SEED, region="test")


def test_heatmap_panels_share_one_log_scale_from_one_check_in(heatmap):
    cells, summary = heatmap
    figure = figure_heatmaps(cells, summary, label="Test region", **GRID)
    images = [ax.images[0] for ax in figure.axes if ax.images]
    assert len(images) == 3
    assert all(isinstance(image.norm, LogNorm) for image in images)
    assert len({(image.norm.vmin, image.norm.vmax) for image in images}) == 1
    values = cells[["original", "gaussian", "shuffle+INV"]].to_numpy()
    assert images[0].norm.vmin == pytest.approx(1 / int(summary["n_users"].iloc[0]))
    assert images[0].norm.vmax >= values.max()
    colour_bars = [ax for ax in figure.axes if not ax.images and ax.get_ylabel()]
    assert len(colour_bars) == 1 and "log scale" in colour_bars[0].get_ylabel()


def test_heatmap_counts_every_value_not_on_the_colour_scale(heatmap):
    cells, summary = heatmap
    figure = figure_heatmaps(cells, summary, label="Test region", **GRID)
    panels = [ax for ax in figure.axes if ax.images]
    assert (cells["gaussian"] < 0).any()  # the data must exercise the negative case
    for ax, column in zip(panels, ["original", "gaussian", "shuffle+INV"]):
        values = cells[column].to_numpy()
        norm = ax.images[0].norm
        texts = " ".join(legend_texts(ax))
        negative, zero = int((values < 0).sum()), int((values == 0).sum())
        below = int(((values > 0) & (values < norm.vmin)).sum())
        above = int((values > norm.vmax).sum())
        assert (f"< 0: {negative} {style.cells_word(negative)}" in texts) == bool(negative), column
        assert (f"= 0: {zero} {style.cells_word(zero)}" in texts) == bool(zero), column
        assert (f"0 < p < 1/n: {below} {style.cells_word(below)}" in texts) == bool(below), column
        assert above == 0
        hatched = [
            p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() == style.NEGATIVE_HATCH
        ]
        assert len(hatched) == negative


def test_heatmap_titles_and_integer_ticks(heatmap):
    cells, summary = heatmap
    row = summary.iloc[0]
    figure = figure_heatmaps(cells, summary, label="Test region", **GRID)
    figure.canvas.draw()
    title = figure.get_suptitle().replace("\n", " ")
    assert f"ε = {row['epsilon']:g}, ε0 = {row['epsilon_local']:g}" in title
    assert f"δ̂ = {style.format_delta(row['delta'])} [{style.accountant_text(row['accountant'])}" in title
    assert f"σ = {style.format_sigma(row['sigma'])}" in title
    # eps = eps0 with a positive bound: the title says the exact delta is 0 there
    assert ("δ = 0 also holds" in title) == (row["epsilon"] >= row["epsilon_local"] and row["delta"] > 0)
    for ax in [ax for ax in figure.axes if ax.images]:
        for ticks in (ax.get_xticks(), ax.get_yticks()):
            assert np.all(ticks == np.round(ticks))


# ------------------------------------------------------------------------------------ crossover


@pytest.fixture(scope="module")
def crossover_rows(utility_config):
    counts = E.synthetic_dataset(utility_config, 300, SEED)
    return crossover_sweep(
        counts,
        epsilon_locals=[1.0, 2.0, 4.0],
        epsilons=[0.5, 1.5, 3.0],
        accountants=["biswas-printed", "biswas-exact"],
        neighbouring_sensitivity=np.sqrt(2),
        delta_floor=1e-60,
        estimator="inv-projection",
        replicates=5,
        seed=SEED,
        identity=("test",),
    )


def test_crossover_panels_share_one_symmetric_colour_scale(crossover_rows):
    figure = figure_crossover(crossover_rows)
    images = [ax.images[0] for ax in figure.axes if ax.images]
    assert len(images) == crossover_rows["accountant"].nunique()
    limit = np.abs(
        np.log10(crossover_rows["l1_half_shuffle_inv_mean"] / crossover_rows["tv_gaussian_proj_mean"])
    ).max()
    for image in images:
        assert image.norm.vmin == pytest.approx(-limit) and image.norm.vmax == pytest.approx(limit)


def test_crossover_compares_the_projected_gaussian_in_the_shared_outcome_colours(crossover_rows):
    """The outcome colours mean the same as in every other figure, and the Gaussian is the projected one."""
    from matplotlib.colors import to_rgba

    assert (crossover_rows["tv_gaussian_proj_mean"] <= 1.0).all()
    ratio = crossover_log_ratio(crossover_rows)
    assert ratio == pytest.approx(
        np.log10(crossover_rows["l1_half_shuffle_inv_mean"] / crossover_rows["tv_gaussian_proj_mean"])
    )
    figure = figure_crossover(crossover_rows)
    image = next(ax.images[0] for ax in figure.axes if ax.images)
    assert to_rgba(image.cmap(0.0)) == pytest.approx(to_rgba(style.SHUFFLE_BETTER))  # low = shuffle better
    assert to_rgba(image.cmap(1.0)) == pytest.approx(to_rgba(style.CURATOR_BETTER))
    assert "Blue: shuffle better" in figure.get_suptitle() and "red: curator" in figure.get_suptitle()


def test_crossover_projection_leaves_the_raw_columns_alone(crossover_rows):
    """The projected columns come from the same draws: the raw ones are those the sweep wrote before."""
    assert (
        crossover_rows["gaussian_better"]
        == (crossover_rows["l1_half_gaussian_mean"] < crossover_rows["l1_half_shuffle_inv_mean"])
    ).all()
    assert (
        crossover_rows["gaussian_proj_better"]
        == (crossover_rows["tv_gaussian_proj_mean"] < crossover_rows["l1_half_shuffle_inv_mean"])
    ).all()


def test_crossover_hatches_floored_cells_and_titles_name_the_accountant(crossover_rows):
    figure = figure_crossover(crossover_rows)
    panels = [ax for ax in figure.axes if ax.images]
    assert crossover_rows["delta_floored"].any()  # floor 1e-60: some cells must be floored
    for ax, (accountant, rows) in zip(panels, crossover_rows.groupby("accountant", sort=False)):
        assert style.accountant_text(accountant) in ax.get_title()
        hatched = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_hatch() == style.FLAG_HATCH]
        assert len(hatched) == int(rows["delta_floored"].sum())
        if len(hatched):
            assert any(
                f"({len(hatched)} {style.cells_word(len(hatched))})" in text for text in legend_texts(ax)
            )
        assert not [t for t in ax.texts if t.get_text() == "floor"]  # no 6-pt labels any more
    first = crossover_rows.iloc[0]
    assert (
        f"n = {int(first['n_users']):,}, k = {int(first['k'])}, {int(first['replicates'])} draws"
        in figure_text(figure)
    )


def test_crossover_panels_lead_with_the_valid_accountants_and_mark_the_printed_one(crossover_rows):
    """The printed eq. (6) panel came first (panel (a)) and looked like a result; now the valid accountants'
    panels lead and a panel whose δ̂ is not a guarantee says so; the data and grid line is under the title."""
    rows = pd.concat(
        [
            crossover_rows,
            crossover_rows[crossover_rows["accountant"] == "biswas-exact"].assign(
                accountant="weak-adversary"
            ),
        ],
        ignore_index=True,
    )
    figure = figure_crossover(rows, data_label="grid: quick profile")
    titles = [ax.get_title() for ax in figure.axes if ax.images]
    assert titles[0].startswith("(a) δ̂ from weak-adversary") and "a guarantee" in titles[0]
    assert all("NOT a guarantee" in title for title in titles[1:])
    assert "grid: quick profile" in figure._suptitle.get_text()
