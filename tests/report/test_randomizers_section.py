"""The report's "which randomizer to shuffle" reading (report/randomizers.py): its counts recounted from the
rows with separate simple code, on a real grid and on planted rows (a shuffled randomizer other than k-RR that
beats the Gaussian where k-RR does not must be counted)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from shuffledp.experiments.randomizer_grid import grid_job, verdicts
from shuffledp.report.randomizers import read_randomizers

GRID = {"epsilon": [0.5, 4.0], "delta_fixed": [1e-6], "delta_power": []}


@pytest.fixture(scope="module")
def frame():
    frames = []
    # small settings (the counting is under test, not the accountants at scale) on which k-RR beats the
    # Gaussian curator at some targets and not at others
    for n_users, k in ((100, 4), (300, 2)):
        counts = np.full(k, n_users // k)
        counts[0] += n_users - counts.sum()
        frames.append(grid_job(counts, dataset=f"toy{k}", grid=GRID, neighbouring="replace-one"))
    return pd.concat(frames, ignore_index=True)


def _recount(rows: list[dict]) -> tuple[int, dict, int, int, int]:
    """(settings, best per randomizer, k-RR beats, another beats, another beats where k-RR does not)."""
    settings: dict = {}
    for row in rows:
        key = (row["dataset"], row["k"], row["n_users"], row["epsilon"], row["delta_rule"])
        settings.setdefault(key, []).append(row)
    best: dict = {}
    krr_wins = other_wins = only_other = 0
    for group in settings.values():
        gaussian = next(r["l1_half"] for r in group if r["randomizer"] == "gaussian")
        shuffled = [r for r in group if r["randomizer"] not in ("gaussian", "geometric")]
        smallest = min(r["l1_half"] for r in shuffled)
        winner = next(r for r in shuffled if r["l1_half"] <= smallest * (1 + 1e-9))  # ties go to the first
        best[winner["randomizer"]] = best.get(winner["randomizer"], 0) + 1
        krr = any(r["randomizer"] == "krr" and r["l1_half"] < gaussian for r in shuffled)
        other = any(r["randomizer"] != "krr" and r["l1_half"] < gaussian for r in shuffled)
        krr_wins += krr
        other_wins += other
        only_other += other and not krr
    return len(settings), best, krr_wins, other_wins, only_other


def _numbers(text: str) -> tuple[int, dict, int, int, int]:
    total = int(re.search(r"Over (\d+) settings", text).group(1))
    listed = re.search(r"the randomizer to shuffle is (.*?) \(smallest", text).group(1)
    best = {name: int(count) for name, count in re.findall(r"([\w-]+) in (\d+)", listed)}
    krr = int(re.search(r"k-RR beats the Gaussian curator in (\d+) of", text).group(1))
    other = int(re.search(r"another shuffled randomizer does in (\d+)", text).group(1))
    only = int(re.search(r"where k-RR does not in (\d+)", text).group(1))
    return total, best, krr, other, only


def test_counts_are_the_rows_recounted(frame):
    text = read_randomizers(frame)
    recounted = _recount(frame.to_dict("records"))
    assert _numbers(text) == recounted
    settings, _, krr_wins, _, _ = recounted
    assert 0 < krr_wins < settings, "the grid must hold targets where k-RR beats the Gaussian and where not"


def test_a_planted_winner_where_krr_loses_is_counted(frame):
    planted = frame.copy()
    setting = planted[(planted["dataset"] == "toy4") & (planted["epsilon"] == 0.5)]
    gaussian = float(setting.loc[setting["randomizer"] == "gaussian", "l1_half"].iloc[0])
    planted.loc[setting.index[setting["randomizer"] == "krr"], "l1_half"] = 2 * gaussian
    planted.loc[setting.index[setting["randomizer"] == "oue"], "l1_half"] = gaussian / 2
    text = read_randomizers(planted)
    numbers = _numbers(text)
    assert numbers == _recount(planted.to_dict("records"))
    assert numbers[4] >= 1 and "(oue" in text
    table = verdicts(planted)
    assert int(table["other_beats_gaussian_where_krr_does_not"].sum()) == numbers[4]


def test_missing_columns_are_one_line():
    with pytest.raises(ValueError, match=r"^`randomizers data` must have columns .*missing l1_half\.$"):
        read_randomizers(
            pd.DataFrame(
                {
                    c: []
                    for c in (
                        "dataset",
                        "k",
                        "n_users",
                        "epsilon",
                        "delta_rule",
                        "randomizer",
                        "epsilon_local",
                        "accountant",
                    )
                }
            )
        )
