"""Balle et al.'s Laplace randomizer on [0, 1] (:class:`LaplaceRandomizer`) and its blanket
(:class:`LaplaceBlanket`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from shuffledp._numerics import log1mexp
from shuffledp._validation import check_real
from shuffledp.accounting.randomizers.base import Blanket, Randomizer, amplification_logs, register_randomizer

__all__ = ["LaplaceRandomizer", "LaplaceBlanket"]


@dataclass(frozen=True)
class LaplaceBlanket(Blanket):
    """The eps0-LDP Laplace randomizer on [0, 1], R(x) = x + Lap(1 / eps0), as a blanket mixture, in logs.

    Balle, Bell, Gascon, Nissim (CRYPTO 2019), Lemma 5.1 (2) and its proof (appendix): the total
    variation similarity is ``gamma = e^(-eps0 / 2)`` and the blanket is Lap(1/2, 1/eps0) (inf over x of
    the densities is (eps0 / 2) e^(-eps0 / 2) e^(-eps0 |y - 1/2|)). With h = eps0 / 2 and
    r_x(y) = p_x(y) / blanket(y) = e^(eps0 (|y - 1/2| - |y - x|)) in [e^-h, e^h], the privacy amplification
    variable L = r_x(W) - e^eps r_x'(W), W ~ blanket, satisfies for every x, x' in [0, 1] (Lemma 5.8):

    * ``max L <= e^h (1 - e^(eps - eps0))`` and ``min L >= e^-h - e^(eps + h)`` (both attained at
      {x, x'} = {0, 1}), hence the range ``(e^eps + 1)(e^h - e^-h)``;
    * ``E L^2 <= (e^(2 eps) + 1) / 3 (2 e^h + e^-eps0) - 2 e^eps (2 e^-h - e^-eps0)`` (equality at
      {x, x'} = {0, 1}: E r_0^2 = (2 e^h + e^-eps0) / 3 and E r_0 r_1 = 2 e^-h - e^-eps0), evaluated
      here without cancellation as ``(e^eps - 1)^2 A + (4/3) e^(eps + h) (1 - e^-h)^2 (1 + 2 e^-h)``
      with A = E r_0^2 (the identity E r_0^2 - E r_0 r_1 = (2/3) e^h (1 - e^-h)^2 (1 + 2 e^-h)).

    These equal the authors' ``LaplaceMechanism`` (github.com/BorjaBalle/amplification-by-shuffling,
    shuffleddp/mechanisms.py) and numerical integration (tests/accounting/test_laplace_blanket.py).
    Methods take eps (array) with 0 <= eps < eps0 for ``log_max`` (the maximum is <= 0 beyond).
    """

    epsilon_local: float

    @property
    def log_gamma(self) -> float:  # type: ignore[override]  # read-only suffices: Blanket's users only read it
        return -0.5 * float(self.epsilon_local)

    @property
    def log_1mgamma(self) -> float:  # type: ignore[override]  # read-only suffices: Blanket's users only read it
        return float(log1mexp(-0.5 * self.epsilon_local))

    def log_max(self, eps):
        """log of the maximum of L (eps < eps0)."""
        return 0.5 * self.epsilon_local + log1mexp(np.asarray(eps, dtype=float) - self.epsilon_local)

    def log_range(self, eps):
        """log of max L - min L = (e^eps + 1)(e^h - e^-h)."""
        h = 0.5 * self.epsilon_local
        return np.logaddexp(np.asarray(eps, dtype=float), 0.0) + h + log1mexp(-2.0 * h)

    def log_second_moment(self, eps):
        """log of the largest E L^2 over x, x' (see the class docstring)."""
        eps = np.asarray(eps, dtype=float)
        return 2.0 * eps + 0.5 * self.epsilon_local + self.log_second_moment_scaled(eps)

    def log_second_moment_scaled(self, eps):
        """log(E L^2 / e^(2 eps + eps0 / 2)): finite even where e^eps0 overflows a double."""
        eps = np.asarray(eps, dtype=float)
        h = 0.5 * self.epsilon_local
        log_a_scaled = math.log(2.0 + math.exp(-3.0 * h)) - math.log(3.0)  # log(E r_0^2) - h
        with np.errstate(divide="ignore"):
            first = 2.0 * log1mexp(-eps) + log_a_scaled  # (1 - e^-eps)^2 E r_0^2 / e^h
        second = math.log(4.0 / 3.0) - eps + 2.0 * float(log1mexp(-h)) + math.log1p(2.0 * math.exp(-h))
        return np.logaddexp(first, second)

    def bennett_logs(self, eps):
        e0 = self.epsilon_local
        log_1m_a, _ = amplification_logs(eps)
        # b+ = e^(eps0/2) e^rel_max, sigma2 = e^(2 eps + eps0/2) e^rel_moment: only differences formed
        rel_max = log1mexp(eps - e0)
        rel_moment = self.log_second_moment_scaled(eps)
        log_beta = -eps + log_1m_a + rel_max - rel_moment
        log_ratio = eps + (eps - 0.5 * e0) + rel_moment - 2.0 * rel_max
        return log_beta, log_ratio, e0 + rel_max


@register_randomizer
@dataclass(frozen=True)
class LaplaceRandomizer(Randomizer):
    """R(x) = x + Lap(1 / eps0) for x in [0, 1] (Balle et al. 2019, Sec. 5.3): eps0-LDP, no domain size (k is None)."""

    name: ClassVar[str] = "Laplace on [0, 1]"
    key: ClassVar[str] = "laplace"
    epsilon_local: float

    def __post_init__(self):
        object.__setattr__(
            self,
            "epsilon_local",
            check_real(
                self.epsilon_local, "epsilon_local", low=0.0, low_open=True, high=math.inf, high_open=True
            ),
        )

    @property
    def blanket(self) -> LaplaceBlanket:
        return LaplaceBlanket(self.epsilon_local)

    def log_density(self, y, x: float):
        """log of the density of R(x) at y: log(eps0 / 2) - eps0 |y - x|."""
        return math.log(0.5 * self.epsilon_local) - self.epsilon_local * np.abs(
            np.asarray(y, dtype=float) - x
        )
