"""Koskela et al.'s Figures 1-3 (shuffledp.experiments.koskela): curves, dispatch, verdicts, figures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.composition import ComposedAccountant
from shuffledp.experiments import koskela as K
from shuffledp.reference import load_reference

FIG1 = {
    "n_users": 300,
    "epsilon_local": 2.0,
    "k": 2,
    "epsilon": {"start": 0.2, "stop": 1.0, "num": 5},
    "compositions": [1, 2, 4],
    "accountants": {"PLD": "clones-krr"},
}
FIG2 = {
    "n_users": 20000,
    "subsample": 0.05,
    "epsilon_local": 2.0,
    "k": 2,
    "delta": 1e-5,
    "compositions": [1, 10, 100],
    "accountants": {"PLD": "clones-krr", "Girgis et al. RDP": "girgis-rdp"},
}
FIG3 = {
    "n_users": 200,
    "k": 4,
    "epsilon_local": math.log(13),
    "delta": {"log10_start": -4, "log10_stop": -6, "num": 3},
    "compositions": [1, 4],
    "accountants": {"weak adversary": "weak-adversary", "strong adversary": "strong-adversary"},
    "extra_accountants": ["worst-case-lower"],
}


def test_dispatch_uses_the_registry_for_rdp_and_pld_composition_otherwise():
    rdp = K.composed("girgis-rdp", epsilon_local=2.0, n_users=1000, k=2, compositions=10, subsample=0.1)
    assert rdp.compositions == 10 and rdp.subsample == 0.1
    assert isinstance(
        K.composed("clones-krr", epsilon_local=2.0, n_users=1000, k=2, compositions=10), ComposedAccountant
    )


@pytest.fixture(scope="module")
def fig1():
    return K.figure_frame(1, FIG1)


def test_fig1_delta_grows_with_compositions_and_one_round_matches_the_accountant(fig1):
    assert list(fig1.columns) == K.CURVE_COLUMNS
    wide = fig1.pivot_table(index="x", columns="compositions", values="value")
    assert (np.diff(wide.to_numpy(), axis=1) > 0).all()  # more rounds, more delta, at every eps
    single = get_accountant("clones-krr", epsilon_local=2.0, n_users=300, k=2).delta_for_epsilon(
        wide.index.to_numpy()
    )
    # one round through the PLD is an upper bound within the discretisation (eps shifted by at most 1e-5)
    assert (wide[1].to_numpy() >= single * (1 - 1e-9)).all()
    shifted = get_accountant("clones-krr", epsilon_local=2.0, n_users=300, k=2).delta_for_epsilon(
        wide.index.to_numpy() - 2e-5
    )
    assert (wide[1].to_numpy() <= shifted * (1 + 1e-6) + 1e-14).all()


def test_fig2_rdp_is_above_the_pld_of_the_subsampled_pair_and_grows_with_rounds():
    frame = K.figure_frame(2, FIG2)
    pld = frame[frame["curve"] == "PLD"].set_index("compositions")["value"]
    rdp = frame[frame["curve"] == "Girgis et al. RDP"].set_index("compositions")["value"]
    assert (pld < rdp).all()  # both are upper bounds; the PLD of a dominating pair is the tighter one
    assert pld.is_monotonic_increasing and rdp.is_monotonic_increasing
    assert (frame["x"] == frame["compositions"]).all()


def _curves_of(frame: pd.DataFrame, section) -> pd.DataFrame:
    """The rows of ``frame`` whose (curve, accountant) is one of ``section``'s curves: Figure 3's rows of each
    accountant and T are computed on their own (``_fig3_rows``), so these are the rows ``figure_frame`` gives
    for ``section`` alone (checked bit for bit in test_figures_draw_one_panel_per_composition_count_in_fig1_and_fig3)."""
    curves = [
        *section["accountants"].items(),
        *((name, name) for name in section.get("extra_accountants", [])),
    ]
    chosen = pd.Series(list(zip(frame["curve"], frame["accountant"])), index=frame.index).isin(curves)
    return frame[chosen]


def test_fig3_lower_bound_below_weak_below_strong(fig3_with_balle):
    """FIG3's curves, read from the module's larger Figure 3 frame (the same rows: ``_curves_of``)."""
    frame = _curves_of(fig3_with_balle[0], FIG3)
    assert set(frame["accountant"]) == {"weak-adversary", "strong-adversary", "worst-case-lower"}
    wide = frame.pivot_table(index=["compositions", "x"], columns="accountant", values="value")
    assert (wide["worst-case-lower"] <= wide["weak-adversary"] + 1e-9).all()
    assert (wide["weak-adversary"] < wide["strong-adversary"]).all()
    assert set(frame["kind"]) == {"upper bound", "lower bound"}


def _published(values, *, figure=3, curve="weak adversary", compositions=1, value_name="epsilon"):
    return pd.DataFrame(
        [
            {
                "figure": str(figure),
                "curve": curve,
                "compositions": str(compositions),
                "x_name": "delta",
                "x": repr(x),
                "value_name": value_name,
                "value": repr(v),
                "source": "test",
            }
            for x, v in values
        ]
    )


def _ours(values, *, figure=3, curve="weak adversary", compositions=1, value_name="epsilon"):
    return pd.DataFrame(
        [
            {
                "figure": figure,
                "curve": curve,
                "accountant": "weak-adversary",
                "kind": "upper bound",
                "compositions": compositions,
                "x_name": "delta",
                "x": x,
                "value_name": value_name,
                "value": v,
                "seconds": 0.0,
            }
            for x, v in values
        ]
    )


def test_verdicts_reproduced_within_tolerance_and_not_beyond_with_the_known_cause():
    points = [(1e-4, 0.40), (1e-5, 0.46), (1e-6, 0.52)]
    published = _published(points)
    close = K.curve_verdicts(
        _ours([(x, v * 1.005) for x, v in points]), published, tolerance=0.01, smallest_delta=0
    )
    assert close["verdict"].tolist() == ["reproduced"] and close["compared"].tolist() == [3]
    assert close["max_relative_difference"].iloc[0] == pytest.approx(0.005)
    far = K.curve_verdicts(
        _ours([(x, v * 1.05) for x, v in points]),
        published,
        tolerance=0.01,
        smallest_delta=0,
        notes={"3/weak adversary": "a documented cause"},
    )
    assert (
        far["verdict"].tolist() == ["not reproduced"] and far["known_cause"].iloc[0] == "a documented cause"
    )
    assert close["known_cause"].iloc[0] == ""  # a cause is given only where the curve is not reproduced
    missing = K.curve_verdicts(
        _ours([]).reindex(columns=K.CURVE_COLUMNS), published, tolerance=0.01, smallest_delta=0
    )
    assert missing["verdict"].tolist() == ["not reproduced"] and missing["compared"].tolist() == [0]


def test_verdicts_skip_published_deltas_below_the_linear_space_resolution():
    points = [(0.1, 1e-3), (0.5, 1e-8), (0.9, 1e-14)]
    published = _published(points, figure=1, curve="PLD", value_name="delta")
    ours = _ours([(0.1, 1e-3), (0.5, 1e-8), (0.9, 5e-14)], figure=1, curve="PLD", value_name="delta")
    verdict = K.curve_verdicts(ours, published, tolerance=0.01, smallest_delta=1e-10)
    assert verdict["compared"].tolist() == [2] and verdict["verdict"].tolist() == ["reproduced"]


def test_transcribed_curves_cover_the_three_figures():
    # values cited from their pickles (docs/koskela-figures.md): Girgis RDP at n_c = 10, weak A_w at delta = 1e-4
    reference = load_reference("koskela_figures")
    assert set(reference["figure"]) == {"1", "2", "3"}
    girgis = reference[(reference["figure"] == "2") & (reference["curve"] == "Girgis et al. RDP")]
    assert float(girgis[girgis["x"].astype(float) == 10.0]["value"].iloc[0]) == pytest.approx(
        0.7308, abs=1e-4
    )
    weak = reference[(reference["curve"] == "weak adversary") & (reference["compositions"] == "1")]
    assert float(weak["value"].iloc[0]) == pytest.approx(0.3895, abs=1e-4)
    assert len(reference) == 8 * 60 + 2 * 7 + 3 * 3 * 5  # Fig. 1: PLD and RDP, n_c = 1..4


def test_figures_draw_one_panel_per_composition_count_in_fig1_and_fig3(fig1, fig3_with_balle):
    from shuffledp.plotting.koskela import figure_koskela

    reference = load_reference("koskela_figures")
    figure = figure_koskela(
        fig1, reference[reference["figure"] == "1"], number=1, section=FIG1, smallest_delta=1e-10
    )
    # one panel per n_c (drawn together, the 12 curves of Fig. 1 merged at small ε)
    assert [ax.get_title() for ax in figure.axes if ax.get_visible()] == [
        f"n_c = {int(c)}" for c in sorted(fig1["compositions"].unique())
    ]
    assert "Fig. 1" in figure._suptitle.get_text()
    weak = {**FIG3, "accountants": {"weak adversary": "weak-adversary"}, "extra_accountants": []}
    frame = K.figure_frame(3, weak)
    figure = figure_koskela(frame, reference[reference["figure"] == "3"], number=3, section=FIG3)
    assert [ax.get_title() for ax in figure.axes] == ["n_c = 1", "n_c = 4"]
    # the curve computed alone is, bit for bit, its rows of the module's larger Figure 3 frame (what
    # _curves_of reads); probe: a value moved by one ulp is seen
    columns = [column for column in K.CURVE_COLUMNS if column != "seconds"]
    alone = frame[columns].reset_index(drop=True)
    read = _curves_of(fig3_with_balle[0], weak)[columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(read, alone, check_exact=True)
    moved = read.copy()
    moved.loc[0, "value"] = np.nextafter(moved.loc[0, "value"], np.inf)
    with pytest.raises(AssertionError):
        pd.testing.assert_frame_equal(moved, alone, check_exact=True)


# The recorded checks of their Fig. 1 RDP and Fig. 2 PLD curves (tools/verify_koskela_fig{1_rdp,2_pld}.py)


def _check(name):
    frame = load_reference(name)
    for column in ("compositions", "x", "value", "epsilon"):
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame


def test_recorded_fig1_check_their_rdp_is_the_order_shifted_sum_over_their_atoms():
    check = _check(K.RDP_CHECK)
    rdp = check[check["quantity"] == "rdp"].pivot(index="x", columns="variant", values="value")
    theirs, ours = rdp["their get_RDP"], rdp["ours D_lambda"]
    visited = rdp["lines 110, 114 recomputed on the atoms their loops visit"]
    finite = np.isfinite(theirs)
    assert finite.sum() >= 250 and np.allclose(theirs[finite], visited[finite], rtol=1e-8, atol=0)
    assert theirs.iloc[0] > 2.5 * ours.iloc[0]  # order 2: 2 D_3 against D_2
    delta = check[check["quantity"] == "delta"].pivot_table(
        index=["compositions", "x"], columns="variant", values="value"
    )
    assert np.allclose(
        delta["stored"], delta["lines 110, 114 recomputed on the atoms their loops visit"], rtol=1e-8
    )


def test_recorded_fig2_check_line_455_predicts_their_curve_and_line_125_makes_the_deficit():
    check = _check(K.PLD_CHECK)
    table = check.dropna(subset=["compositions"]).pivot_table(
        index="compositions", columns="variant", values="epsilon"
    )
    table = table.drop(index=1)
    stored = table["stored (eps_fig1_pld.p)"]
    assert np.allclose(table["prediction from line 455: log(1 - delta) + n_c x deficit"], stored, rtol=0.01)
    assert np.allclose(table["their functions as written"], stored, rtol=0.01)
    one = check[check["compositions"].isna() | (check["compositions"] == 1)].set_index("variant")["epsilon"]
    assert one.iloc[0] == 0.0  # line 125 as written rebuilds their omega cell for cell
    assert (
        one["one round, pair's ratio: -log E[e^-X]"]
        < 1e-12
        < one["one round, line 125 as written: -log E[e^-X]"]
    )
    fixed = table["lines 125 and 455 replaced"]
    ours = K.composed("clones-krr", epsilon_local=3.0, n_users=100_000, k=2, compositions=10, subsample=0.01)
    assert ours.epsilon_for_delta(1e-5) <= fixed[10] <= 1.1 * ours.epsilon_for_delta(1e-5)
    notes = K.known_differences()
    assert "line 110" in notes["1/RDP"] and "line 455" in notes["2/PLD"] and "line 125" in notes["2/PLD"]


def test_recorded_lower_bound_is_above_their_curve_at_small_compositions_and_below_our_upper_bound():
    check = _check(K.LOWER_CHECK)
    for column in ("lower_bound", "stored"):
        check[column] = pd.to_numeric(check[column])
    below = K.below_lower_bound(check)
    assert [n for n, _, _ in below] == [
        int(n) for n in check[check["stored"] < check["lower_bound"]]["compositions"]
    ]
    assert below and below[0][0] == 10  # their curve at n_c = 10 is under a certified lower bound
    upper = K.composed("clones-krr", epsilon_local=3.0, n_users=100_000, k=2, compositions=10, subsample=0.01)
    assert check.loc[check["compositions"] == 10, "lower_bound"].iloc[0] <= upper.epsilon_for_delta(1e-5)
    assert "not an upper bound" in K.known_differences()["2/PLD"]


def test_subsampled_lower_pair_reduces_to_the_unsampled_pair_at_q_one():
    """The Fig. 2 lower bound's pair (P, q Q + (1 - q) P) at q = 1 is the unsampled worst-case-lower pair:
    the same composed epsilon as the composition layer's."""
    mine = K.subsampled_lower_epsilon(K.subsampled_all_x0_pld(3.0, 2, 200, 1.0), 3, 1e-5, tail=0.0)
    theirs = K.composed(
        "worst-case-lower", epsilon_local=3.0, n_users=200, k=2, compositions=3
    ).epsilon_for_delta(1e-5)
    assert mine == pytest.approx(theirs, rel=1e-3)


