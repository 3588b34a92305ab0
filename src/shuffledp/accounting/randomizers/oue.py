"""Optimized unary encoding (OUE; Wang, Blocki, Li, Jha, USENIX Security 2017): unary encoding
(:mod:`~shuffledp.accounting.randomizers.unary`) with p = 1/2 and q = 1 / (e^eps0 + 1), the bit probabilities
that minimise the estimate's variance at eps0-LDP."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from shuffledp.accounting.randomizers.base import register_randomizer
from shuffledp.accounting.randomizers.unary import UnaryEncoding, check_categorical

__all__ = ["OUE"]


@register_randomizer
@dataclass(frozen=True)
class OUE(UnaryEncoding):
    """OUE(eps0, k): bit x is 1 with probability 1/2, every other bit with probability 1 / (e^eps0 + 1)."""

    name: ClassVar[str] = "OUE"
    key: ClassVar[str] = "oue"
    epsilon_local: float
    k: int

    def __post_init__(self):
        check_categorical(self)

    def log_bit_probabilities(self) -> tuple[float, float, float, float]:
        e0 = self.epsilon_local
        log_den = float(np.logaddexp(e0, 0.0))
        return -np.log(2.0), -np.log(2.0), -log_den, e0 - log_den
