"""Erlingsson, Feldman, Mironov, Raghunathan, Talwar, Thakurta (SODA 2019; arXiv:1811.12469).

Main amplification-by-shuffling theorem: for eps0-LDP local randomizers with eps0 <= 1/2, n >= 1000
users and delta <= 1/100, the shuffled output is (eps, delta)-DP with
``eps = 12 eps0 sqrt(log(1/delta) / n)``, i.e. ``delta(eps) = exp(-n eps^2 / (144 eps0^2))``.
The validity ranges are those of the bound as implemented by Balle et al.'s reference code
(github.com/BorjaBalle/amplification-by-shuffling: eps0 <= 0.5, n >= 1000, delta <= 0.01).

UPPER bound for all neighbouring datasets (replace-one), both directions. Outside the conditions it
returns the trivial delta = 1 (n < 1000, eps0 > 1/2, or the formula's delta above 1/100), and
delta = 0 for eps >= eps0 (the shuffle of eps0-LDP reports is eps0-DP). The same exponential with
constant 1, *without* these conditions, is the paper's Table II column [11]: see
:mod:`shuffledp.accounting.accountants.rates`.
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.accountants.base import Accountant, BoundKind
from shuffledp.accounting.randomizers import Randomizer

__all__ = ["Erlingsson", "MAX_EPSILON_LOCAL_ERLINGSSON", "MIN_USERS", "MAX_DELTA"]

#: largest eps0 covered by the theorem
MAX_EPSILON_LOCAL_ERLINGSSON = 0.5
#: smallest number of users covered by the theorem
MIN_USERS = 1000
#: largest delta covered by the theorem
MAX_DELTA = 0.01


class Erlingsson(Accountant):
    """delta = exp(-n eps^2 / (144 eps0^2)) within the theorem's range; 1 outside; 0 for eps >= eps0."""

    name = "erlingsson"
    label = "Erlingsson et al. closed form (upper bound)"
    colour = "#000000"
    kind = BoundKind.UPPER
    scope = (
        "all neighbouring datasets (replace-one), both directions (eps0 <= 1/2, n >= 1000, "
        "delta <= 1/100; delta = 1 outside)"
    )
    reference = "Erlingsson et al. (SODA 2019, arXiv:1811.12469), amplification-by-shuffling theorem"
    randomizers = (Randomizer,)  # the theorem holds for every eps0-LDP randomizer

    def log_delta_for_epsilon(self, epsilons) -> np.ndarray:
        epsilons = self._checked_epsilons(epsilons)
        s = self.setting
        if s.epsilon_local > MAX_EPSILON_LOCAL_ERLINGSSON or s.n_users < MIN_USERS:
            return np.where(epsilons >= s.epsilon_local, -np.inf, 0.0)
        with np.errstate(over="ignore"):  # eps^2 = inf: delta = 0 (and eps >= eps0 there anyway)
            log_delta = -s.n_users * epsilons**2 / (144.0 * s.epsilon_local**2)
        out = np.where(log_delta <= np.log(MAX_DELTA), log_delta, 0.0)
        return np.where(epsilons >= s.epsilon_local, -np.inf, out)