def test_their_get_omega_is_rebuilt_by_line_125_as_written():
    """Runs their function (skipped unless SHUFFLEDP_KOSKELA_CHECKOUT names their checkout)."""
    import os
    import sys
    from pathlib import Path

    checkout = os.environ.get("SHUFFLEDP_KOSKELA_CHECKOUT")
    tools = Path(__file__).resolve().parents[2] / "tools"
    if not checkout or not (Path(checkout) / "clones_girgis_comparison_fig3").is_dir():
        pytest.skip(
            "Koskela et al.'s code (DPBayes/numerical-shuffler-experiments) is not checked out: set "
            "SHUFFLEDP_KOSKELA_CHECKOUT to it"
        )
    sys.path.insert(0, str(tools))
    try:
        import verify_koskela_fig2_pld as V
        from _peer_functions import load_functions, quiet
    finally:
        sys.path.remove(str(tools))
    ns = load_functions(Path(checkout) / V.SCRIPT)
    omega, _ = quiet(ns["get_omega"], 1000, V.EPS0, V.NX, V.L, V.GAMMA)
    log_mass, ratio = V._atoms(ns, 1000)
    q = math.exp(V.EPS0) / (1 + math.exp(V.EPS0))
    as_written = np.log(V.GAMMA * (q + (1 - q) * ratio) / (q * ratio + (1 - q) ** 2) + 1 - V.GAMMA)
    pair = np.log(V.GAMMA * (q + (1 - q) * ratio) / (q * ratio + (1 - q)) + 1 - V.GAMMA)
    assert np.array_equal(V._omega(log_mass, as_written), omega)
    assert not np.array_equal(V._omega(log_mass, pair), omega)


