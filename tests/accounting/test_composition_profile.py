"""The pair dominating a certified privacy profile (shuffledp.accounting.views.derived.profile) and
``worst-case-upper`` composed through it (docs/composing-a-profile.md)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from shuffledp.accounting import get_accountant
from shuffledp.accounting.composition import (
    TighterComposed,
    composable,
    compose,
    compose_tighter,
    privacy_loss_distribution,
)
from shuffledp.accounting.views.derived.profile import dominating_atoms, profile_grid, profile_view
from shuffledp.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
import validity_checks as vc


def _profile_of_atoms(losses, p_mass, q_mass, p_infinity, epsilons):
    """H_{e^eps}(P || Q) of a discrete pair given by its atoms, at each epsilon (any sign)."""
    s = np.exp(np.asarray(epsilons, float))[:, None]
    return p_infinity + np.sum(np.maximum(p_mass[None, :] - s * q_mass[None, :], 0.0), axis=1)


def test_atoms_are_a_symmetric_pair_dominating_every_pair_below_the_values():
    """Random pairs (P, Q) and upper values u(eps) >= max(H(P || Q), H(Q || P)) on a coarse grid of eps >= 0: the
    atoms form two probability laws, mirrored (P(-l) = Q(l)), and their profile is at or above both orders of
    every pair at every epsilon of a fine grid of both signs (between the grid points and beyond it)."""
    rng = np.random.default_rng(3)
    pairs = [rng.dirichlet(np.ones(6), size=2) for _ in range(4)]
    grid = np.r_[0.0, np.sort(rng.uniform(0.01, 3.0, 12))]
    fine = np.linspace(-4.0, 4.0, 801)

    def hockey(p, q, eps):
        return np.sum(np.maximum(p[None, :] - np.exp(eps)[:, None] * q[None, :], 0.0), axis=1)

    u = np.max([np.maximum(hockey(p, q, grid), hockey(q, p, grid)) for p, q in pairs], axis=0)
    u = np.minimum(u * (1.0 + rng.uniform(0.0, 0.2, u.size)), 1.0)
    losses, p, q, p_inf, q_inf = dominating_atoms(grid, u)
    assert math.isclose(p.sum() + p_inf, 1.0, abs_tol=1e-12)
    assert math.isclose(q.sum() + q_inf, 1.0, abs_tol=1e-12)
    assert np.allclose(p, q * np.exp(losses))
    order = np.argsort(-losses)
    assert np.allclose(losses[order], -losses, atol=1e-12)  # the losses are mirrored ...
    assert np.allclose(p[order], q, atol=1e-15)  # ... and so are the masses
    ours = _profile_of_atoms(losses, p, q, p_inf, fine)
    for pd, qd in pairs:
        assert np.all(ours >= hockey(pd, qd, fine) - 1e-13)
        assert np.all(ours >= hockey(qd, pd, fine) - 1e-13)
    assert np.all(
        _profile_of_atoms(losses, p, q, p_inf, grid) <= u + 1e-13
    )  # the hull: never above the values


def test_atoms_of_one_pair_profile_give_back_the_pair():
    """The exact profile of randomized response with eps0 = 1 (atoms +-1) at a grid holding eps0: the hull is the
    profile itself, so the atoms are the pair's."""
    a = 1.0
    p_rr = np.array([math.exp(a), 1.0]) / (1.0 + math.exp(a))
    q_rr = p_rr[::-1]
    eps = np.linspace(0.0, 1.5, 31)
    u = np.sum(np.maximum(p_rr[None, :] - np.exp(eps)[:, None] * q_rr[None, :], 0.0), axis=1)
    losses, p, _, p_inf, _ = dominating_atoms(eps, u)
    keep = p > 1e-14
    assert np.allclose(np.sort(losses[keep]), [-a, a])
    assert np.allclose(np.sort(p[keep]), np.sort(p_rr))
    assert p_inf == pytest.approx(0.0, abs=1e-15)


def test_a_non_monotone_or_out_of_range_profile_is_handled_or_refused():
    """Values rising with epsilon are replaced by the running minimum (valid: delta_D is non-increasing); a
    grid not starting at 0 or a delta outside [0, 1] is refused in one line."""
    _, _, _, p_inf, _ = dominating_atoms([0.0, 0.5, 1.0], [0.2, 0.05, 0.1])
    assert p_inf == pytest.approx(0.05)
    with pytest.raises(ValueError, match="`epsilons` must increase strictly from 0"):
        dominating_atoms([0.1, 0.5], [0.2, 0.1])
    with pytest.raises(ValueError, match="`deltas` must lie in"):
        dominating_atoms([0.0, 0.5], [1.2, 0.1])


def test_grid_points_are_on_the_pld_grid():
    grid = profile_grid(0.37, 1e-4, 16, 1.0)
    steps = grid / 1e-4
    assert np.allclose(steps, np.rint(steps)) and grid[0] == 0.0 and grid[-1] == pytest.approx(1.0)
    assert np.all(np.diff(grid) > 0)


def test_worst_case_upper_composes_and_is_exported():
    assert "worst-case-upper" in composable()
    pld = privacy_loss_distribution("worst-case-upper", 1.0, 200, 2)
    single = get_accountant("worst-case-upper", epsilon_local=1.0, n_users=200, k=2).epsilon_for_delta(1e-6)
    weak = privacy_loss_distribution("weak-adversary", 1.0, 200, 2).get_epsilon_for_delta(1e-6)
    assert single <= pld.get_epsilon_for_delta(1e-6) <= weak


