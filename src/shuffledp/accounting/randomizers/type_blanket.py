"""The blanket of any randomizer with finitely many outputs, from its output types; and the types of a finite
channel.

:class:`TypeBlanket` gives Balle, Bell, Gascon, Nissim's (CRYPTO 2019) Section 5 quantities -- the blanket
weight gamma and the range, maximum and second moment of the privacy amplification variable
L = r_x(W) - e^eps r_x'(W), W ~ omega -- from a randomizer's pair types
(:meth:`~shuffledp.accounting.randomizers.base.Randomizer.output_types` with ``inputs=2``; every output of a
type has the same ratios, so L takes one value per type: L(t) = r_0(t) - e^eps r_1(t) with probability
omega(t)). Both directions (x, x') = (x_0, x_1) and (x_1, x_0) are taken, and the larger range, maximum and
second moment kept. This is exact for a randomizer whose pair types are the same for every pair of distinct
inputs (k-RR, unary encoding, local hashing, Hadamard response, subset selection: each documents it), and is
then at least as tight as :class:`~shuffledp.accounting.randomizers.base.GenericBlanket` (whose quantities are
bounds over every eps0-LDP randomizer). For k-RR it equals :class:`~shuffledp.accounting.randomizers.KrrBlanket`.

:func:`types_from_channel` forms the types of a finite channel directly (gamma = sum_o min_x C[x, o],
omega(o) = min_x C[x, o] / gamma, ratios grouped): the brute force the closed forms are tested against.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from shuffledp._validation import check_integer
from shuffledp.accounting.randomizers.base import Blanket, amplification_logs
from shuffledp.accounting.randomizers.types import OutputTypes

__all__ = ["TypeBlanket", "types_from_channel"]


class TypeBlanket(Blanket):
    """Balle et al.'s Section 5 blanket quantities from a randomizer's pair types (module docstring)."""

    def __init__(self, types: OutputTypes):
        pair = types.merged((0, 1))
        self.types = pair
        self.epsilon_local = pair.epsilon_local
        self.log_gamma = float(pair.log_gamma)
        with np.errstate(divide="ignore"):
            self.log_1mgamma = float(np.log(-np.expm1(self.log_gamma)))
        self._mass = np.exp(pair.log_blanket_mass)

    def _scaled_values(self, eps):
        """(scale M, values of L / e^M per direction, per type): shape (2, ..., T) for eps of any shape."""
        eps = np.asarray(eps, dtype=float)
        ratios = self.types.log_ratios
        scale = float(ratios.max())
        first, second = np.exp(ratios[0] - scale), np.exp(ratios[1] - scale)
        factor = np.exp(eps)[..., None]
        values = np.stack([first - factor * second, second - factor * first])
        return scale, values

    def log_range(self, eps):
        scale, values = self._scaled_values(eps)
        spread = (values.max(axis=-1) - values.min(axis=-1)).max(axis=0)
        with np.errstate(divide="ignore"):
            return scale + np.log(spread)

    def log_max(self, eps):
        """log b+ = log max L (over both directions)."""
        scale, values = self._scaled_values(eps)
        with np.errstate(divide="ignore", invalid="ignore"):
            return scale + np.log(values.max(axis=-1).max(axis=0))

    def log_second_moment(self, eps):
        """log sigma2 = log E L^2 (the larger of the two directions)."""
        scale, values = self._scaled_values(eps)
        moment = (values**2 @ self._mass).max(axis=0)
        return 2.0 * scale + np.log(moment)

    def bennett_logs(self, eps):
        eps = np.asarray(eps, dtype=float)
        log_1m_a, _ = amplification_logs(eps)
        log_max, log_moment = self.log_max(eps), self.log_second_moment(eps)
        with np.errstate(invalid="ignore"):
            log_beta = eps + log_1m_a + log_max - log_moment  # log((e^eps - 1) b+ / sigma2)
            log_ratio = log_moment - 2.0 * log_max
        return log_beta, log_ratio, log_max - self.log_gamma


def types_from_channel(channel, epsilon_local: float, inputs: int = 2) -> OutputTypes:
    """The output types of a finite channel for the inputs of interest 0, 1, ..., ``inputs`` - 1, by brute force.

    Args:
        channel: C[x, o] = P(output o | input x), k x d, rows summing to 1, every entry positive.
        epsilon_local: eps0 (the channel is eps0-LDP).
        inputs: how many inputs of interest, in [2, k].

    Returns:
        The :class:`OutputTypes`, types in order of first appearance among the outputs.

    Raises:
        ValueError: ``inputs`` out of range, or a channel with a zero entry.
    """
    channel = np.asarray(channel, dtype=float)
    check_integer(inputs, "inputs", low=2, high=channel.shape[0])
    if not np.all(channel > 0):
        raise ValueError("`channel` must have positive entries (an eps0-LDP channel with finite ratios).")
    floor = channel.min(axis=0)
    log_gamma = float(np.log(floor.sum()))
    log_omega = np.log(floor) - log_gamma
    log_ratios = np.log(channel[:inputs]) - log_omega
    groups: dict[tuple[float, ...], list[int]] = {}
    for output in range(channel.shape[1]):
        key = tuple(np.round(log_ratios[:, output], 12).tolist())
        groups.setdefault(key, []).append(output)
    columns = list(groups.values())
    mass = np.array([logsumexp(log_omega[c]) for c in columns])
    ratios = np.stack([log_ratios[:, c[0]] for c in columns], axis=1)
    return OutputTypes(float(epsilon_local), log_gamma, mass - logsumexp(mass), ratios)