# Every curve the paper's text names, the certified lower bound drawn, distinct styles


def test_fig1_draws_feldman_numerical_composed_above_the_tighter_clones_pld():
    frame = K.figure_frame(1, {**FIG1, "extra_accountants": ["feldman-numerical"]})
    feldman = frame[frame["curve"] == "feldman-numerical"].set_index(["compositions", "x"])["value"]
    pld = frame[frame["curve"] == "PLD"].set_index(["compositions", "x"])["value"]
    assert len(feldman) == len(pld) == 15
    # both are upper bounds; Thm 3.2's pair (C ~ Bin(n - 1, e^-eps0)) hides u among fewer clones than the k-RR pair
    assert (feldman >= pld * (1 - 1e-9)).all() and (feldman > pld).any()
    one = get_accountant("feldman-numerical", epsilon_local=2.0, n_users=300, k=2).delta_for_epsilon(
        feldman.loc[1].index.to_numpy()
    )
    assert np.allclose(
        feldman.loc[1].to_numpy(), one, rtol=1e-3, atol=1e-14
    )  # one round: the accountant itself
    verdicts = K.curve_verdicts(
        frame,
        load_reference("koskela_figures")[lambda r: r["figure"] == "1"],
        tolerance=0.01,
        smallest_delta=0.0,
    )
    added = verdicts[verdicts["curve"] == "feldman-numerical"]
    assert list(added["compositions"]) == [1, 2, 4] and "Sec. 3.3" in added["known_cause"].iloc[0]
    assert added["guarantee"].str.startswith("guarantee").all()


