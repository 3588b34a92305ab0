""" "Hiding among the clones" bounds (Feldman, McMillan, Talwar, FOCS 2021; arXiv:2012.12803).

Every accountant here is an UPPER bound on the delta of shuffled k-RR, valid for all neighbouring
datasets (replace-one) in both directions, and equal to 0 for eps >= eps0 (the shuffle of eps0-LDP
reports is eps0-DP).

* ``feldman-closed`` -- Thm 3.1: for delta in [0, 1] with eps0 <= log(n / (16 log(2/delta))) the
  shuffle is (eps, delta)-DP with
  ``eps = log(1 + (e^eps0 - 1)/(e^eps0 + 1) * (8 sqrt(e^eps0 log(4/delta)) / sqrt(n) + 8 e^eps0 / n))``.
  Inverted in closed form: with t = (e^eps - 1)(e^eps0 + 1)/(e^eps0 - 1) - 8 e^eps0 / n > 0,
  ``delta = 4 exp(-n t^2 / (64 e^eps0))``; the condition needs delta >= delta_min = 2 exp(-n e^-eps0
  / 16), so the returned delta is max(delta, delta_min) (the theorem at delta_min gives a smaller eps,
  hence (eps, delta_min)-DP) and 1 when t <= 0 or delta_min >= 1.
* ``feldman-numerical`` -- exact hockey-stick divergence of the clones pair of Thm 3.2, which
  dominates the shuffle of any n eps0-LDP randomizers: C ~ Bin(n - 1, e^-eps0), A | C ~ Bin(C, 1/2),
  Delta ~ Bernoulli(e^eps0 / (e^eps0 + 1)), P = (A + Delta, C - A + 1 - Delta), Q the swap
  (the pair used by the authors' code github.com/apple/ml-shuffling-amplification). Their code
  brackets the divergence between bounds; here it is summed exactly in log space (symmetric pair, so
  one direction suffices). Upper bound for every eps0-LDP randomizer, hence for shuffled k-RR.
* ``clones-krr`` -- the same reduction specialised to k-RR (our derivation, stated in
  docs/decisions/generic-bounds.md): each other user's report distribution contains q = 1/(e^eps0 + k - 1)
  mass on each of x0, x1, so it is a clone (x0 or x1 with probability 1/2 each) with probability
  2q; user u reports x0 or x1 with total probability (e^eps0 + 1) q and otherwise a value whose law
  does not depend on its input. Joint convexity of the hockey-stick divergence then gives
  ``delta <= (e^eps0 + 1) q * H_{e^eps}(P || Q)`` with C ~ Bin(n - 1, 2q) and the same A, Delta as
  above. This is NOT Feldman, McMillan & Talwar's 2023 pair (next item): the weight factors u's
  "neither x0 nor x1" branch out, where the 2023 pair keeps it inside the multinomial.
* ``clones-krr-2023`` -- Feldman, McMillan, Talwar (SODA 2023, arXiv:2208.04591) "stronger clones" pair
  with k-RR's p = q = 1/(e^eps0 + k - 1) (:mod:`shuffledp.accounting.views.clones.stronger_2023`): the curve
  Koskela et al. label "Feldman et al. (2023, Thm. 5.1)". Their erratum: the proof of Lemma 3.5 fails
  for p < 1/(e^eps0 + 1), i.e. for k-RR at every k >= 3, and brute force finds datasets above it there
  (tests/accounting/test_clones_2023.py). Kind AS_PRINTED; an upper bound only at k = 2, where it
  equals ``clones-krr``.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.randomizers import KRR, Randomizer
from shuffledp.accounting.views.clones import pair as clones_view
from shuffledp.accounting.views.clones import stronger_2023 as clones_2023
from shuffledp.accounting.views.split_pair import check_size

__all__ = ["FeldmanClosed", "FeldmanNumerical", "ClonesKRR", "ClonesKRR2023"]

_ALL_DATASETS = "all neighbouring datasets (replace-one), both directions"


class FeldmanClosed(Accountant):
    """Feldman, McMillan, Talwar (2021) Thm 3.1 closed form, inverted for delta; see module."""

    name = "feldman-closed"
    label = "Feldman et al. closed form (upper bound)"
    colour = "#EE8866"
    kind = BoundKind.UPPER
    scope = _ALL_DATASETS + " (within Thm 3.1's condition; delta = 1 outside)"
    reference = "Feldman, McMillan, Talwar (FOCS 2021, arXiv:2012.12803), Theorem 3.1"
    randomizers = (Randomizer,)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        n = float(self.setting.n_users)
        e0 = self.setting.epsilon_local
        log_delta_min = np.log(2.0) - n * np.exp(-e0) / 16.0
        out = np.where(epsilons >= e0, -np.inf, 0.0)
        # the condition holds for some delta < 1 only when delta_min < 1, i.e. eps0 < log(n / (16 log 2))
        # (< 35 for n <= 1e15): then e^eps0 and e^eps (eps < eps0) are finite
        inside = (epsilons < e0) & (log_delta_min < 0.0)
        if inside.any():
            eps = epsilons[inside]
            t = np.expm1(eps) / np.tanh(e0 / 2.0) - 8.0 * np.exp(e0) / n  # (e^e0+1)/(e^e0-1) = coth(e0/2)
            log_delta = np.log(4.0) - n * t**2 / (64.0 * np.exp(e0))
            out[inside] = np.minimum(0.0, np.where(t > 0, np.maximum(log_delta, log_delta_min), 0.0))
        return out


class FeldmanNumerical(Accountant):
    """Exact hockey-stick divergence of Feldman et al.'s generic clones pair (Thm 3.2).

    Refuses n > 10^10 (:data:`~shuffledp.accounting.views.split_pair.MAX_USERS_SPLIT_PAIR`; work ~ sqrt(n) per
    epsilon); exact for every finite eps0 and eps (no clamping of e^eps).
    """

    name = "feldman-numerical"
    label = "Feldman et al. numerical (upper bound)"
    colour = "#222255"
    kind = BoundKind.UPPER
    scope = _ALL_DATASETS + " (any eps0-LDP randomizer)"
    reference = (
        "Feldman, McMillan, Talwar (FOCS 2021, arXiv:2012.12803), Theorem 3.2 (clones pair), "
        "evaluated exactly"
    )
    randomizers: ClassVar[tuple[type[Randomizer], ...]] = (Randomizer,)
    view_class: ClassVar[type[clones_view.ClonesView]] = clones_view.GenericClonesView

    def __init__(self, **parameters):
        super().__init__(**parameters)
        check_size(self.name, self.setting.n_users)  # n <= 10^10 (work ~ sqrt(n) per epsilon)

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """The view's exact split-pair sum (:meth:`~shuffledp.accounting.views.clones.pair.ClonesView.log_delta`)."""
        return self.view_log_delta(epsilons)

    def log_delta_for_epsilon_direct(self, epsilons) -> np.ndarray:
        """Straightforward O(n^2) enumeration of the same pair (tests, benchmarks)."""
        return clones_view.log_delta_direct(
            self._checked_epsilons(epsilons), self.setting, self.view_class.generic
        )


