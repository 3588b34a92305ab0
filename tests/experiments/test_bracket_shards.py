"""The bracket's shards: longest processing time first on the cost model (``bracket_cost``,
``bracket_assignment``). Every setting goes to exactly one shard, the same one in every job, and on the default
grid the largest shard's estimate is within 15% of the mean (measured on the default grid after the
change: 45 / 50 / 48 / 51 CPU s, docs/decisions/workflow.md). The probe: the interleaved slices the
shards used before fail the same check."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from shuffledp.experiments.guarantees import (
    bracket_assignment,
    bracket_cost,
    bracket_points,
    bracket_shards,
)

ROOT = Path(__file__).resolve().parents[2]
BALANCE = 1.15  # the largest shard's estimate over the mean


def _default_section() -> dict:
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text(encoding="utf-8"))
    return config["accounting"]["bracket"]


def _loads(section: dict, assignment: list[int]) -> list[float]:
    deltas = [float(d) for d in section["delta"]]
    upper = str(section.get("upper") or "worst-case-upper")
    loads = [0.0] * bracket_shards(section)
    for shard, point in zip(assignment, bracket_points(section)):
        loads[shard] += bracket_cost(*point, deltas, upper)
    return loads


def _check_balanced(section: dict, assignment: list[int]) -> None:
    loads = _loads(section, assignment)
    mean = sum(loads) / len(loads)
    assert max(loads) <= BALANCE * mean, (loads, mean)


def test_every_setting_has_one_shard_the_same_in_every_call():
    section = _default_section()
    assignment = bracket_assignment(section)
    assert len(assignment) == len(bracket_points(section))
    assert set(assignment) == set(range(bracket_shards(section)))
    assert bracket_assignment(dict(section)) == assignment


@pytest.mark.parametrize("shards", [2, 3, 4])
def test_the_default_grid_is_balanced_by_its_estimates(shards):
    section = {**_default_section(), "shards": shards}
    _check_balanced(section, bracket_assignment(section))


def test_probe_the_interleaved_slices_are_not_balanced():
    section = {**_default_section(), "shards": 4}
    interleaved = [index % 4 for index in range(len(bracket_points(section)))]
    with pytest.raises(AssertionError):
        _check_balanced(section, interleaved)


def test_one_shard_takes_every_setting():
    section = {**_default_section(), "shards": 1}
    assert set(bracket_assignment(section)) == {0}


def test_the_costliest_settings_are_estimated_costliest():
    """The measured order of the default grid's dearest settings (n = 50, k = 4 at eps0 <= 1: ~33 CPU s
    each; n = 20, k = 10 and 100 at eps0 = 0.5: 14-19 s) against a cheap one (n = 1000, k = 10)."""
    deltas = [1e-6, 1e-9]
    cost = {
        point: bracket_cost(*point, deltas, "worst-case-upper")
        for point in [(50, 4, 0.5), (50, 4, 1.0), (20, 10, 0.5), (20, 100, 0.5), (1000, 10, 1.0)]
    }
    assert min(cost[(50, 4, 0.5)], cost[(50, 4, 1.0)]) > max(cost[(20, 10, 0.5)], cost[(20, 100, 0.5)])
    assert min(cost[(20, 10, 0.5)], cost[(20, 100, 0.5)]) > 10 * cost[(1000, 10, 1.0)]


def test_another_upper_end_costs_the_base_alone():
    assert bracket_cost(50, 4, 0.5, [1e-6, 1e-9], "weak-adversary") == bracket_cost(
        50, 10, 0.5, [1e-6, 1e-9], "weak-adversary"
    )