# ------------------------------------------------------------------ k = 2: the checks that can fail
@pytest.mark.parametrize("epsilon_local, n", [(1.0, 200), (0.5, 1000)])
@pytest.mark.parametrize("compositions", [1, 10, 100])
def test_k2_profile_between_the_argmax_pair_and_the_weak_adversary(epsilon_local, n, compositions):
    """At k = 2 (worst-case-upper is the true worst case there): the composed delta of the pair dominating its
    profile is at or above the composed explicit datasets of worst-case-lower (the maximising dataset among
    them, composed) and at or below the composed weak adversary, at T = 1, 10, 100."""
    eps = [f * epsilon_local for f in (0.0, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 4.0)]
    valid, tighter = vc.profile_margins(epsilon_local, n, 2, compositions, eps)
    assert valid >= -vc.TOLERANCE, valid
    assert tighter >= -1e-9, tighter


class _Planted:
    """worst-case-upper with its value lowered e^2-fold at the profile grid's point nearest ``at``: not valid."""

    def __init__(self, epsilon_local, n, k, at):
        self._real = get_accountant("worst-case-upper", epsilon_local=epsilon_local, n_users=n, k=k)
        self.setting, self.name, self.kind, self.at = self._real.setting, "planted", self._real.kind, at
        self.dipped = None

    def epsilon_for_delta(self, delta):
        return self._real.epsilon_for_delta(delta)

    def log_delta_for_epsilon(self, epsilons):
        epsilons = np.asarray(epsilons, float)
        values = np.array(self._real.log_delta_for_epsilon(epsilons), float)
        if epsilons.size > 1:
            i = int(np.argmin(np.abs(epsilons - self.at)))
            values[i] -= 2.0
            self.dipped = float(epsilons[i])
        return values


def test_probe_a_profile_below_one_dataset_fails_the_check():
    """Probe: a planted profile dipping below one dataset's delta at one epsilon makes the check fail."""
    planted = _Planted(1.0, 200, 2, at=0.2)
    profile_view(planted, interval=1e-4)  # records the dipped grid point
    eps = [0.1, planted.dipped, 0.5]
    valid, _ = vc.profile_margins(1.0, 200, 2, 1, eps, upper=_Planted(1.0, 200, 2, at=0.2))
    assert valid < -0.5, valid


def test_tighter_of_the_two_names_its_source_and_is_the_smaller():
    tight = compose_tighter("worst-case-upper", epsilon_local=1.0, n_users=200, k=2, compositions=10)
    assert isinstance(tight, TighterComposed)
    weak = compose("weak-adversary", epsilon_local=1.0, n_users=200, k=2, compositions=10)
    value, source = tight.epsilon_with_source(1e-6)
    assert source == "worst-case-upper" and value < weak.epsilon_for_delta(1e-6)
    # k = 4, n = 200: no search runs, the profile is the weak adversary's, its pair a little looser
    loose = compose_tighter("worst-case-upper", epsilon_local=1.0, n_users=200, k=4, compositions=10)
    value, source = loose.epsilon_with_source(1e-6)
    weak4 = compose("weak-adversary", epsilon_local=1.0, n_users=200, k=4, compositions=10)
    assert value <= weak4.epsilon_for_delta(1e-6)
    logs, sources = loose.log_delta_with_source([0.5, 1.0])
    assert len(sources) == 2 and np.all(logs <= weak4.log_delta_for_epsilon([0.5, 1.0]))
    assert compose_tighter("weak-adversary", epsilon_local=1.0, n_users=200, k=2).name == "weak-adversary"


def test_cli_composed_worst_case_upper_says_which(capsys):
    status = main(
        [
            "epsilon",
            "--accountant",
            "worst-case-upper",
            "--eps0",
            "1",
            "--n",
            "200",
            "--k",
            "2",
            "--compositions",
            "10",
            "--delta",
            "1e-6",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert status == 0 and out[0].split("\t")[-1] == "tighter"
    assert out[1].split("\t")[-1] == "worst-case-upper"


def test_optimistic_profile_is_refused():
    accountant = get_accountant("worst-case-upper", epsilon_local=1.0, n_users=50, k=2)
    with pytest.raises(ValueError, match="`pessimistic` must be True"):
        accountant.binned_views(interval=1e-4, pessimistic=False, K=9.0)


def test_subsampled_profile_pair_is_between_lower_and_weak():
    """Subsampling goes through the mixture of the dominating pair (which it needs: a dominating pair under
    replace-one): the result is a guarantee no looser than the weak adversary's at k = 2."""
    ours = compose("worst-case-upper", epsilon_local=1.0, n_users=2000, k=2, compositions=10, subsample=0.1)
    weak = compose("weak-adversary", epsilon_local=1.0, n_users=2000, k=2, compositions=10, subsample=0.1)
    assert ours.epsilon_for_delta(1e-6) <= weak.epsilon_for_delta(1e-6)


def test_rounds_calibration_takes_the_tighter_and_it_meets_the_target():
    """compare --compositions / the composed phase diagram: eps0 is the larger of the two calibrations, the
    profile pair's meets the total target, and the source is named; k without a search keeps the weak one."""
    from shuffledp.experiments.compare_rounds import (
        RoundsSetting,
        shuffle_epsilon_local_tighter,
        shuffle_source,
    )

    setting = RoundsSetting(200, 2, 1.0, 1e-6, 10, 1.0)
    tighter, weak = shuffle_epsilon_local_tighter(setting)
    assert tighter > 1.05 * weak
    assert shuffle_source({"epsilon_local": tighter, "epsilon_local_weak": weak}) == "worst-case-upper"
    composed = compose("worst-case-upper", epsilon_local=tighter, n_users=200, k=2, compositions=10)
    assert composed.epsilon_for_delta(1e-6) <= 1.0
    assert shuffle_epsilon_local_tighter(setting, max_per_round=100) == (weak, weak)
    assert shuffle_source({"epsilon_local": weak, "epsilon_local_weak": weak}) == "weak-adversary"
