"""The subsampled shuffle calibration's coarse first search (shuffledp.experiments.compare_rounds): it only
moves where the fine search starts, so the answer is still a fine-grid point that met the target, within the
calibration's tolerance of the search without it, found with fewer fine-grid evaluations; a probe shows the
check sees an answer taken from the coarse grid."""

from __future__ import annotations

import math

import pytest

from shuffledp.experiments import compare_rounds as rounds


def _recorded(monkeypatch):
    """Every composed evaluation of the shuffle search: (eps0, grid, composed epsilon)."""
    seen = []
    original = rounds._composed_epsilon

    def recording(name, setting):
        composed = original(name, setting)

        def evaluate(epsilon_local, grid):
            value = composed(epsilon_local, grid)
            seen.append((epsilon_local, grid, value))
            return value

        return evaluate

    monkeypatch.setattr(rounds, "_composed_epsilon", recording)
    return seen


def _met_on_the_fine_grid(found: float, seen, setting) -> bool:
    """``found`` was evaluated on the calibration's grid and met the target there."""
    fine = rounds.loss_grid(setting.compositions)
    return any(x == found and grid == fine and value <= setting.epsilon for x, grid, value in seen)


@pytest.mark.parametrize("n,k,T,q", [(100_000, 2, 100, 0.01), (20_000, 15, 100, 0.1), (10_000, 4, 10, 0.01)])
def test_coarse_first_meets_on_the_fine_grid_within_the_tolerance_with_fewer_fine_steps(
    monkeypatch, n, k, T, q
):
    setting = rounds.RoundsSetting(n, k, 1.0, 1e-6, T, q)
    seen = _recorded(monkeypatch)
    coarse_first = rounds.shuffle_epsilon_local(setting)
    fine = rounds.loss_grid(T)
    assert {grid for _, grid, _ in seen} == {fine, rounds.COARSE_FACTOR * fine}
    assert _met_on_the_fine_grid(coarse_first, seen, setting)
    fine_steps = sum(grid == fine for _, grid, _ in seen)
    seen.clear()
    monkeypatch.setattr(rounds, "_coarse_guess", lambda evaluate, guess, **_: guess)
    fine_only = rounds.shuffle_epsilon_local(setting)
    assert _met_on_the_fine_grid(fine_only, seen, setting)
    assert {grid for _, grid, _ in seen} == {fine}
    assert math.isclose(coarse_first, fine_only, rel_tol=2.0 * rounds._TOLERANCE)
    assert fine_steps <= len(seen)


def test_unsampled_rounds_search_the_fine_grid_only(monkeypatch):
    setting = rounds.RoundsSetting(2000, 4, 1.0, 1e-6, 10, 1.0)
    seen = _recorded(monkeypatch)
    found = rounds.shuffle_epsilon_local(setting)
    assert {grid for _, grid, _ in seen} == {rounds.loss_grid(10)}
    assert _met_on_the_fine_grid(found, seen, setting)


def test_probe_an_answer_from_the_coarse_grid_is_seen(monkeypatch):
    """A fine stage that returned its starting point (the coarse answer) unevaluated fails the check."""
    setting = rounds.RoundsSetting(100_000, 2, 1.0, 1e-6, 100, 0.01)
    seen = _recorded(monkeypatch)
    monkeypatch.setattr(rounds, "search_from_guess", lambda evaluate, guess, slope, **_: guess)
    monkeypatch.setattr(
        rounds,
        "_coarse_guess",
        lambda evaluate, guess, **_: (guess[0] * (1.0 + 1e-3), guess[1]) if evaluate(guess[0]) else guess,
    )
    found = rounds.shuffle_epsilon_local(setting)
    assert not _met_on_the_fine_grid(found, seen, setting)
