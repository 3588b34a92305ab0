"""The clones pair of Feldman, McMillan, Talwar (FOCS 2021, Thm 3.2) as a view (:class:`ClonesView`: its
outcomes, the one enumeration of the pair, from which its PLD, Renyi moments and composed tail are derived),
its exact delta (:meth:`ClonesView.log_delta`, the fast split-pair sum used by ``feldman-numerical`` and
``clones-krr``: an override held to the stream) and a direct O(n^2) enumeration for tests (:func:`log_delta_direct`).
The pair's masses at an outcome are formed once, by :func:`atoms` (the stream and the Renyi override of
:mod:`shuffledp.accounting.views.clones.rdp` both call it).

C ~ Bin(n - 1, r), A | C ~ Bin(C, 1/2), Delta ~ Bern(alpha), alpha = e^eps0 / (e^eps0 + 1);
P = (A + Delta, C + 1 - A - Delta), Q the swap. Generic pair (any eps0-LDP randomizer): r = e^-eps0,
weight 1. k-RR pair (our derivation, docs/decisions/generic-bounds.md): r = 2q, and with probability
1 - (e^eps0 + 1) q both views are equal (joint convexity: delta <= (e^eps0 + 1) q H_{e^eps}(P || Q)).
With x the first coordinate the loss is log((alpha x + (1 - alpha)(c + 1 - x)) / (alpha (c + 1 - x) +
(1 - alpha) x)). Symmetric pair: one direction suffices.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.params import KrrParams, ShuffleSetting
from shuffledp.accounting.randomizers import Randomizer
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View
from shuffledp.accounting.views.binned import (
    LOG_HALF,
    ROWS_PER_CHUNK,
    flat_rows,
    log_a_outside,
    split_pair_rows,
)
from shuffledp.accounting.views.split_pair import log_split_pair_delta, log_split_pair_delta_direct

__all__ = [
    "ClonesView",
    "GenericClonesView",
    "KrrClonesView",
    "pair_parameters",
    "atoms",
    "log_delta_direct",
]


def pair_parameters(setting: ShuffleSetting, generic: bool) -> dict:
    """Parameters of the clones split pair (generic, or k-RR), in logs.

    Returns keyword arguments for :func:`~shuffledp.accounting.views.split_pair.log_split_pair_delta` plus
    ``log_weight``: the log factor multiplying the divergence (0 for the generic pair).
    """
    epsilon_local = setting.epsilon_local
    binary = KrrParams.of(epsilon_local, 2)  # alpha = e^eps0 / (e^eps0 + 1) does not depend on k
    if generic:
        log_r, log_1mr, log_weight = -epsilon_local, float(log1mexp(-epsilon_local)), 0.0
    else:
        krr = setting.krr
        log_r, log_1mr = krr.log_2q, krr.log_1m2q
        log_weight = min(0.0, float(np.logaddexp(epsilon_local, 0.0)) + krr.log_q)
    return {
        "n_trials": setting.n_users - 1,
        "log_r": log_r,
        "log_1mr": log_1mr,
        "log_alpha": binary.log_alpha,
        "log_1malpha": binary.log_1malpha,
        "log_odds": float(epsilon_local),  # log(alpha / (1 - alpha)), exact
        "log_weight": log_weight,
    }


def atoms(log_row, cc: np.ndarray, x: np.ndarray, log_alpha: float, log_1malpha: float):
    """(log p, log q) of the split pair at rows C = ``cc`` (log Pr(C = c) given: ``log_row``) and first
    coordinates ``x`` (0 <= x <= c + 1): p = Pr(C = c)(alpha B_c(x - 1) + (1 - alpha) B_c(x)), q the swap,
    B_c the Bin(c, 1/2) pmf. The pair's one formula (the stream and the Renyi override use it)."""
    b_x = log_binom_pmf_loader(x, cc, LOG_HALF, LOG_HALF)  # -inf at x = c + 1 (outside [0, c])
    b_xm1 = log_binom_pmf_loader(x - 1.0, cc, LOG_HALF, LOG_HALF)  # -inf at x = 0
    log_p = log_row + np.logaddexp(log_alpha + b_xm1, log_1malpha + b_x)
    log_q = log_row + np.logaddexp(log_alpha + b_x, log_1malpha + b_xm1)
    return log_p, log_q


