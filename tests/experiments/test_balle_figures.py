"""Balle et al.'s Figure 2 (the Laplace blanket, ``blanket_densities``) and the two Sec. 6 claims the
corrected Bennett code overturns (``overturned_claims``).

Truths, independent of the library: each density integrates to 1 (scipy's adaptive quadrature on the
library's own values); the mixture identity gamma omega + (1 - gamma) omega_x = mu_x; gamma equals the
numerically integrated pointwise minimum over inputs x in [0, 1] of the Laplace densities (the definition of
the total variation similarity, Sec. 5.1), not its closed form; the claim counts are recounted by a plain
loop over the curves."""

from __future__ import annotations

import itertools
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
from scipy import integrate

from shuffledp.experiments.balle import (
    CLAIM_COLUMNS,
    blanket_densities,
    blanket_density_values,
    overturned_claims,
    panel_frame,
)
from shuffledp.tables import NOT_REPRODUCED, REPRODUCED

matplotlib.use("Agg")


def _density(eps0, component, x):
    """The library's density as a function of one y (for quadrature): the values of ``blanket_densities`` at
    [y] without building its frame for each of the quadrature's points (the frame's density column is these
    values, bit for bit: test_the_frame_is_the_density_values)."""
    column = {"blanket": None, "output": 1, "data-dependent": 2}[component]

    def f(y):
        _, blanket, parts = blanket_density_values(eps0, [0.0 if x is None else x], [y])
        return float((blanket if column is None else parts[0][column])[0])

    return f


def _frame_from_values(values) -> np.ndarray:
    """The density column that ``blanket_densities`` must hold, in its row order, from ``values``."""
    _, blanket, parts = values
    return np.concatenate([blanket, *(array for _, output, rest in parts for array in (output, rest))])


@pytest.mark.parametrize("eps0", [0.5, 6.0])
def test_the_frame_is_the_density_values(eps0):
    """``blanket_densities``' frame holds ``blanket_density_values`` bit for bit, one y at a time as the
    quadrature asks and on a grid; probe: values with one density moved by one ulp do not match."""
    inputs = [0.0, 0.3, 0.8, 1.0]
    for y in ([-1.25], [0.4], np.linspace(-4.0, 5.0, 37)):
        frame = blanket_densities(eps0, inputs, y)
        values = blanket_density_values(eps0, inputs, y)
        assert frame["gamma"].iloc[0] == values[0]
        assert frame["component"].tolist() == ["blanket"] * len(y) + [
            component for _ in inputs for component in ("output", "data-dependent") for _ in y
        ]
        np.testing.assert_array_equal(frame["density"].to_numpy(), _frame_from_values(values))
        gamma, blanket, parts = values
        (x, output, rest), *others = parts
        moved = rest.copy()
        moved[-1] = np.nextafter(moved[-1], 1.0)
        planted = (gamma, blanket, [(x, output, moved), *others])
        assert not np.array_equal(frame["density"].to_numpy(), _frame_from_values(planted))


@pytest.mark.parametrize("eps0", [0.5, 2.0, 6.0])
def test_each_density_has_mass_one(eps0):
    for component, x in [
        ("blanket", None),
        ("output", 0.0),
        ("output", 0.3),
        ("data-dependent", 0.0),
        ("data-dependent", 1.0),
        ("data-dependent", 0.8),
    ]:
        f = _density(eps0, component, x)
        # kinks at 0, 1/2, x, 1; tails beyond are e^-eps0|y|: integrate the pieces to infinity
        points = sorted({0.0, 0.5, 1.0, 0.0 if x is None else x})
        mass = integrate.quad(f, -np.inf, points[0])[0] + integrate.quad(f, points[-1], np.inf)[0]
        mass += sum(integrate.quad(f, a, b, epsabs=1e-13)[0] for a, b in itertools.pairwise(points) if b > a)
        assert mass == pytest.approx(1.0, abs=1e-8), (component, x)


