"""Privacy-blanket bounds for shuffled k-RR (Balle, Bell, Gascon, Nissim, CRYPTO 2019; arXiv:1903.02837).

k-RR as a blanket mixture: with probability gamma = k / (e^eps0 + k - 1) a user ignores its value and
reports a uniform draw from the k values (the *blanket*), otherwise it reports its value. Every
accountant here is an UPPER bound on the delta of the shuffled histogram, valid for every pair of
neighbouring datasets (replace-one) in both directions; outside a theorem's stated conditions the
trivial delta = 1 is returned (never NaN). Because the shuffled mechanism is eps0-DP (post-processing
of eps0-LDP reports), delta = 0 is also valid for eps >= eps0, and the Section 5 bounds use it.

* ``strong-adversary`` -- exact delta of the adversary in the proof of Balle et al. Thm 3.1 (Koskela,
  Heikkila, Honkela 2021, Def. 1 and eq. (4.3)): it sees the shuffled reports and learns every
  user's blanket bit b_1..b_n and the data of users 1..n-1. If user n drew from the blanket both
  views have the same law; otherwise, after removing the known truthful reports, it sees the counts
  (N_x0, N_x1) = (A + 1, C) under D(x0) and (A, C + 1) under D(x1), where (A, C) counts the other
  users who drew x0 resp. x1 from the blanket (trinomial, n - 1 trials, probabilities gamma/k each).
  Hence ``delta(eps) = (1 - gamma) * H_{e^eps}((A + 1, C) || (A, C + 1))``, the same in both
  directions (A and C are exchangeable). With S = A + C ~ Bin(n - 1, 2 gamma / k) and A | S ~
  Bin(S, 1/2) this is the split pair of :mod:`shuffledp.accounting.views.split_pair` with alpha = 1,
  evaluated exactly in O(n) (a few ms per epsilon at n = 10^6). Not capped by the eps0-DP bound: it
  is the adversary's exact delta, which stays positive for every eps (the view (A + 1, 0) has
  infinite privacy loss).
* ``balle-blanket`` -- Thm 3.1: (eps, delta)-DP for eps <= 1 when
  gamma >= max{14 k log(2/delta) / ((n - 1) eps^2), 27 k / ((n - 1) eps)}, i.e.
  ``delta = 2 exp(-gamma (n - 1) eps^2 / (14 k))`` when eps <= 1 and gamma (n - 1) eps >= 27 k
  (privacy is monotone in gamma: a larger gamma is a post-processing of a smaller one). For eps > 1
  the value at eps = 1 is returned ((1, delta)-DP implies (eps, delta)-DP).
* ``balle-hoeffding-generic`` / ``balle-hoeffding-krr`` -- Thm 5.3 (Lemmas 5.3, 5.5) for eps < eps0:
  ``delta = b^2 / (4 a gamma n) * (1 - gamma (1 - exp(-2 a^2 / b^2)))^n`` with a = e^eps - 1 and b
  the range of the privacy amplification variable L (Lemma 5.4 generic: gamma = e^-eps0,
  b = (e^eps + 1)(e^eps0 - e^-eps0); Lemma 5.7 k-RR: gamma = k / (e^eps0 + k - 1),
  b = (1 - gamma) k (e^eps + 1)).
* ``balle-bennett-generic`` / ``balle-bennett-krr`` -- Lemma 5.6 with Lemma 5.3, eps < eps0:
  ``delta = b+ / (gamma n log(1 + beta)) * [(1 - gamma (1 - exp(-sigma2 phi(beta) / b+^2)))^n
  - (1 - gamma)^n]``, the expectation over M ~ Bin(n, gamma) of exp(-M sigma2 phi(beta) / b+^2)
  restricted to M >= 1 in closed form, with phi(u) = (1 + u) log(1 + u) - u, beta = a b+ / sigma2,
  b+ the maximum and sigma2 the second moment of L: generic b+ = e^eps0 (1 - e^(eps - 2 eps0)),
  sigma2 = e^eps0 (e^(2 eps) + 1) - 2 e^(eps - 3 eps0); k-RR b+ = gamma (1 - e^eps) + (1 - gamma) k,
  sigma2 = gamma (2 - gamma)(e^eps - 1)^2 + (1 - gamma)^2 k (e^(2 eps) + 1) (derived from L's three
  values under the uniform blanket; they match Lemma 5.7 and the authors' reference code
  github.com/BorjaBalle/amplification-by-shuffling).

* ``balle-hoeffding-own`` / ``balle-bennett-own`` -- the same two bounds for *any* randomizer through its
  own blanket (``randomizer.blanket``): k-RR's (Lemma 5.7; the values of ``balle-*-krr``), Laplace's (those of
  ``balle-*-laplace``), a finite randomizer's from its output types
  (:class:`~shuffledp.accounting.randomizers.TypeBlanket`: unary encoding, OLH, Hadamard response, subset
  selection), else the generic one. Built from loose parameters they are k-RR's.

* ``balle-hoeffding-laplace`` / ``balle-bennett-laplace`` -- the same two bounds for the eps0-LDP
  Laplace randomizer on [0, 1] (Lemmas 5.1 (2) and 5.8: gamma = e^(-eps0/2), b, b+ and sigma2 from
  :class:`~shuffledp.accounting.randomizers.LaplaceBlanket`). Their scope is the shuffled *Laplace*
  randomizer, not k-RR (``randomizers = (LaplaceRandomizer,)``): built from loose parameters they use
  ``LaplaceRandomizer(epsilon_local)``, and ``k`` is not required (accepted and ignored). They draw the
  Laplace curves of Balle et al.'s Figure 3 (panels ii and iii).

All formulas are evaluated in log space. Closed forms answer delta(eps) directly; epsilon for a target
delta comes from :meth:`Accountant.epsilon_for_delta` (bisection, rounding upwards so the returned
epsilon always meets the target).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from shuffledp._numerics import log1mexp, log_expm1
from shuffledp.accounting.accountants.base import Accountant, BoundKind, ShuffleSetting
from shuffledp.accounting.randomizers import Blanket, GenericBlanket, LaplaceRandomizer, Randomizer
from shuffledp.accounting.views.split_pair import check_size
from shuffledp.accounting.views.strong import view as strong

__all__ = [
    "StrongAdversary",
    "BalleBlanket",
    "BalleHoeffdingGeneric",
    "BalleHoeffdingKRR",
    "BalleBennettGeneric",
    "BalleBennettKRR",
    "BalleHoeffdingOwn",
    "BalleBennettOwn",
    "BalleHoeffdingLaplace",
    "BalleBennettLaplace",
]

_ALL_DATASETS = "all neighbouring datasets (replace-one), both directions"
_LAPLACE_SCOPE = (
    _ALL_DATASETS + " of the shuffled eps0-LDP Laplace randomizer on [0, 1] (not k-RR; k ignored; "
    "delta = 0 for eps >= eps0)"
)


class StrongAdversary(Accountant):
    """Exact delta of Balle et al.'s Thm 3.1 adversary (Koskela et al. 2021, eq. (4.3)); see module.

    Refuses n > 10^10 (:data:`~shuffledp.accounting.views.split_pair.MAX_USERS_SPLIT_PAIR`; work ~ sqrt(n) per
    epsilon). delta(eps = inf) > 0, so ``epsilon_for_delta`` refuses targets below it.
    """

    name = "strong-adversary"
    label = "upper bound, all datasets (strong adversary)"
    colour = "#882255"
    kind = BoundKind.UPPER
    scope = _ALL_DATASETS
    reference = (
        "Balle, Bell, Gascon, Nissim (CRYPTO 2019) Thm 3.1 proof (adversary knowing all blanket bits "
        "and the other users' data); Koskela, Heikkila, Honkela (2021) Def. 1, eq. (4.3)"
    )

    def __init__(self, **parameters):
        super().__init__(**parameters)
        check_size(self.name, self.setting.n_users)  # n <= 10^10 (work ~ sqrt(n) per epsilon)

    view_class = strong.StrongView

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        """The view's exact split-pair sum (:meth:`~shuffledp.accounting.views.strong.view.StrongView.log_delta`)."""
        return self.view_log_delta(epsilons)