class ClonesView(View):
    """The clones pair of one setting (module docstring); symmetric. Outcomes: the k-RR pair's equal-law
    branch (weight 1 - w, loss 0) when w < 1, then the outcomes (c, x) with x in [lo, hi + 1] over the split
    pair's windows, weighted by w. What the windows leave out: P-mass alpha Pr(A outside [lo - 1, hi]) +
    (1 - alpha) Pr(A outside [lo, hi + 1]) <= Pr(A outside [lo, hi]), the same for Q, times w. Every
    likelihood ratio of the pair is at most e^eps0 (:meth:`loss_bounds`)."""

    symmetric = True
    generic: bool

    def parameters(self) -> dict:
        return pair_parameters(self.setting, self.generic)

    def __init__(self, setting):
        super().__init__(setting)
        self._rows_by_window: dict[float, tuple] = {}  # the rows of each window K used so far

    def _rows(self, K: float):
        """The rows of window K (:meth:`_window_rows`), computed once per K."""
        if K not in self._rows_by_window:
            self._rows_by_window[K] = self._window_rows(K)
        return self._rows_by_window[K]

    def _window_rows(self, K: float):
        pair = self.parameters()
        s, log_w, a_lo, a_hi, log_s_out = split_pair_rows(
            self.setting.n_users - 1, pair["log_r"], pair["log_1mr"], K
        )
        return s, log_w, a_lo, a_hi, log_a_outside(s, log_w, a_lo, a_hi, log_s_out)

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        pair = self.parameters()
        log_alpha, log_1malpha, log_weight = pair["log_alpha"], pair["log_1malpha"], pair["log_weight"]
        alpha, one_minus_alpha = math.exp(log_alpha), math.exp(log_1malpha)
        if log_weight < 0.0:
            log_rest = np.array([float(log1mexp(log_weight))])
            yield OutcomeChunk(log_rest, log_rest, np.zeros(1))
        s, log_w, a_lo, a_hi, _ = self._rows(K)
        step = max(1, ROWS_PER_CHUNK // int(np.max(a_hi - a_lo + 2)))
        for start in range(0, s.size, step):
            stop = min(s.size, start + step)
            cc, x, pos = flat_rows(
                s[start:stop], a_lo[start:stop], a_hi[start:stop] + 1.0
            )  # x in [lo, hi + 1]
            log_p, log_q = atoms(log_weight + log_w[start:stop][pos], cc, x, log_alpha, log_1malpha)
            y = cc + 1.0 - x
            loss = np.log((alpha * x + one_minus_alpha * y) / (alpha * y + one_minus_alpha * x))
            yield OutcomeChunk(log_p, log_q, loss)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        log_out = self.parameters()["log_weight"] + self._rows(K)[4]
        return LeftOut(log_out, log_out)

    def loss_bounds(self) -> tuple[float, float]:
        return (self.setting.epsilon_local, self.setting.epsilon_local)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: with ``upper`` the exact split-pair sum of the pair (times its weight; 0, i.e. log -inf,
        from eps0 on; ``K`` is not used); without it the stream's sum without its left-out mass.

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).
            K: half-width of the stream's windows (``upper=False`` only).
            upper: the exact sum (True) or the stream's lower value (False).

        Returns:
            log delta at each epsilon (1-D).
        """
        if not upper:
            return super().log_delta(epsilons, K=K, upper=False)
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
        parameters = self.parameters()
        log_weight = parameters.pop("log_weight")
        out = np.minimum(0.0, log_weight + log_split_pair_delta(eps, **parameters))
        # exactly 0 from eps0 on (the pair's largest likelihood ratio is e^eps0; rounding of
        # log(alpha / (1 - alpha)) must not leave a 1e-16 residue at eps = eps0)
        return np.where(eps >= self.setting.epsilon_local, -np.inf, out)


class GenericClonesView(ClonesView):
    """Feldman et al.'s generic pair (any eps0-LDP randomizer): r = e^-eps0, weight 1."""

    name = "clones"
    generic = True
    randomizers = (Randomizer,)  # it reads eps0 only: every eps0-LDP randomizer


class KrrClonesView(ClonesView):
    """The pair specialised to k-RR by joint convexity (ours): r = 2q, weight (e^eps0 + 1) q."""

    name = "clones-krr"
    generic = False


def log_delta_direct(epsilons: np.ndarray, setting: ShuffleSetting, generic: bool) -> np.ndarray:
    """Straightforward O(n^2) enumeration of the same pair (tests, benchmarks)."""
    parameters = pair_parameters(setting, generic)
    log_weight = parameters.pop("log_weight")
    return np.minimum(0.0, log_weight + log_split_pair_delta_direct(epsilons, **parameters))
