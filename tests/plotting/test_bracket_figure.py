"""The bracket figure: the drawn values are bracket.csv's, read back from the artists; its job
runs on a small CSV; a CSV without a needed column fails with one line naming it."""

from __future__ import annotations

import runpy
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from shuffledp.plotting import bracket as bracket_plot

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "workflow" / "scripts" / "accounting_bracket_figure.py"
OK = "ok"
AT_EPS0 = "both at eps0: no amplification at this delta, the ratio 1 says nothing about tightness"


def _small_bracket() -> pd.DataFrame:
    """A bracket.csv in the stage's columns: lines for k = 3 and 10 over n, two eps0, two delta; one setting
    with equal ends, one with lower bound 0, and two large-eps0 ends (one whose upper end is at eps0)."""
    rows = []
    for k in (3, 10):
        for eps0 in (1.0, 4.0):
            for delta in (1e-6, 1e-9):
                for n, lower, width in (
                    (2, 0.99 * eps0, 1e-10),
                    (10, 0.6 * eps0, 3e-4 * k),
                    (1000, 0.1 * eps0, 2e-5),
                ):
                    status = AT_EPS0 if n == 2 else OK
                    rows.append((n, k, eps0, delta, lower, lower * (1 + width), status))
    rows.append((50, 3, 1.0, 1e-6, 0.5, 0.5, OK))  # equal ends: excess 0, on the bottom edge
    rows.append((50, 10, 4.0, 1e-6, 0.0, 0.3, "lower bound is 0"))  # undefined ratio, on the top edge
    rows.append((100_000_000, 10, 15.0, 1e-6, 1.25, 1.259, OK))
    rows.append(
        (100_000_000_000, 10, 20.0, 1e-6, 19.0, 20.0, "upper at eps0: the guarantee gives no amplification")
    )
    frame = pd.DataFrame(
        rows, columns=["n_users", "k", "epsilon_local", "delta", "eps_lower", "eps_upper", "status"]
    )
    with np.errstate(divide="ignore"):
        frame.insert(6, "ratio", frame["eps_upper"] / frame["eps_lower"])
    return frame.assign(lower="worst-case-lower", upper="worst-case-upper")


def _lines(figure) -> dict[str, object]:
    return {line.get_gid(): line for ax in figure.axes for line in ax.get_lines() if line.get_gid()}


def _check_drawn_values_are_the_csv(figure, frame: pd.DataFrame) -> None:
    lines = _lines(figure)
    excess = (frame["eps_upper"] - frame["eps_lower"]) / frame[
        "eps_lower"
    ]  # the plotted ratio - 1, by definition
    large = frame["epsilon_local"] >= 15
    for (k, eps0, delta), rows in frame[~large].groupby(["k", "epsilon_local", "delta"]):
        rows = rows.sort_values("n_users")
        gid = f"bracket k={k} eps0={eps0:g} delta={delta:g}"
        values = excess[rows.index]
        drawable = np.isfinite(values) & (values > 0)
        line = lines[gid]
        np.testing.assert_array_equal(line.get_xdata(), rows["n_users"][drawable].to_numpy(dtype=float))
        np.testing.assert_array_equal(line.get_ydata(), values[drawable].to_numpy())
        # the CSV's own ratio column is 1 + the drawn value (to rounding of 1 + tiny)
        np.testing.assert_allclose(1.0 + line.get_ydata(), rows["ratio"][drawable], rtol=1e-12)
        # hollow where the status is not ok, filled where it is: each drawn once
        flagged, ok = lines.get(gid + ":flagged"), lines.get(gid + ":ok")
        drawn = np.concatenate([x.get_xdata() for x in (flagged, ok) if x is not None])
        assert sorted(drawn) == sorted(rows["n_users"][drawable].astype(float))
        if flagged is not None:
            assert flagged.get_markerfacecolor() == "white"
            assert set(flagged.get_xdata()) == set(
                rows["n_users"][drawable & (rows["status"] != OK)].astype(float)
            )
        for where, chosen in (
            ("equal", np.isfinite(values) & (values <= 0)),
            ("undefined", ~np.isfinite(values)),
        ):
            edge = lines.get(f"{gid}:edge-{where}")
            assert (edge is not None) == bool(chosen.any())
            if edge is not None:
                np.testing.assert_array_equal(edge.get_xdata(), rows["n_users"][chosen].to_numpy(dtype=float))
                bottom, top = edge.axes.get_ylim()
                assert set(edge.get_ydata()) == {bottom if where == "equal" else top}
    for index, row in frame[large].iterrows():
        end = lines[
            f"bracket-end k={row['k']} eps0={row['epsilon_local']:g} delta={row['delta']:g} n={row['n_users']}"
        ]
        assert list(end.get_xdata()) == [row["n_users"]] and list(end.get_ydata()) == [excess[index]]
        # a star where the upper end is below eps0, a cross where it is not (the bracket goal at eps0 >= 15)
        assert end.get_marker() == ("*" if row["eps_upper"] < row["epsilon_local"] else "X")