class BalleBlanket(Accountant):
    """Balle et al. (2019) Thm 3.1 for shuffled k-RR; trivial delta = 1 outside its conditions."""

    name = "balle-blanket"
    label = "Balle et al. Thm 3.1 (upper bound)"
    colour = "#225522"
    kind = BoundKind.UPPER
    scope = _ALL_DATASETS + " (within Thm 3.1's conditions; delta = 1 outside)"
    reference = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Theorem 3.1"

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        s = self.setting
        log_gamma = s.krr.log_gamma
        gamma = np.exp(log_gamma)
        effective = np.minimum(epsilons, 1.0)  # (1, delta)-DP implies (eps, delta)-DP for eps > 1
        valid = (s.n_users >= 2) & (gamma * (s.n_users - 1) * effective >= 27.0 * s.required_k)
        log_delta = np.log(2.0) - gamma * (s.n_users - 1) * effective**2 / (14.0 * s.required_k)
        return np.where(valid, np.minimum(log_delta, 0.0), 0.0)


class _BalleSection5(Accountant):
    """Shared parts of the Section 5 bounds: eps >= eps0 gives 0; result capped at 1.

    The Hoeffding formulas and the k-RR Bennett formula are not monotone in eps: they fall, then rise
    again (e.g. ``balle-hoeffding-krr`` at eps0 = 10, n = 10^6: log delta -7.0 at eps = 2.8, -1.9 just
    below 10; ``balle-bennett-krr`` at eps0 = 0.01, n = 1, k = 10^6). Each value is a valid bound at
    its eps, as the theorem states; the smaller value at a smaller eps would also be valid (DP is
    monotone in eps) but is not what the formula gives, so those classes set ``monotone_in_epsilon``
    to False and return the formula's values.

    Every Bennett variant rises too (found by the validity sweep): ``balle-bennett-laplace`` at eps0 = 15, n = 10^8: log delta -21.7 at eps = 4.1, -11.8 at
    eps = 14.985; ``balle-bennett-generic`` by 2.9 at eps0 = 14.5, n = 10^15. The cause is the formula, not
    its evaluation: the rise is smooth (no step of rounding size on a fine eps grid) and of order 10 in log
    delta, where the evaluation's error is ~1e-15 (tests/accounting/test_validity_sweep.py).
    So all three set ``monotone_in_epsilon = False``.
    """

    kind = BoundKind.UPPER

    def _blanket(self) -> Blanket:
        """The blanket decomposition the bound uses: the randomizer's own (k-RR: Lemma 5.7; Laplace: Lemmas
        5.1 (2), 5.8); the generic accountants use the one every eps0-LDP randomizer has (Lemmas 5.2, 5.4)."""
        randomizer = self.setting.randomizer
        assert randomizer is not None, "ShuffleSetting always sets it (k-RR by default)"
        return randomizer.blanket

    def _gamma(self) -> tuple[float, float]:
        """(log gamma, log(1 - gamma)) used by the bound."""
        blanket = self._blanket()
        return blanket.log_gamma, blanket.log_1mgamma

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        out = np.full(epsilons.shape, -np.inf)
        below = epsilons < self.setting.epsilon_local
        if below.any():
            out[below] = np.minimum(0.0, self._log_bound(epsilons[below]))
        return out

    def _log_bound(self, eps: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


def _log_log1p_exp(log_x):
    """log(log(1 + e^log_x)) without underflow: ~log_x when e^log_x is below 1e-16."""
    log_x = np.asarray(log_x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(log_x < -36.0, log_x, np.log(np.logaddexp(0.0, np.maximum(log_x, -36.0))))


def _log1mexp_of_minus(log_d):
    """log(1 - e^-d) given log d (d >= 0), accurate for every d from 1e-300 to inf."""
    log_d = np.asarray(log_d, dtype=float)
    with np.errstate(over="ignore"):
        d = np.exp(np.maximum(log_d, -36.0))
    return np.where(log_d < -36.0, log_d, log1mexp(-d))


class _BalleHoeffding(_BalleSection5):
    monotone_in_epsilon = False  # rises again below eps0 (see _BalleSection5)

    def _log_range(self, eps):
        """log b, b the range of the privacy amplification variable (the blanket's)."""
        return self._blanket().log_range(eps)

    def _log_bound(self, eps):
        n = float(self.setting.n_users)
        log_gamma, _ = self._gamma()
        log_a = log_expm1(eps)  # -inf at eps = 0, where the bound is trivial
        log_b = self._log_range(eps)
        with np.errstate(over="ignore"):  # a / b below e^-9e307 (eps0 ~ 1e308): the exponent is 0
            exponent = -2.0 * np.exp(2.0 * (log_a - log_b))  # -2 a^2 / b^2
        # log(1 - gamma (1 - e^exponent)) computed as log1p(-gamma * -expm1(exponent))
        log_base = np.log1p(-np.exp(log_gamma) * -np.expm1(exponent))
        with np.errstate(invalid="ignore", over="ignore"):  # +inf (eps0 ~ 1e308): the bound is trivially 1
            value = 2.0 * log_b - np.log(4.0) - log_a - log_gamma - np.log(n) + n * log_base
        return np.where(eps > 0, value, 0.0)


class _BalleBennett(_BalleSection5):
    monotone_in_epsilon = False  # rises again below eps0, every blanket (see _BalleSection5)

    def _scaled_logs(self, eps):
        """(log beta, log(sigma2 / b+^2), log(b+ / gamma)) for 0 < eps < eps0, without overflow (the blanket's).

        b+ and sigma2 are the maximum and second moment of the privacy amplification variable (module
        docstring). Their logs can exceed the largest double (eps0 + 2 eps for eps0 ~ 1e308), so only
        the combinations the bound needs are formed, each as a sum of terms that stay finite.
        """
        return self._blanket().bennett_logs(eps)

    def _log_bound(self, eps):
        n = float(self.setting.n_users)
        log_gamma, log_1mgamma = self._gamma()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # eps = 0: trivial bound
            log_beta, log_ratio, log_max_over_gamma = self._scaled_logs(eps)
            beta = np.exp(np.minimum(log_beta, 0.0))
            # log phi(beta), phi(u) = (1 + u) log(1 + u) - u: series below 1e-4, else
            # (1 + beta)(log(1 + beta) - beta / (1 + beta)) with log(1 + beta) = logaddexp(0, log beta)
            log_1p_beta = np.logaddexp(0.0, log_beta)
            series = 2.0 * log_beta - np.log(2.0) + np.log1p(-beta / 3.0 + beta**2 / 6.0)
            closed = log_1p_beta + np.log(log_1p_beta - np.exp(log_beta - log_1p_beta))
            log_phi = np.where(log_beta < np.log(1e-4), series, closed)
            rate = np.exp(log_ratio + log_phi)  # sigma2 phi(beta) / b+^2 (inf: delta ~ e^-rate = 0)
            # bracket = (1 - gamma (1 - e^-rate))^n - (1 - gamma)^n = first * (1 - e^-d) with
            # d = n log(1 + y), y = gamma e^-rate / (1 - gamma): no subtraction of two close powers
            log_first = n * np.log1p(-np.exp(log_gamma) * -np.expm1(-rate))
            log_d = np.log(n) + _log_log1p_exp(log_gamma - log_1mgamma - rate)
            log_bracket = log_first + _log1mexp_of_minus(log_d)
            value = log_max_over_gamma - np.log(n) - _log_log1p_exp(log_beta) + log_bracket
        return np.where(eps > 0, value, 0.0)


class _AnyRandomizer:
    """Mixin of the generic bounds: every eps0-LDP randomizer, through the blanket all of them have."""

    randomizers: ClassVar[tuple[type[Randomizer], ...]] = (Randomizer,)
    setting: ShuffleSetting  # the accountant's (declared for the type checker only)

    def _blanket(self) -> Blanket:
        return GenericBlanket(self.setting.epsilon_local)


class BalleHoeffdingGeneric(_AnyRandomizer, _BalleHoeffding):
    """Balle et al. (2019) Thm 5.3 (Hoeffding, generic eps0-LDP randomizer)."""

    name = "balle-hoeffding-generic"
    label = "Balle et al. Hoeffding, generic (upper bound)"
    colour = "#228833"
    scope = _ALL_DATASETS + " (any eps0-LDP randomizer; delta = 0 for eps >= eps0)"
    reference = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Thm 5.3 with Lemmas 5.2-5.5"


class BalleHoeffdingKRR(_BalleHoeffding):
    """Balle et al. (2019) Hoeffding bound with the k-RR blanket (Lemma 5.7)."""

    name = "balle-hoeffding-krr"
    label = "Balle et al. Hoeffding, k-RR (upper bound)"
    colour = "#BBCC33"
    scope = _ALL_DATASETS + " (k-RR; delta = 0 for eps >= eps0)"
    reference = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemmas 5.3, 5.5, 5.7 (Section 5.3)"


class BalleBennettGeneric(_AnyRandomizer, _BalleBennett):
    """Balle et al. (2019) Bennett bound (Lemma 5.6), generic eps0-LDP randomizer."""

    name = "balle-bennett-generic"
    label = "Balle et al. Bennett, generic (upper bound)"
    colour = "#666633"
    scope = _ALL_DATASETS + " (any eps0-LDP randomizer; delta = 0 for eps >= eps0)"
    reference = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemmas 5.3, 5.4, 5.6 (Section 5.3)"


class BalleBennettKRR(_BalleBennett):
    """Balle et al. (2019) Bennett bound with the k-RR blanket (Lemmas 5.6, 5.7)."""

    name = "balle-bennett-krr"
    label = "Balle et al. Bennett, k-RR (upper bound)"
    colour = "#EE6677"
    scope = _ALL_DATASETS + " (k-RR; delta = 0 for eps >= eps0)"
    reference = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemmas 5.3, 5.6, 5.7 (Section 5.3)"


class _OwnBlanket:
    """Mixin of the own-blanket bounds: every randomizer, through its own ``blanket`` (the base's
    ``_blanket``)."""

    randomizers: ClassVar[tuple[type[Randomizer], ...]] = (Randomizer,)


_OWN_SCOPE = _ALL_DATASETS + (
    " (any randomizer, through its own blanket: k-RR's, Laplace's, a finite randomizer's from its output "
    "types, else the generic one; delta = 0 for eps >= eps0)"
)


class BalleHoeffdingOwn(_OwnBlanket, _BalleHoeffding):
    """Balle et al. (2019) Hoeffding bound with the randomizer's own blanket."""

    name = "balle-hoeffding-own"
    label = "Balle et al. Hoeffding, own blanket (upper bound)"
    colour = "#BB77FF"
    scope = _OWN_SCOPE
    reference = (
        "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemmas 5.3, 5.5 with the randomizer's blanket "
        "(a finite randomizer's from its output types)"
    )


class BalleBennettOwn(_OwnBlanket, _BalleBennett):
    """Balle et al. (2019) Bennett bound with the randomizer's own blanket."""

    name = "balle-bennett-own"
    label = "Balle et al. Bennett, own blanket (upper bound)"
    colour = "#00AA00"
    scope = _OWN_SCOPE
    reference = (
        "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemmas 5.3, 5.6 with the randomizer's blanket "
        "(a finite randomizer's from its output types)"
    )


class BalleHoeffdingLaplace(_BalleHoeffding):
    """Balle et al. (2019) Hoeffding bound for the Laplace randomizer on [0, 1] (Lemmas 5.1, 5.8)."""

    name = "balle-hoeffding-laplace"
    label = "Balle et al. Hoeffding, Laplace (upper bound)"
    colour = "#994455"
    randomizers = (LaplaceRandomizer,)
    scope = _LAPLACE_SCOPE
    reference = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemmas 5.1 (2), 5.3, 5.5, 5.8 (Section 5.3)"


class BalleBennettLaplace(_BalleBennett):
    """Balle et al. (2019) Bennett bound for the Laplace randomizer on [0, 1] (Lemmas 5.1, 5.6, 5.8)."""

    name = "balle-bennett-laplace"
    label = "Balle et al. Bennett, Laplace (upper bound)"
    colour = "#7F3B08"
    randomizers = (LaplaceRandomizer,)
    scope = _LAPLACE_SCOPE
    reference = "Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemmas 5.1 (2), 5.3, 5.6, 5.8 (Section 5.3)"
