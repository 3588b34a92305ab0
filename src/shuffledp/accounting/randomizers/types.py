"""A randomizer's output *types*: what a view needs to know of a randomizer with finitely many outputs.

Write a randomizer R as a blanket mixture (Balle, Bell, Gascon, Nissim, CRYPTO 2019, Sec. 4):
R(o | x) = gamma omega(o) + (1 - gamma) rho_x(o) for every input x, with one input-free law omega (the
blanket) and weight gamma = sum_o min_x R(o | x) (the largest such weight). For a set of inputs of
interest x_0, x_1, ... (x_0 and x_1 the differing user's two values; more inputs name values other users
may hold), the *type* of an output o is the tuple of ratios (R(o | x_0) / omega(o), R(o | x_1) / omega(o),
...). Every output of one type weighs the same in every likelihood ratio the views form, so a view may work
with the multinomial of type counts instead of the outputs themselves: k-RR has 3 types for the pair
(x0, x1) (o = x0, o = x1, any other o).

:class:`OutputTypes` holds, for each type t: its blanket mass omega(t) = sum of omega(o) over the outputs of
type t, and the ratio r_j(t) = R(o | x_j) / omega(o) of each input of interest (the same for every o of the
type). Hence P(type t | x_j) = r_j(t) omega(t), and r_j(t) >= gamma (since R >= gamma omega). A randomizer
with finitely many outputs supplies :meth:`~shuffledp.accounting.randomizers.base.Randomizer.output_types`;
views over the type multinomial need nothing else of it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

__all__ = ["OutputTypes", "TYPE_SUM_TOLERANCE"]

#: how far (in log) a law's total mass over the types may stray from 1 through rounding alone
TYPE_SUM_TOLERANCE = 1e-12


@dataclass(frozen=True, eq=False)
class OutputTypes:
    """The output types of a randomizer for a list of inputs of interest (module docstring).

    Attributes:
        epsilon_local: eps0 of the randomizer (every type's ratios lie within a factor e^eps0 of each other).
        log_gamma: log gamma, the blanket's weight, in (-inf, 0].
        log_blanket_mass: shape (T,): log omega(t); logsumexp over the types is 0.
        log_ratios: shape (m, T), m >= 2: log r_j(t), row 0 for x_0, row 1 for x_1, further rows for further
            inputs of interest (values other users may hold in an explicit dataset).
    """

    epsilon_local: float
    log_gamma: float
    log_blanket_mass: np.ndarray
    log_ratios: np.ndarray

    def __post_init__(self):
        mass = np.asarray(self.log_blanket_mass, dtype=float)
        ratios = np.asarray(self.log_ratios, dtype=float)
        object.__setattr__(self, "log_blanket_mass", mass)
        object.__setattr__(self, "log_ratios", ratios)
        e0, log_gamma = float(self.epsilon_local), float(self.log_gamma)
        if not (math.isfinite(e0) and e0 > 0.0):
            raise ValueError(f"`epsilon_local` must be a finite number > 0; got {self.epsilon_local!r}.")
        if not (log_gamma <= 0.0 and math.isfinite(log_gamma)):
            raise ValueError(f"`log_gamma` must be finite and <= 0; got {self.log_gamma!r}.")
        if mass.ndim != 1 or mass.size == 0 or np.isnan(mass).any() or (mass == np.inf).any():
            raise ValueError(
                f"`log_blanket_mass` must be a non-empty 1-D array of logs < inf; got shape {mass.shape}."
            )
        if ratios.ndim != 2 or ratios.shape[0] < 2 or ratios.shape[1] != mass.size:
            raise ValueError(
                f"`log_ratios` must have shape (m >= 2, {mass.size}) (one row per input of interest); got "
                f"shape {ratios.shape}."
            )
        if not np.isfinite(ratios).all():
            raise ValueError("`log_ratios` must be finite (every ratio is >= gamma > 0).")
        total = float(logsumexp(mass))
        if abs(total) > TYPE_SUM_TOLERANCE:
            raise ValueError(f"`log_blanket_mass` must sum to 1 (log 0); got log {total!r}.")
        per_input = logsumexp(ratios + mass, axis=1)
        worst = int(np.argmax(np.abs(per_input)))
        if abs(per_input[worst]) > TYPE_SUM_TOLERANCE:
            raise ValueError(
                f"`log_ratios` row {worst} must be a law against the blanket (sum_t r(t) omega(t) = 1); got "
                f"log {float(per_input[worst])!r}."
            )
        if (ratios < log_gamma - TYPE_SUM_TOLERANCE).any():
            raise ValueError(f"`log_ratios` must be >= log_gamma = {log_gamma!r} (R >= gamma omega).")
        spread = float(np.max(ratios.max(axis=0) - ratios.min(axis=0)))
        if spread > e0 + TYPE_SUM_TOLERANCE:
            raise ValueError(
                f"`log_ratios` must lie within eps0 = {e0!r} of each other in every type (eps0-LDP); got a "
                f"spread of {spread!r}."
            )

    @property
    def n_types(self) -> int:
        """T, the number of types."""
        return int(self.log_blanket_mass.size)

    def log_type_probabilities(self, row: int) -> np.ndarray:
        """log P(type t | x_row) = log r_row(t) + log omega(t), shape (T,).

        Args:
            row: the input of interest (0 for x_0, 1 for x_1, ...).

        Returns:
            The log-probabilities of the T types under that input.

        Raises:
            ValueError: ``row`` outside [0, m).
        """
        if not (isinstance(row, int | np.integer) and 0 <= row < self.log_ratios.shape[0]):
            raise ValueError(f"`row` must be an integer in [0, {self.log_ratios.shape[0]}); got {row!r}.")
        return self.log_ratios[row] + self.log_blanket_mass

    def merged(self, rows: tuple[int, ...] = (0, 1)) -> OutputTypes:
        """The types of the sub-list ``rows`` of inputs: types with equal ratios on those rows merge (their
        blanket masses add). The pair view needs only rows (0, 1).

        Args:
            rows: the inputs of interest to keep, at least two.

        Returns:
            A new :class:`OutputTypes` with ``len(rows)`` rows and the merged types, in order of first
            appearance.

        Raises:
            ValueError: fewer than two rows, or a row out of range.
        """
        if len(rows) < 2 or any(not (0 <= r < self.log_ratios.shape[0]) for r in rows):
            raise ValueError(
                f"`rows` must name at least two inputs in [0, {self.log_ratios.shape[0]}); got {rows!r}."
            )
        kept = self.log_ratios[list(rows)]
        groups: dict[tuple[float, ...], list[int]] = {}
        for t in range(self.n_types):
            groups.setdefault(tuple(kept[:, t].tolist()), []).append(t)
        columns = list(groups.values())
        mass = np.array([logsumexp(self.log_blanket_mass[c]) for c in columns])
        ratios = np.stack([kept[:, c[0]] for c in columns], axis=1)
        return OutputTypes(self.epsilon_local, self.log_gamma, mass, ratios)