@pytest.mark.parametrize("eps0", [0.5, 2.0, 6.0])
def test_mixture_identity_and_nonnegative_parts(eps0):
    y = np.linspace(-4.0, 5.0, 2001)
    frame = blanket_densities(eps0, [0.0, 0.25, 0.5, 1.0], y)
    gamma = frame["gamma"].iloc[0]
    blanket = frame[frame["component"] == "blanket"]["density"].to_numpy()
    for x in (0.0, 0.25, 0.5, 1.0):
        mu = frame[(frame["component"] == "output") & (frame["input"] == x)]["density"].to_numpy()
        rest = frame[(frame["component"] == "data-dependent") & (frame["input"] == x)]["density"].to_numpy()
        assert np.all(rest >= 0.0)
        assert np.allclose(gamma * blanket + (1.0 - gamma) * rest, mu, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("eps0", [0.5, 2.0, 6.0])
def test_gamma_is_the_mass_under_every_input(eps0):
    """gamma = integral of min over x in [0, 1] of (eps0/2) e^(-eps0 |y - x|) dy, by quadrature over a grid of x."""
    xs = np.linspace(0.0, 1.0, 201)  # the minimum over x is at x = 0 or 1: the grid contains both

    def lowest(y):
        return float(np.min(0.5 * eps0 * np.exp(-eps0 * np.abs(y - xs))))

    mass = sum(
        integrate.quad(lowest, a, b, epsabs=1e-13)[0]
        for a, b in [(-np.inf, 0.0), (0.0, 0.5), (0.5, 1.0), (1.0, np.inf)]
    )
    assert blanket_densities(eps0, [0.0], [0.0])["gamma"].iloc[0] == pytest.approx(mass, rel=1e-9)


def _recount(frame, panel, better, worse, smaller_is_better):
    """Plain loop: (n where better is strictly ahead, n where strictly behind)."""
    rows = frame[(frame["panel"] == panel) & (frame["role"] == "published")]
    a = {
        int(n): v for n, v in zip(rows[rows["curve"] == better]["n"], rows[rows["curve"] == better]["value"])
    }
    b = {int(n): v for n, v in zip(rows[rows["curve"] == worse]["n"], rows[rows["curve"] == worse]["value"])}
    ahead = behind = 0
    for n in sorted(set(a) & set(b)):
        if a[n] == b[n]:
            continue
        if (a[n] < b[n]) == smaller_is_better:
            ahead += 1
        else:
            behind += 1
    return ahead, behind


def _frame(values_i, values_iii):
    """A hand-made Figure 3 frame: panel (i) (eps, Bennett vs Hoeffding) and (iii) (eps0, RR-2 pair)."""
    rows = []
    for panel, values in (("i", values_i), ("iii", values_iii)):
        names = ("Bennett", "Hoeffding") if panel == "i" else ("Bennett, RR-2", "Hoeffding, RR-2")
        for n, (first, second) in zip((100, 200, 400, 800), values):
            rows += [
                {"panel": panel, "curve": names[0], "role": "published", "n": n, "value": first},
                {"panel": panel, "curve": names[1], "role": "published", "n": n, "value": second},
            ]
    return pd.DataFrame(rows)


def test_claim_counts_and_verdicts_on_hand_made_curves():
    # (i) Hoeffding ahead at small n, Bennett at large n: their sentence holds; (iii) Bennett ahead except one level n
    crossing = _frame(
        [(0.3, 0.2), (0.2, 0.2), (0.1, 0.15), (0.05, 0.1)], [(1.0, 0.9), (2.0, 1.9), (3.0, 3.0), (4, 3)]
    )
    table = overturned_claims(crossing)
    assert list(table.columns) == CLAIM_COLUMNS
    i, iii = table.iloc[0], table.iloc[1]
    assert (i["claim_holds"], i["claim_fails"], i["verdict"]) == (2, 1, REPRODUCED)
    assert (iii["claim_holds"], iii["claim_fails"], iii["verdict"]) == (
        3,
        0,
        NOT_REPRODUCED,
    )  # level at n = 400
    assert "level at 1" in iii["note"]
    # Hoeffding ahead everywhere in (i): no crossover, so the sentence fails
    never = _frame([(0.3, 0.2)] * 4, [(2.0, 1.0)] * 4)
    table = overturned_claims(never)
    assert list(table["verdict"]) == [NOT_REPRODUCED, REPRODUCED]
    assert (table.iloc[0]["claim_holds"], table.iloc[0]["claim_fails"]) == (0, 4)


@pytest.fixture(scope="module")
def figure3_sample():
    """Panels (i) and (iii) computed by the stage's own function at the configured parameters, on 4 n each."""
    from pathlib import Path

    import yaml

    panels = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "config.yaml").read_text())[
        "balle"
    ]["panels"]
    frames = []
    for panel, keep in (("i", ("Hoeffding", "Bennett")), ("iii", ("Hoeffding, RR-2", "Bennett, RR-2"))):
        section = dict(panels[panel])
        section["n"] = {**section["n"], "num": 4}
        section["curves"] = {k: v for k, v in section["curves"].items() if k in keep}
        section["references"] = {}
        frames.append(panel_frame(panel, section))
    return pd.concat(frames, ignore_index=True)


