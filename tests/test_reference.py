"""The transcribed paper values parse, have the paper's layout, and keep the paper's own identities."""

import math

import pytest

from shuffledp.reference import REFERENCE_NAMES, load_reference, parse_label
from shuffledp.tables import parse_printed, printed_half_unit

TABLE_COLUMNS = ["paper", "version", "table", "section", "block", "row", "column", "value", "note"]

# (name, cells): cells counted from the paper's layout (Biswas et al., arXiv 2022):
# Table II: 2 blocks x 5 epsilons x 4 methods; Table IV: 3 blocks x 3 rows x 7 epsilons;
# Tables V and VI: 7 rows x 2 blocks x 2 mechanisms; Table III: 5 parameters.
LAYOUT = [("table2", 40), ("table3", 5), ("table4", 63), ("table5", 28), ("table6", 28)]


@pytest.mark.parametrize("name, cells", LAYOUT)
def test_tables_have_the_papers_layout(name, cells):
    frame = load_reference(name)
    assert list(frame.columns) == TABLE_COLUMNS
    assert len(frame) == cells
    assert not frame.duplicated(["block", "row", "column"]).any()
    assert (frame["value"].str.strip() != "").all()


@pytest.mark.parametrize("name", ["table2", "table4", "table5", "table6"])
def test_every_printed_value_parses(name):
    for text in load_reference(name)["value"]:
        value = float(parse_printed(text))
        assert math.isfinite(value) and 0.0 <= value <= 1.0
        assert printed_half_unit(text) >= 0.0


def test_values_stay_strings_as_printed():
    table2 = load_reference("table2")
    cell = table2[(table2.block == "n=100") & (table2.row == "eps=0.3") & (table2.column == "[12]")]
    assert cell["value"].tolist() == ["6.580E-7"]  # printed with four digits in Table II
    table5 = load_reference("table5")
    assert "12E-4" in set(table5["value"])


def test_table4_fixed_setting_rows_coincide():
    """Table IV's rows n=100 and k=10 are the setting of row eps0=2 and are printed identical to it."""
    table4 = load_reference("table4")

    def row(block, label):
        return table4[(table4.block == block) & (table4.row == label)]["value"].tolist()

    assert row("varying n", "n=100") == row("varying eps0", "eps0=2")
    assert row("varying k", "k=10") == row("varying eps0", "eps0=2")
    assert len(row("varying eps0", "eps0=2")) == 7


def test_text_numbers():
    text = load_reference("text_numbers").set_index("name")
    assert text.loc["checkins_san_francisco", "value"] == "123,108"
    assert text.loc["checkins_paris", "value"] == "10,260"
    assert float(text.loc["community_tv_shuffle_inv_n100000", "value"]) == 0.0048
    assert (text["quote"].str.len() > 0).all()


def test_every_reference_loads():
    for name in REFERENCE_NAMES:
        assert len(load_reference(name)) > 0


def test_unknown_reference_is_refused():
    with pytest.raises(ValueError, match=r"`name` must be one of table2, .*; got 'table7'\."):
        load_reference("table7")


@pytest.mark.parametrize(
    "label, expected", [("eps=0.1", ("eps", 0.1)), ("n=1,000", ("n", 1000.0)), ("eps0=2", ("eps0", 2.0))]
)
def test_parse_label(label, expected):
    assert parse_label(label) == expected


def test_parse_label_refuses_text():
    with pytest.raises(ValueError, match=r"`label` must look like 'name=number'.*; got 'Our delta'\."):
        parse_label("Our delta")


def test_balle_figures_every_point_cites_its_cell_and_commit():
    frame = load_reference("balle_figures")
    # 3 x 100 + 5 x 100 + 6 x 100 + 2 x 50 points per version of their code (current and the 2019 release)
    assert frame["code"].value_counts().to_dict() == {"current": 1500, "2019": 1500}
    assert frame.groupby("panel")["curve"].nunique().to_dict() == {"i": 3, "ii": 5, "iii": 6, "iv": 2}
    current = frame["code"] == "current"
    assert (
        frame.loc[current, "source"]
        .str.contains(
            r"\.ipynb cell In \[2[3-6]\] -> shuffleddp/amplification_bounds\.py \w+.* @ 1778a0dd1640$"
        )
        .all()
    )
    assert (
        frame.loc[~current, "source"]
        .str.contains(r"\.ipynb cell In \[(?:9|1[0-2])\] -> amplification_bounds\.py \w+.* @ 89a50859f5e5$")
        .all()
    )
    nan = frame["value"] == "nan"
    assert set(frame.loc[nan, "curve"]) == {"EFMRTT'19"}  # only Erlingsson et al. is undefined anywhere
