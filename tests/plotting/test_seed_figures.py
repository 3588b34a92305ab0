"""The seed papers' figures and the bracket figure say no more than their data: curves that coincide are
named, a legend lists only drawn curves at 8 pt or more, a colour keeps its meaning in every panel, the
trivial bound is drawn where bounds exceed it, no line crosses a gap in n, and every figure has a title
with the grid and data it was computed on. Each check has a probe."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.font_manager import FontProperties

from shuffledp.experiments.koskela import BALLE_CURVE, BALLE_FORMULA_CURVE
from shuffledp.plotting import balle as balle_plot
from shuffledp.plotting import bracket as bracket_plot
from shuffledp.plotting import girgis as girgis_plot
from shuffledp.plotting import koskela as koskela_plot
from shuffledp.plotting import style


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def legend_problems(figure) -> list[str]:
    """Legend texts below 8 pt, and a figure without the title-and-label (a title, then "grid: ...")."""
    problems = []
    legends = [*figure.legends, *(ax.get_legend() for ax in figure.axes if ax.get_legend() is not None)]
    for legend in legends:
        for text in legend.get_texts():
            if FontProperties(size=text.get_fontsize()).get_size_in_points() < style.MIN_FONT_POINTS:
                problems.append(f"legend text under 8 pt: {text.get_text()[:40]}")
    title = figure._suptitle.get_text() if figure._suptitle is not None else ""
    if "\ngrid: " not in title or "data: " not in title:
        problems.append(f"no title with grid and data label: {title[:60]!r}")
    return problems


def test_the_legend_check_finds_small_type_and_a_missing_label():
    figure, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], label="a curve")
    ax.legend(fontsize="x-small")
    problems = legend_problems(figure)
    assert any("under 8 pt" in p for p in problems) and any("no title" in p for p in problems)
    style.title_and_label(figure, "A title", "grid: x = 1 to 2; data: a.csv")
    ax.legend(fontsize=8)
    assert legend_problems(figure) == []


# ------------------------------------------------------------------ Koskela et al.


def _koskela_fig3() -> tuple[pd.DataFrame, pd.DataFrame]:
    x = np.array([1e-4, 1e-5, 1e-6])
    rows = []
    for compositions in (1, 4):
        for curve, accountant, kind, values in (
            ("weak adversary", "weak-adversary", "upper bound", 0.5 + 0.1 * np.log10(1 / x)),
            ("ours lower", "worst-case-lower", "lower bound", (0.5 + 0.1 * np.log10(1 / x)) * 0.999),
            ("strong adversary", "strong-adversary", "upper bound", 1.0 + 0.1 * np.log10(1 / x)),
            (BALLE_CURVE, "balle-blanket", "upper bound", np.full(3, np.inf)),
            (
                BALLE_FORMULA_CURVE,
                "balle-blanket",
                "formula outside its theorem's conditions",
                np.full(3, 50.0),
            ),
        ):
            rows += [
                {
                    "figure": 3,
                    "curve": curve,
                    "accountant": accountant,
                    "kind": kind,
                    "compositions": compositions,
                    "x_name": "delta",
                    "x": xi,
                    "value_name": "epsilon",
                    "value": v,
                }
                for xi, v in zip(x, values)
            ]
    published = pd.DataFrame(
        {"figure": "3", "curve": "weak adversary", "compositions": 1, "x_name": "delta", "x": x, "value": 0.9}
    )
    return pd.DataFrame(rows), published


def test_coincident_curves_are_found_within_the_tolerance_only():
    frame = pd.DataFrame(
        {
            "curve": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
            "x": [1, 2, 3] * 3,
            "value": [1.0, 2.0, 3.0, 1.001, 2.002, 3.003, 1.5, 2.5, 3.5],
        }
    )
    groups = koskela_plot.coincident_curves(frame)
    assert [sorted(m) for m, _ in groups] == [["a", "b"]] and groups[0][1] == pytest.approx(0.001)
    # probe: two curves 5 % apart are not coincident
    assert koskela_plot.coincident_curves(frame[frame["curve"] != "b"]) == []


def test_koskela_fig3_names_the_coinciding_curves_and_lists_only_drawn_curves():
    frame, published = _koskela_fig3()
    section = {"n_users": 1000, "k": 4, "epsilon_local": 2.565}
    figure = koskela_plot.figure_koskela(frame, published, number=3, section=section)
    notes = [t.get_text() for ax in figure.axes for t in ax.texts if t.get_gid() == "coincide"]
    notes = [n.replace("\n", " ") for n in notes]
    assert len(notes) == 2 and all("weak adversary" in n and "ours lower" in n for n in notes)
    labels = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert not any(BALLE_CURVE in label for label in labels)  # neither Balle curve is drawn (∞, off scale)
    assert any(label.startswith("weak adversary") for label in labels)
    title = " ".join(figure._suptitle.get_text().split())  # the data label wraps the title's lines
    assert f"not drawn: {BALLE_CURVE} (no finite value here)" in title
    assert legend_problems(figure) == []


def test_koskela_fig1_draws_one_panel_per_number_of_compositions():
    frame, published = _koskela_fig3()
    frame = frame[frame["curve"].isin(["weak adversary", "strong adversary"])].assign(figure=1)
    figure = koskela_plot.figure_koskela(
        frame, published.assign(figure="1"), number=1, section={"n_users": 10_000, "epsilon_local": 4}
    )
    panels = [ax for ax in figure.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["n_c = 1", "n_c = 4"]
    assert all(len([line for line in ax.get_lines() if line.get_gid()]) == 2 for ax in panels)
    assert legend_problems(figure) == []


# ------------------------------------------------------------------ Balle et al.


def _balle() -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    n = np.array([100.0, 1000.0, 10000.0])
    rows = []
    for panel, curves in (
        (
            "ii",
            [("Hoeffding, RR-2", "balle-hoeffding-krr"), ("Hoeffding, Laplace", "balle-hoeffding-laplace")],
        ),
        ("iii", [("Hoeffding, Laplace", "balle-hoeffding-laplace"), ("Bennett, RR-2", "balle-bennett-krr")]),
    ):
        for curve, accountant in curves:
            rows += [
                {
                    "panel": panel,
                    "curve": curve,
                    "role": "published",
                    "accountant": accountant,
                    "n": v,
                    "value": 1.0 + i,
                }
                for i, v in enumerate(n)
            ]
    published = pd.DataFrame(
        {"panel": "ii", "curve": "Hoeffding, RR-2", "code": "current", "x": n, "value": [1.0, 2.0, 3.0]}
    )
    sections = {p: {"delta": 1e-6, "epsilon": 0.1, "value": "epsilon_local"} for p in ("ii", "iii")}
    return pd.DataFrame(rows), published, sections


def test_balle_keeps_one_colour_per_randomizer_in_every_panel():
    frame, published, sections = _balle()
    figure = balle_plot.figure_balle(frame, published, sections=sections)
    colours = {
        line.get_gid(): line.get_color() for ax in figure.axes for line in ax.get_lines() if line.get_gid()
    }
    assert colours["ours ii Hoeffding, Laplace"] == colours["ours iii Hoeffding, Laplace"]
    assert colours["ours ii Hoeffding, RR-2"] == colours["ours iii Bennett, RR-2"]  # same randomizer
    assert colours["ours ii Hoeffding, RR-2"] != colours["ours ii Hoeffding, Laplace"]
    assert legend_problems(figure) == []
    # probe: the randomizer decides the colour, the panel's order of curves does not
    assert style.randomizer_of("Hoeffding, RR-100", "balle-hoeffding-krr") == "RR-100"
    assert style.randomizer_of("Hoeffding", "balle-hoeffding-krr") == "RR-k, k = ⌊n^(1/3)⌋"
    assert style.randomizer_of("EFMRTT'19", "erlingsson") == "generic ε0-LDP"


# ------------------------------------------------------------------ Girgis et al.


def test_girgis_draws_the_trivial_bound_and_names_the_curves_above_it():
    orders = np.arange(2, 6, dtype=float)
    frame = pd.concat(
        [
            pd.DataFrame(
                {"curve": curve, "accountant": name, "epsilon_local": 1.0, "order": orders, "rdp": values}
            )
            for curve, name, values in (
                ("Thm 3.1", "girgis-rdp", 0.01 * orders),
                ("eq. (9)", "erlingsson-rdp", 0.5 * orders),  # above eps0 = 1 from lambda = 3
            )
        ]
    )
    figure = girgis_plot.figure_girgis(frame, n_users=1000)
    ax = figure.axes[0]
    trivial = [line for line in ax.get_lines() if line.get_gid() == "trivial eps0=1"]
    assert len(trivial) == 1 and list(trivial[0].get_ydata()) == [1.0, 1.0]
    assert "above ε0 at some λ: eq. (9)" in ax.get_title() and "Thm 3.1" not in ax.get_title()
    assert legend_problems(figure) == []


# ------------------------------------------------------------------ the bracket


def test_bracket_joins_only_neighbours_at_most_ten_times_apart():
    assert bracket_plot.joined_neighbours([2, 10, 1000, 10000]) == [(0, 1), (2, 3)]
    # probe: the old figure joined every neighbour, n = 10 to n = 1,000 included
    assert (1, 2) not in bracket_plot.joined_neighbours([2, 10, 1000, 10000])
    frame = pd.DataFrame(
        {
            "n_users": [2, 10, 1000, 10000],
            "k": 3,
            "epsilon_local": 1.0,
            "delta": 1e-6,
            "eps_lower": [0.9, 0.8, 0.3, 0.1],
            "eps_upper": [0.91, 0.81, 0.31, 0.11],
            "status": "ok",
        }
    )
    figure = bracket_plot.figure_bracket(frame)
    segments = [line for line in figure.axes[0].get_lines() if ":segment" in str(line.get_gid())]
    assert sorted(tuple(line.get_xdata()) for line in segments) == [(2.0, 10.0), (1000.0, 10000.0)]
    assert legend_problems(figure) == []