FIG2_LOWER = {
    "n_users": 100_000,
    "subsample": 0.01,
    "epsilon_local": 3.0,
    "k": 2,
    "delta": 1e-5,
    "compositions": [10, 31, 100],
    "accountants": {"PLD": "clones-krr"},
    "lower_bound": True,
}


@pytest.fixture(scope="module")
def fig2_lower():
    """``figure_frame(2, FIG2_LOWER)``, computed once for the two tests that read it (read only)."""
    return K.figure_frame(2, FIG2_LOWER)


def test_fig2_draws_the_certified_lower_bound_equal_to_the_recorded_check_and_below_our_upper_bound(
    fig2_lower,
):
    frame = fig2_lower
    lower = frame[frame["curve"] == K.LOWER_CURVE].set_index("compositions")["value"]
    upper = frame[frame["curve"] == "PLD"].set_index("compositions")["value"]
    assert (lower < upper).all()
    check = _check(K.LOWER_CHECK).set_index("compositions")
    recorded = pd.to_numeric(check["lower_bound"]).loc[lower.index]
    assert np.allclose(lower, recorded, rtol=1e-9)  # the workflow's value is the recorded tool's value
    stored = pd.to_numeric(check["stored"]).loc[lower.index]
    assert (stored.loc[[10, 31]] < lower.loc[[10, 31]]).all()  # their curve under a certified lower bound
    verdicts = K.curve_verdicts(
        frame,
        load_reference("koskela_figures")[lambda r: r["figure"] == "2"],
        tolerance=0.01,
        smallest_delta=0.0,
    )
    row = verdicts[verdicts["curve"] == K.LOWER_CURVE]
    assert len(row) == 1 and row["guarantee"].iloc[0].startswith("not a guarantee: a lower bound")


