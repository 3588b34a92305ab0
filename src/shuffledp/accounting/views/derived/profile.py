"""The dominating pair of a certified privacy profile ("profile -> dominating PLD").

An accountant that is a *certified per-epsilon maximum* -- at every epsilon >= 0 a value delta_U(epsilon) at
least H_{e^eps}(M(D) || M(D')) for every neighbouring pair, both orders -- is not the profile of one pair of
distributions, so it has no privacy loss distribution of its own. This module builds one that dominates it
(the argument and its conditions: docs/composing-a-profile.md; the choices: docs/decisions/composition.md).

**The argument.** Write s = e^eps. For any pair (P, Q), delta(s) = H_s(P || Q) = sum_o (P(o) - s Q(o))_+ is
convex and non-increasing in s >= 0, with delta(0) = 1 and delta(s) >= (1 - s)_+. Given upper values u_i >=
delta_D(s_i) at finitely many points s_i, for every pair D at once, the lower convex hull h of the points
{(0, 1)} u {(s_i, u_i)} (continued flat after the last point) lies above every delta_D: on a segment between
two hull vertices, delta_D is below its own chord (convexity), which is below the hull's chord (the values at
the vertices are). h is convex, piecewise linear, non-increasing, with h(0) = 1 and h >= 1 - s, so it is the
profile of one pair (P_U, Q_U): an atom at each vertex s_j > 0 with Q-mass c_j (the slope's increase there)
and P-mass c_j s_j (loss log s_j), P-mass h(inf) at loss +inf and the rest of Q at loss -inf. (In the
tradeoff language this is f_U(x) = max_i (1 - u_i - s_i x)_+, below every T(M(D), M(D')): the mechanism is
f_U-DP, and f_U = T(P_U, Q_U).)

**Both orders and negative epsilon.** The profile at eps < 0 is fixed by the other order at -eps:
H_{e^-eps}(P || Q) = 1 - e^-eps + e^-eps H_{e^eps}(Q || P). A per-epsilon maximum over *both* orders (every
dataset pair and its swap) therefore gives upper values at -eps_i too, u(-eps) = 1 - e^-eps + e^-eps u(eps);
the hull of the mirrored point set is itself mirrored (the map is a perspective, which keeps convexity), so
(P_U, Q_U) is symmetric: its ADD direction is its REMOVE direction relabelled, and one PLD serves both.

**Grid and safe side.** Fewer points can only raise the hull, so any grid is valid; the grid is uniform on
[0, epsilon_top] where epsilon_top is where the profile falls below :data:`PROFILE_FLOOR` (the accountant's
own epsilon for that delta), plus the local epsilon eps0 where a pure eps0-LDP randomizer makes delta 0
(shuffling is post-processing), with every point a multiple of the PLD's grid width so the atoms lie on it.
Values are first made non-increasing (a running minimum: delta_D is non-increasing, so delta_D(eps_i) <=
u_j for every j <= i). Losses are then binned rounded up (the grid points are on the grid; rounding up is
the safe side of float error), the masses are linear (absolute error ~1e-16, as every linear-space PLD
here), and the infinity mass is the larger of the hull's last value and what the finite P-masses leave of 1.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp.accounting.views.binned import BinnedView, bin_index

__all__ = ["PROFILE_FLOOR", "PROFILE_POINTS", "dominating_atoms", "profile_grid", "profile_view"]

#: the grid of the profile ends where delta falls below this (beyond it one chord to eps0 carries the rest)
PROFILE_FLOOR = 1e-30
#: points of the uniform grid on [0, epsilon_top]
PROFILE_POINTS = 128


def _lower_hull(s: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices of the vertices of the lower convex hull of the points (s, u), s strictly increasing."""
    hull: list[int] = []
    for i in range(s.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # b is above (or on) the chord a -> i: not a vertex of the lower hull
            if (u[b] - u[a]) * (s[i] - s[a]) >= (u[i] - u[a]) * (s[b] - s[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.asarray(hull, dtype=np.int64)


def dominating_atoms(epsilons, deltas) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The symmetric pair (P_U, Q_U) whose profile is the lower convex hull (in e^eps) of certified upper values.

    Args:
        epsilons: increasing epsilons >= 0, the first 0.
        deltas: at each, an upper bound on delta(epsilon) for every neighbouring pair in both orders.

    Returns:
        (losses, P-masses, Q-masses, P-mass at +inf, Q-mass at -inf) of the pair (module docstring): the
        finite atoms of both signs, losses increasing.

    Raises:
        ValueError: the epsilons are not increasing from 0, or a delta is outside [0, 1].
    """
    eps = np.asarray(epsilons, dtype=float)
    u = np.asarray(deltas, dtype=float)
    if eps.ndim != 1 or eps.size == 0 or eps[0] != 0.0 or np.any(np.diff(eps) <= 0):
        raise ValueError(f"`epsilons` must increase strictly from 0; got {eps!r}.")
    if u.shape != eps.shape or np.any(~(u >= 0.0)) or np.any(u > 1.0):
        raise ValueError(f"`deltas` must lie in [0, 1], one per epsilon; got {u!r}.")
    u = np.minimum.accumulate(u)  # delta_D is non-increasing: a later point's value bounds it earlier too
    # the mirrored points (eps < 0), the point (s = 0, delta = 1), and the given ones
    s_neg = np.exp(-eps[:0:-1])
    u_neg = -np.expm1(-eps[:0:-1]) + s_neg * u[:0:-1]
    s = np.concatenate(([0.0], s_neg, np.exp(eps)))
    h = np.concatenate(([1.0], u_neg, u))
    vertices = _lower_hull(s, h)
    sv, hv = s[vertices], h[vertices]
    slopes = np.diff(hv) / np.diff(sv)
    slopes = np.append(slopes, 0.0)  # flat after the last point
    c = np.diff(slopes)  # slope increase at every vertex but s = 0
    c = np.maximum(c, 0.0)
    at = sv[1:]
    keep = c > 0
    at, c = at[keep], c[keep]
    losses = np.log(at)
    p_mass, q_mass = c * at, c
    infinity = float(hv[-1])
    p_infinity = max(infinity, 1.0 - float(p_mass.sum()))
    q_infinity = max(0.0, 1.0 - float(q_mass.sum()))
    return losses, p_mass, q_mass, p_infinity, q_infinity


def profile_grid(epsilon_top: float, interval: float, points: int = PROFILE_POINTS, epsilon_zero=None):
    """The epsilons at which the profile is asked: ``points`` uniform on [0, ``epsilon_top``] and
    ``epsilon_zero`` (where delta is 0, if known), every one a multiple of ``interval``, increasing, unique.

    Args:
        epsilon_top: where the grid's uniform part ends.
        interval: the PLD's loss grid width.
        points: the number of uniform points.
        epsilon_zero: an epsilon at which delta is known to be 0 (e.g. eps0 for pure eps0-LDP), or None.

    Returns:
        The epsilons.
    """
    top = max(float(epsilon_top), interval)
    steps = np.unique(np.ceil(np.linspace(0.0, top, points) / interval).astype(np.int64))
    if epsilon_zero is not None and math.isfinite(epsilon_zero):
        steps = np.unique(np.append(steps, math.ceil(epsilon_zero / interval)))
    return steps * interval


def profile_view(
    accountant,
    *,
    interval: float,
    points: int = PROFILE_POINTS,
    floor: float = PROFILE_FLOOR,
    label: str = "",
) -> BinnedView:
    """The pessimistic binned PLD of the pair dominating ``accountant``'s certified profile (module docstring).

    Args:
        accountant: an accountant whose value at each epsilon is a certified upper bound on delta for every
            neighbouring pair, both orders (``kind`` UPPER, its scope all datasets and both directions).
        interval: the PLD's loss grid width.
        points: the uniform points of the profile's grid.
        floor: the profile's grid ends where delta falls below this.
        label: the view's label.

    Returns:
        A symmetric pessimistic :class:`~shuffledp.accounting.views.binned.BinnedView`.

    Raises:
        ValueError: ``points`` below 2, or ``floor`` outside (0, 1).
    """
    if int(points) < 2:
        raise ValueError(f"`points` must be an integer >= 2; got {points!r}.")
    if not 0.0 < floor < 1.0:
        raise ValueError(f"`floor` must be in (0, 1); got {floor!r}.")
    epsilon_zero = getattr(accountant.setting, "epsilon_local", None)
    if float(accountant.log_delta_for_epsilon(np.array([0.0]))[0]) <= math.log(floor):
        top = interval
    else:
        top = accountant.epsilon_for_delta(floor)
        if epsilon_zero is not None and math.isfinite(epsilon_zero):
            top = min(top, epsilon_zero)
    grid = profile_grid(top, interval, int(points), epsilon_zero)
    deltas = np.minimum(np.exp(accountant.log_delta_for_epsilon(grid)), 1.0)
    losses, p_mass, q_mass, p_infinity, q_infinity = dominating_atoms(grid, deltas)
    index = bin_index(losses, interval, True)
    order = np.argsort(index, kind="stable")
    index, p_mass, q_mass = index[order], p_mass[order], q_mass[order]
    unique, starts = np.unique(index, return_index=True)
    return BinnedView(
        interval=interval,
        pessimistic=True,
        index=unique,
        p_mass=np.add.reduceat(p_mass, starts) if index.size else p_mass,
        q_mass=np.add.reduceat(q_mass, starts) if index.size else q_mass,
        p_infinity=p_infinity,
        q_infinity=q_infinity,
        dropped=0.0,
        symmetric=True,
        label=label or f"{accountant.name} (profile)",
    )