def test_overturned_claims_recounted_on_the_configured_curves(figure3_sample):
    """On the configured panels (4 n each, the grid's ends included): the library's counts equal a plain
    recount, and the two sentences fail as the full run finds (results/balle/balle_claims.csv)."""
    table = overturned_claims(figure3_sample).set_index("panel")
    for panel, better, worse, smaller in (
        ("i", "Bennett", "Hoeffding", True),
        ("iii", "Bennett, RR-2", "Hoeffding, RR-2", False),
    ):
        holds, fails = _recount(figure3_sample, panel, better, worse, smaller)
        assert (table.loc[panel, "claim_holds"], table.loc[panel, "claim_fails"]) == (holds, fails)
        assert table.loc[panel, "points"] == 4 and fails == 4  # Hoeffding ahead at every n computed
        assert table.loc[panel, "verdict"] == NOT_REPRODUCED


def test_figure_blanket_draws_two_panels():
    import matplotlib.pyplot as plt

    from shuffledp.plotting.balle import figure_blanket

    figure = figure_blanket(blanket_densities(2.0, [0.0, 0.5, 1.0], np.linspace(-3, 4, 141)))
    assert len(figure.axes) == 2 and math.isclose(
        float(figure.axes[0].get_ylim()[0]), figure.axes[1].get_ylim()[0]
    )
    plt.close(figure)


def test_figure3_legends_sit_outside_the_data_and_the_key_names_grey_lines_as_references(figure3_sample):
    """Each panel's legend box does not overlap its axes (no curve hidden, panel iii had 17 entries over the
    data); the bottom key calls grey lines our references, and only the coloured dotted line Erlingsson's."""
    from pathlib import Path

    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt
    import yaml

    from shuffledp.plotting import style
    from shuffledp.plotting.balle import figure_balle
    from shuffledp.reference import load_reference

    panels = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "config.yaml").read_text())[
        "balle"
    ]["panels"]
    figure = figure_balle(figure3_sample, load_reference("balle_figures"), sections=panels)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    drawn = [ax for ax in figure.axes if ax.get_visible() and ax.get_legend() is not None]
    assert len(drawn) == 2
    for ax in drawn:
        box, legend = ax.get_window_extent(renderer), ax.get_legend().get_window_extent(renderer)
        assert not box.overlaps(legend), ax.get_title()
    key = figure.legends[0]
    for handle, text in zip(key.legend_handles, key.get_texts()):
        red, green, blue = mcolors.to_rgb(handle.get_color())
        reference = red == green == blue and handle.get_marker() == "x"  # grey with crosses
        assert reference == ("reference" in text.get_text()), text.get_text()
        assert ("Erlingsson" in text.get_text()) == (handle.get_linestyle() == ":" and not reference)
        # the key's colours are the randomizers', the same meaning in every panel
        if text.get_text().startswith("colour: "):
            name = text.get_text().removeprefix("colour: ")
            assert mcolors.to_hex(handle.get_color()) == mcolors.to_hex(style.RANDOMIZER_COLOURS[name])
    plt.close(figure)