class ClonesKRR(FeldmanNumerical):
    """Clones reduction specialised to k-RR (see module docstring); exact divergence times weight.

    Same limit as ``feldman-numerical`` (n <= 10^10).
    """

    name = "clones-krr"
    label = "clones, k-RR by joint convexity (ours; upper bound)"
    colour = "#663333"
    scope = _ALL_DATASETS + (
        " (k-RR; our derivation: the 2021 clones reduction with u's 'neither x0 nor x1' "
        "branch factored out by joint convexity -- not Feldman et al.'s 2023 pair)"
    )
    reference = (
        "our derivation: clones reduction of Feldman, McMillan, Talwar (2021, Sec. 3) specialised to k-RR "
        "by joint convexity (docs/decisions/generic-bounds.md); not their 2023 pair (clones-krr-2023)"
    )
    randomizers = (KRR,)
    view_class = clones_view.KrrClonesView


class ClonesKRR2023(Accountant):
    """Feldman, McMillan, Talwar (2023) stronger-clones pair for k-RR, p = 1/(e^eps0 + k - 1); exact.

    NOT a guarantee for k >= 3 (see module docstring); refuses pairs whose windows exceed
    :data:`~shuffledp.accounting.views.clones.stronger_2023.MAX_OUTCOMES` outcomes (n up to about 10^7 at k = 2).
    """

    name = "clones-krr-2023"
    label = "clones, Feldman et al. 2023 pair for k-RR (as printed; invalid for k >= 3)"
    colour = "#6600CC"
    kind = BoundKind.AS_PRINTED
    scope = (
        "the pair as stated before the paper's erratum, evaluated exactly: an upper bound for every "
        "neighbouring dataset (replace-one, both directions) only at k = 2 (p = 1/(e^eps0 + 1), inside the "
        "erratum's condition); for k >= 3, p < 1/(e^eps0 + 1) and brute force finds datasets whose true delta "
        "exceeds it (tests/accounting/test_clones_2023.py): not a guarantee"
    )
    reference = (
        "Feldman, McMillan, Talwar, 'Stronger privacy amplification by shuffling for Renyi and approximate "
        "differential privacy' (SODA 2023, arXiv:2208.04591), Lemma 3.5 pair with k-RR's p; erratum "
        "(arXiv v3+): Lemma 3.5's proof fails for p < 1/(e^eps0 + 1)"
    )

    def __init__(self, **parameters):
        super().__init__(**parameters)
        clones_2023.check_size(self.setting)  # one-line refusal before any large allocation

    view_class = clones_2023.Clones2023View

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """The view's outcome sum (:meth:`~shuffledp.accounting.views.clones.stronger_2023.Clones2023View.log_delta`)."""
        return self.view_log_delta(epsilons)