def test_balle_theorem_31_as_stated_gives_nothing_here_and_its_formula_is_the_closed_form_at_one_round():
    setting = {"epsilon_local": math.log(13), "n_users": 1000, "k": 4}
    deltas = np.array([1e-4, 1e-7])
    assert np.isinf(K.balle_theorem_epsilon(deltas, 1, **setting)).all()  # smallest delta at eps <= 1: 0.023
    assert float(K.balle_single_delta(1.0, **setting)) == pytest.approx(
        2 * math.exp(-0.25 * 999 / 56), rel=1e-12
    )
    formula = K.balle_theorem_epsilon(deltas, 1, stated=False, **setting)
    assert np.allclose(formula, np.sqrt(14 * 4 * np.log(2 / deltas) / (0.25 * 999)), rtol=1e-12)
    assert np.allclose(K.balle_single_delta(formula, **setting), deltas, rtol=1e-9)
    four = K.balle_theorem_epsilon(deltas, 4, stated=False, **setting)
    basic = 4 * K.balle_theorem_epsilon(deltas / 4, 1, stated=False, **setting)  # (4 eps_1, 4 delta_1)
    assert (four > formula).all() and (four <= basic * 1.001 + 4 * K.BALLE_INTERVAL).all()  # optimal <= basic
    # where Thm 3.1 does apply (large n), its composed guarantee is finite and below the formula's basic composition
    big = {"epsilon_local": math.log(13), "n_users": 1_000_000, "k": 4}
    stated = K.balle_theorem_epsilon(deltas, 4, **big)
    assert (
        np.isfinite(stated).all()
        and (stated <= 4 * K.balle_theorem_epsilon(deltas / 4, 1, **big) + 4e-3).all()
    )


@pytest.fixture(scope="module")
def fig3_with_balle():
    section = {
        **FIG3,
        "extra_accountants": ["worst-case-lower", "clones-krr"],
        "balle": True,
        "accountants": {**FIG3["accountants"], "clones (Feldman et al. 2023)": "clones-krr-2023"},
    }
    return K.figure_frame(3, section), section


