"""The privacy loss distribution of a view, derived from its outcomes.

**Binning** (:func:`binned`). Every outcome o of the REMOVE stream has the loss L = log(P(o) / Q(o)) (the
chunk's exact ``loss`` where the view gives one). Finite losses are binned on the grid of width Delta --
rounded up (``pessimistic``) or down -- keeping each bin's P-mass and Q-mass (so the ADD direction and
subsampled mixtures are exact functions of the bins); L = +inf outcomes form the P-infinity mass, L = -inf
the Q-infinity mass. The view's certified left-out bound (the larger of its P- and Q-side) is the
``dropped`` mass: added to the infinity mass when pessimistic, dropped otherwise.

**Directions and subsampling** (:func:`direction_bins`). REMOVE: (q P + (1 - q) Q, Q), loss log(q e^L + 1 - q);
ADD: (Q, q P + (1 - q) Q), loss -log(q e^L + 1 - q) (Zhu, Dong, Wang 2022, Prop. 30; Koskela et al. Sec.
3.4); each loss taken at the bin edge that errs the right way and rounded again to the grid. q = 1 is the
pair itself.

**PLD** (:func:`pld`). Our dense PLD (:class:`~shuffledp.accounting.numerics.dense_pld.Pld`, composed exactly
as dp_accounting composes), one PMF when the pair is symmetric and unsampled, else REMOVE and ADD;
:meth:`~shuffledp.accounting.numerics.dense_pld.Pld.to_dp_accounting` hands it to dp_accounting through
``PrivacyLossDistribution.create_from_rounded_probability``. Pessimistic: every delta and epsilon read from
it, alone or composed, is an upper bound on the pair's; optimistic: a lower bound up to the truncation of
composition.
"""

from __future__ import annotations

import math

import numpy as np

from shuffledp._numerics import logsumexp
from shuffledp.accounting.numerics.dense_pld import DensePmf, Pld
from shuffledp.accounting.params import Direction
from shuffledp.accounting.views.binned import BinnedView, Bins, bin_index

__all__ = ["binned", "direction_bins", "pld"]


def _log_total(values: np.ndarray) -> float:
    return float(logsumexp(values)) if values.size else -math.inf


def binned(
    view, *, interval: float, pessimistic: bool, K: float, log_masses: bool = False, label: str = ""
) -> BinnedView:
    """The view's REMOVE stream binned on the grid of width ``interval`` (module docstring); with
    ``log_masses`` every bin's masses also in log space (``BinnedView.logs``, for the composed tail)."""
    bins = Bins(log_space=log_masses)
    log_p_infinity = log_q_infinity = -math.inf
    for chunk in view.outcomes(K):
        log_p, log_q = np.asarray(chunk.log_p, float), np.asarray(chunk.log_q, float)
        if chunk.loss is not None:
            loss = np.asarray(chunk.loss, float)
        else:
            with np.errstate(invalid="ignore"):
                loss = log_p - log_q
        finite = np.isfinite(loss)
        if not finite.all():
            log_p_infinity = float(np.logaddexp(log_p_infinity, _log_total(log_p[loss == np.inf])))
            log_q_infinity = float(np.logaddexp(log_q_infinity, _log_total(log_q[loss == -np.inf])))
            log_p, log_q, loss = log_p[finite], log_q[finite], loss[finite]
        if loss.size:
            bins.add(bin_index(loss, interval, pessimistic), np.exp(log_p), np.exp(log_q), log_p, log_q)
    left = view.left_out(K)
    log_dropped = max(left.log_p, left.log_q)
    return bins.view(
        interval,
        pessimistic,
        math.exp(log_p_infinity),
        math.exp(log_q_infinity),
        math.exp(log_dropped),
        view.symmetric,
        label or view.name,
        (log_p_infinity, log_q_infinity, log_dropped),
    )


def direction_bins(view: BinnedView, q: float, direction: Direction) -> tuple[np.ndarray, np.ndarray, float]:
    """(bin indices, masses, infinity mass) of one direction (REMOVE or ADD) of the (subsampled) pair
    (module docstring)."""
    delta, pess = view.interval, view.pessimistic
    k = view.index.astype(float)
    direction = Direction.parse(direction)
    if direction is Direction.BOTH:
        raise ValueError("`direction` must be one of 'forward', 'reverse'; got 'both'.")
    if direction is Direction.REMOVE:
        edge = k * delta  # upper edge (pessimistic) / lower edge (optimistic) of every bin
        mass = q * view.p_mass + (1.0 - q) * view.q_mass
        extra_loss, extra_mass = (math.log1p(-q), (1.0 - q) * view.q_infinity) if q < 1.0 else (0.0, 0.0)
        infinity, sign = q * view.p_infinity, 1.0
    else:
        edge = (k - 1.0) * delta if pess else (k + 1.0) * delta
        mass = view.q_mass
        extra_loss, extra_mass = (-math.log1p(-q), view.q_infinity) if q < 1.0 else (0.0, 0.0)
        infinity, sign = (view.q_infinity if q == 1.0 else 0.0), -1.0
    if q == 1.0:
        index = np.rint(sign * edge / delta).astype(np.int64)
    else:
        loss = sign * np.log1p(q * np.expm1(edge))
        index = (np.ceil(loss / delta) if pess else np.floor(loss / delta)).astype(np.int64)
    if extra_mass > 0:
        extra = math.ceil(extra_loss / delta) if pess else math.floor(extra_loss / delta)
        index, mass = np.append(index, extra), np.append(mass, extra_mass)
    if pess:
        infinity += view.dropped
    return index, mass, infinity


def pld(view: BinnedView, q: float = 1.0) -> Pld:
    """The binned view as our dense PLD, subsampled at rate ``q`` (module docstring)."""
    remove = DensePmf.from_bins(*direction_bins(view, q, Direction.REMOVE), view.interval, view.pessimistic)
    if view.symmetric and q == 1.0:
        return Pld(remove)
    return Pld(
        remove, DensePmf.from_bins(*direction_bins(view, q, Direction.ADD), view.interval, view.pessimistic)
    )
