"""Symmetric unary encoding (SUE; basic one-time RAPPOR, Erlingsson, Pihur, Korolova, CCS 2014; Wang et al.
2017): unary encoding (:mod:`~shuffledp.accounting.randomizers.unary`) with p = e^(eps0/2) / (e^(eps0/2) + 1)
and q = 1 - p (each bit is binary randomized response at eps0 / 2; two bits differ between neighbours)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from shuffledp.accounting.randomizers.base import register_randomizer
from shuffledp.accounting.randomizers.unary import UnaryEncoding, check_categorical

__all__ = ["SUE"]


@register_randomizer
@dataclass(frozen=True)
class SUE(UnaryEncoding):
    """SUE(eps0, k): bit x is 1 with probability e^(eps0/2) / (e^(eps0/2) + 1), every other bit with 1 - that."""

    name: ClassVar[str] = "SUE (basic RAPPOR)"
    key: ClassVar[str] = "sue"
    epsilon_local: float
    k: int

    def __post_init__(self):
        check_categorical(self)

    def log_bit_probabilities(self) -> tuple[float, float, float, float]:
        half = 0.5 * self.epsilon_local
        log_den = float(np.logaddexp(half, 0.0))
        return half - log_den, -log_den, -log_den, half - log_den