def test_fig3_has_balle_curves_with_a_verdict_and_a_guarantee_each(fig3_with_balle):
    frame, _ = fig3_with_balle
    assert {K.BALLE_CURVE, K.BALLE_FORMULA_CURVE} <= set(frame["curve"])
    verdicts = K.curve_verdicts(
        frame,
        load_reference("koskela_figures")[lambda r: r["figure"] == "3"],
        tolerance=0.01,
        smallest_delta=0.0,
    )
    drawn = set(frame["curve"])
    assert drawn <= set(verdicts["curve"])  # every drawn curve has a verdict
    assert (verdicts["guarantee"] != "").all()
    formula = verdicts[verdicts["curve"] == K.BALLE_FORMULA_CURVE]["guarantee"]
    assert formula.str.startswith("not a guarantee").all()


def test_every_curve_of_a_figure_has_its_own_colour_and_line_style_and_markers_its_colour(fig3_with_balle):
    from matplotlib.colors import to_hex

    from shuffledp.plotting.koskela import curve_style, figure_koskela

    frame, section = fig3_with_balle
    curves = list(frame[["curve", "accountant"]].drop_duplicates().itertuples(index=False, name=None))
    styles = [curve_style(c, n) for c, n in curves]
    assert len({s[0] for s in styles}) == len({(s[0], str(s[1])) for s in styles}) == len(curves)
    for pairs in (
        ["clones-krr", "clones-krr-rdp", "feldman-numerical"],
        ["clones-krr", "girgis-rdp", K.LOWER_CURVE],
    ):
        assert len({curve_style(p, p)[0] for p in pairs}) == len(pairs)
    reference = load_reference("koskela_figures")
    figure = figure_koskela(frame, reference[reference["figure"] == "3"], number=3, section=section)
    colours = {c: to_hex(curve_style(c, n)[0]) for c, n in curves}
    for line in figure.axes[0].get_lines():
        if line.get_linestyle() == "None" and len(line.get_xdata()):  # a stored curve: its curve's colour
            assert to_hex(line.get_color()) in colours.values()
    labels = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert len(labels) == len(set(labels)) and not any("(upper bound))" in t for t in labels)
    assert all("guarantee" in t for t in labels if "(open markers)" not in t)
    assert all("claimed upper bound" in t for t in labels if "(open markers)" in t)


def test_fig2_legend_says_their_stored_curve_is_not_a_guarantee_where_below_the_lower_bound(fig2_lower):
    from shuffledp.plotting.koskela import figure_koskela

    section, frame = FIG2_LOWER, fig2_lower
    reference = load_reference("koskela_figures")
    figure = figure_koskela(frame, reference[reference["figure"] == "2"], number=2, section=section)
    labels = [t.get_text().replace("\n  ", " ") for legend in figure.legends for t in legend.get_texts()]
    stored = [t for t in labels if t.startswith("PLD: Koskela")]
    assert len(stored) == 1 and stored[0].endswith(
        "NOT a guarantee: below our certified lower bound at n_c = 10, n_c = 31"
    )


def test_feldman_et_al_code_brackets_our_feldman_numerical():
    """Feldman et al.'s own numerical method (apple/ml-shuffling-amplification, run from a checkout; skipped
    without one): its lower and upper deltas at step 1 bracket our exact feldman-numerical at Fig. 1's n, eps0."""
    import importlib.util
    import os
    from pathlib import Path

    checkout = os.environ.get("FELDMAN_SHUFFLING_AMPLIFICATION")
    if not checkout or not (Path(checkout) / "computeamplification.py").is_file():
        pytest.skip(
            "Feldman et al.'s code (apple/ml-shuffling-amplification) is not checked out: set "
            "FELDMAN_SHUFFLING_AMPLIFICATION to it"
        )
    spec = importlib.util.spec_from_file_location(
        "computeamplification", Path(checkout) / "computeamplification.py"
    )
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    epsilons = np.array([0.1, 0.4, 0.7])
    ours = get_accountant("feldman-numerical", epsilon_local=4.0, n_users=10_000, k=2).delta_for_epsilon(
        epsilons
    )
    for epsilon, value in zip(epsilons, ours):
        assert (
            peer.deltacomp(10_000, 4.0, float(epsilon), 1.0, 1, False)
            <= value
            <= peer.deltacomp(10_000, 4.0, float(epsilon), 1.0, 1, True)
        )