def test_drawn_values_equal_the_csv_and_goals_are_drawn():
    frame = _small_bracket()
    figure = bracket_plot.figure_bracket(frame)
    _check_drawn_values_are_the_csv(figure, frame)
    panels = [ax for ax in figure.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["k = 3", "k = 10"]
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in panels)
    lines = {ax.get_title(): {line.get_gid(): line for line in ax.get_lines()} for ax in panels}
    # the bracket goals: ratio <= 1.01 everywhere, <= 1.05 at the large-eps0 ends (eps0 >= 15, only at k = 10)
    assert all(list(group["goal"].get_ydata()) == [pytest.approx(0.01)] * 2 for group in lines.values())
    assert "goal-large" in lines["k = 10"] and "goal-large" not in lines["k = 3"]
    assert list(lines["k = 10"]["goal-large"].get_ydata()) == [pytest.approx(0.05)] * 2
    # one colour per eps0 in every panel: the eps0 = 1 lines of both panels share theirs
    colours = {gid: line.get_color() for group in lines.values() for gid, line in group.items()}
    assert colours["bracket k=3 eps0=1 delta=1e-06"] == colours["bracket k=10 eps0=1 delta=1e-06"]
    assert colours["bracket k=3 eps0=1 delta=1e-06"] != colours["bracket k=3 eps0=4 delta=1e-06"]


def test_missing_column_is_one_line_naming_it():
    with pytest.raises(ValueError) as error:
        bracket_plot.figure_bracket(_small_bracket().drop(columns=["eps_upper"]))
    message = str(error.value)
    assert "\n" not in message and "missing eps_upper" in message and "`bracket data`" in message


@pytest.fixture
def restore_hooks(monkeypatch):
    import logging

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    handlers = list(logging.getLogger().handlers)
    yield
    root = logging.getLogger()
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
            handler.close()
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)


def _job(tmp_path: Path, frame: pd.DataFrame) -> types.SimpleNamespace:
    csv = tmp_path / "bracket.csv"
    frame.to_csv(csv, index=False)
    return types.SimpleNamespace(
        input=types.SimpleNamespace(csv=str(csv)),
        output=types.SimpleNamespace(figure=str(tmp_path / "bracket.png")),
        log=[str(tmp_path / "bracket_figure.log")],
    )


def test_the_job_draws_the_csv(tmp_path, monkeypatch, restore_hooks):
    """The rule's script on a small CSV: a PNG, a log line, and the figure it drew holds the CSV's values."""
    drawn, original = [], bracket_plot.figure_bracket

    def keep(frame):
        drawn.append((frame, original(frame)))
        return drawn[-1][1]

    frame = _small_bracket()
    job = _job(tmp_path, frame)
    monkeypatch.setattr(bracket_plot, "figure_bracket", keep, raising=True)
    runpy.run_path(str(SCRIPT), init_globals={"snakemake": job}, run_name="__main__")
    assert Path(job.output.figure).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"bracket figure: {len(frame)} rows" in Path(job.log[0]).read_text()
    ((read, figure),) = drawn
    pd.testing.assert_frame_equal(read, pd.read_csv(job.input.csv))
    _check_drawn_values_are_the_csv(figure, pd.read_csv(job.input.csv))


def test_the_job_on_a_csv_without_a_column_fails_with_one_line(tmp_path):
    """Run as Snakemake runs it (its own interpreter): one FAILED line in the job's log, no figure."""
    job = _job(tmp_path, _small_bracket().drop(columns=["eps_upper"]))
    code = textwrap.dedent(f"""
        import runpy, types
        job = types.SimpleNamespace(input=types.SimpleNamespace(csv={job.input.csv!r}),
                                    output=types.SimpleNamespace(figure={job.output.figure!r}), log=[{job.log[0]!r}])
        runpy.run_path({str(SCRIPT)!r}, init_globals={{"snakemake": job}}, run_name="__main__")
    """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    failed = [line for line in Path(job.log[0]).read_text().splitlines() if "FAILED" in line]
    assert len(failed) == 1 and failed[0].split(" FAILED: ")[1].startswith(
        "ValueError: `bracket data` must have columns"
    )
    assert "missing eps_upper" in failed[0]
    assert result.stderr.strip().splitlines()[-1].startswith("ValueError: `bracket data` must have columns")
    assert not Path(job.output.figure).exists()


def test_the_report_shows_the_figure_in_the_bracket_section(tmp_path, restore_hooks):
    """The job's PNG, classified as the bracket section's image, is a figure of that section with its caption."""
    from shuffledp.report.blocks import Figure
    from shuffledp.report.inputs import WORST_CASE_BRACKET
    from shuffledp.report.read import ReportInputs
    from shuffledp.report.sections import beyond_section

    job = _job(tmp_path, _small_bracket())
    runpy.run_path(str(SCRIPT), init_globals={"snakemake": job}, run_name="__main__")
    inputs = ReportInputs(
        config={},
        report_dir=tmp_path / "report",
        extras={WORST_CASE_BRACKET: {"images": [job.output.figure], "data": [job.input.csv]}},
    )
    figures = [block for block in beyond_section(inputs) if isinstance(block, Figure)]
    assert len(figures) == 1 and Path(figures[0].path) == Path(job.output.figure)
    assert "Worst-case bracket against n" in figures[0].caption and "goal ratio 1.01" in figures[0].caption
