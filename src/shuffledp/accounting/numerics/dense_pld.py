"""Dense privacy loss distributions that we hold ourselves, composed exactly as dp_accounting 0.6.0 composes
its ``DensePLDPmf``, and exported through dp_accounting's public constructor.

Why our own: the composed epsilon(delta) and delta(epsilon) of :mod:`~shuffledp.accounting.numerics.pld_epsilon`
walk the PMF's arrays (dp_accounting's per-loss Python loop would take most of a figure's time), and
dp_accounting 0.6.0 offers no public accessor for a PMF's arrays. So the rounds are built here from arrays
(:class:`DensePmf`: grid width, lowest loss index, masses, infinity mass, pessimistic or not), and composed
with the same public numerical functions, in the same order, as ``DensePLDPmf.compose`` /
``DensePLDPmf.self_compose``:

* ``compose``: ``scipy.signal.fftconvolve`` of the two mass arrays; infinity mass a + b - a b; then the tails
  are truncated as dp_accounting's ``_truncate_tails`` does (the longest prefix and suffix each of mass
  <= truncation / 2, found by a left-to-right running sum; the left part added to the first kept mass when
  pessimistic, the right part to the infinity mass; optimistic: the right part added to the last kept mass,
  the left part dropped);
* ``self_compose``: ``dp_accounting.pld.common.self_convolve``, step for step (:func:`_self_convolve`), and the
  infinity mass truncation - expm1(T log1p(-a)). Its truncation bounds (``compute_self_convolve_bounds``:
  a Chernoff bound at 40 orders, each a ``scipy.special.logsumexp`` of the whole mass array) cost more than
  its FFT; scipy's general logsumexp pays for array-API dispatch, three array copies and a second,
  unshifted pass of ``b * exp(a)`` kept only for a non-finite result.
  :func:`~shuffledp._numerics.mgf_logsumexp` makes the same floating-point operations in the same order on
  every term that can change the result (exponentials of the non-zero masses only, found once per array, not
  once per order; the sum over the whole array) and falls back to scipy's own call where the shifted result
  is not finite, so the bounds, and so the composed arrays, are the same to the bit
  (tests/accounting/test_self_convolve.py).

The results are dp_accounting's to the last bit (tests/accounting/test_pld_epsilon.py composes both ways and
compares the arrays). :meth:`Pld.to_dp_accounting` hands a PLD to dp_accounting through its public
``PrivacyLossDistribution.create_from_rounded_probability`` (which makes a sparse PMF of up to 1000 losses, a
dense one above).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from shuffledp._numerics import MgfMasses, mgf_logsumexp

# _LAZY_IMPORTS: dp_accounting and scipy.signal (which pulls in scipy.stats) are imported inside
# the three functions that use them, not here. Every accountant imports this module through its view, so
# a top-level import made every process that loads the registry -- the Snakefile's config check, each
# workflow job, the CLI -- pay for them (most of the start-up of a job that computes nothing).
if TYPE_CHECKING:  # the annotation of Pld.to_dp_accounting only
    from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

__all__ = ["DensePmf", "Pld"]


def _prefix_to_truncate(values: np.ndarray, threshold: float) -> int:
    """Size of the longest prefix whose running sum (left to right) stays <= threshold."""
    running = np.cumsum(values)  # sequential: the same partial sums as a Python loop
    over = np.flatnonzero(running > threshold)
    return int(over[0]) if over.size else values.size


def _truncate_tails(probs: np.ndarray, truncation: float, pessimistic: bool) -> tuple[int, np.ndarray, float]:
    """(offset, kept masses, mass moved to infinity): dp_accounting 0.6.0's tail truncation (module doc)."""
    if truncation == 0:
        return 0, probs, 0
    left = _prefix_to_truncate(probs, truncation / 2)
    right = len(probs) - _prefix_to_truncate(np.flip(probs), truncation / 2)
    right = max(right, left + 1)
    left_mass, right_mass = np.sum(probs[:left]), np.sum(probs[right:])
    kept = probs[left:right]
    if pessimistic:
        kept[0] += left_mass
        return left, kept, right_mass
    kept[-1] += right_mass
    return left, kept, 0


def _self_convolve_bounds(masses: np.ndarray, times: int, tail_mass_truncation: float) -> tuple[int, int]:
    """dp_accounting 0.6.0's ``common.compute_self_convolve_bounds`` at its default orders (Chernoff bounds
    at +-1..20 / len), with :func:`~shuffledp._numerics.mgf_logsumexp` for its logsumexp."""
    upper_bound, lower_bound = (len(masses) - 1) * times, 0
    if tail_mass_truncation == 0:
        return lower_bound, upper_bound
    orders = np.concatenate((np.arange(-20, 0), np.arange(1, 21))) / len(masses)
    prepared = MgfMasses.of(masses)
    for order in orders:
        bound = (times * mgf_logsumexp(prepared, order) + math.log(2 / tail_mass_truncation)) / order
        if not math.isfinite(bound):
            continue
        if order > 0:
            upper_bound = min(upper_bound, math.ceil(bound))
        if order < 0:
            lower_bound = max(lower_bound, math.floor(bound))
    return lower_bound, upper_bound


def _self_convolve(masses: np.ndarray, times: int, tail_mass_truncation: float) -> tuple[int, np.ndarray]:
    """dp_accounting 0.6.0's ``common.self_convolve`` step for step (module doc): (lowest kept index, masses)."""
    from scipy import fft  # see _LAZY_IMPORTS

    masses = np.asarray(masses, dtype=float)
    lower, upper = _self_convolve_bounds(masses, times, tail_mass_truncation)
    output_len = upper - lower + 1
    fast_len = fft.next_fast_len(max(output_len, len(masses)))
    spectrum = fft.fft(masses, fast_len)
    spectrum **= times  # in place, by the same numpy operator as dp_accounting's ``** times``
    convolved = np.real(fft.ifft(spectrum))
    # dp_accounting's np.roll(convolved, -lower)[:output_len], without rolling the whole array: entries
    # lower, lower + 1, ... (mod fast_len), copied as they are
    start = lower % fast_len
    if start + output_len <= fast_len:
        return lower, convolved[start : start + output_len]
    return lower, np.concatenate((convolved[start:], convolved[: start + output_len - fast_len]))


@dataclass(frozen=True, eq=False)  # compared and hashed by identity (a PMF is never changed)
class DensePmf:
    """Masses ``probs[i]`` on the losses (``lower_loss`` + i) x ``discretization``, plus ``infinity_mass``."""

    discretization: float
    lower_loss: int
    probs: np.ndarray
    infinity_mass: float
    pessimistic: bool

    @classmethod
    def from_bins(cls, index, mass, infinity: float, discretization: float, pessimistic: bool) -> DensePmf:
        """Masses summed per integer loss index (``np.bincount``); an empty PMF is one zero mass at 0."""
        index = np.asarray(index, dtype=np.int64)
        if index.size == 0:
            index, mass = np.zeros(1, dtype=np.int64), np.zeros(1)
        lower = int(index.min())
        probs = np.bincount(index - lower, weights=mass)
        return cls(discretization, lower, probs, min(1.0, float(infinity)), pessimistic)

    @property
    def size(self) -> int:
        return len(self.probs)

    def _check(self, other: DensePmf) -> None:
        if self.discretization != other.discretization or self.pessimistic != other.pessimistic:
            raise ValueError(
                f"`pld` must have the same grid and estimate type to compose: "
                f"({self.discretization}, {self.pessimistic}) != ({other.discretization}, {other.pessimistic})."
            )

    def compose(self, other: DensePmf, tail_mass_truncation: float = 0) -> DensePmf:
        self._check(other)
        from scipy import signal  # here, not at the top: see _LAZY_IMPORTS

        probs = signal.fftconvolve(self.probs, other.probs)
        infinity = self.infinity_mass + other.infinity_mass - self.infinity_mass * other.infinity_mass
        offset, probs, right_tail = _truncate_tails(probs, tail_mass_truncation, self.pessimistic)
        return DensePmf(
            self.discretization,
            self.lower_loss + other.lower_loss + offset,
            probs,
            infinity + right_tail,
            self.pessimistic,
        )

    def self_compose(self, times: int, tail_mass_truncation: float = 1e-15) -> DensePmf:
        if times <= 0:
            raise ValueError(f"`times` must be an integer >= 1; got {times!r}.")
        lower, probs = _self_convolve(self.probs, times, tail_mass_truncation)
        infinity = tail_mass_truncation - math.expm1(times * math.log1p(-self.infinity_mass))
        return DensePmf(
            self.discretization, self.lower_loss * times + lower, np.array(probs), infinity, self.pessimistic
        )

    def rounded_probabilities(self) -> dict[int, float]:
        """{loss index: mass} over the non-zero masses (dp_accounting's ``rounded_probability_mass_function``)."""
        nonzero = np.flatnonzero(self.probs)
        return {int(self.lower_loss + i): float(self.probs[i]) for i in nonzero}


@dataclass(frozen=True, eq=False)
class Pld:
    """A privacy loss distribution: the REMOVE direction's PMF and, unless symmetric, the ADD direction's."""

    remove: DensePmf
    add: DensePmf | None = None

    @property
    def symmetric(self) -> bool:
        return self.add is None

    def pmfs(self) -> list[DensePmf]:
        return [self.remove] if self.add is None else [self.remove, self.add]

    def compose(self, other: Pld, tail_mass_truncation: float = 1e-15) -> Pld:
        remove = self.remove.compose(other.remove, tail_mass_truncation)
        if self.symmetric and other.symmetric:
            return Pld(remove)
        add = (self.add or self.remove).compose(other.add or other.remove, tail_mass_truncation)
        return Pld(remove, add)

    def self_compose(self, times: int, tail_mass_truncation: float = 1e-15) -> Pld:
        remove = self.remove.self_compose(times, tail_mass_truncation)
        return Pld(remove, None if self.add is None else self.add.self_compose(times, tail_mass_truncation))

    def to_dp_accounting(self) -> PrivacyLossDistribution:
        """The same PLD as a dp_accounting ``PrivacyLossDistribution`` (public constructor)."""
        from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution  # see _LAZY_IMPORTS

        options = {}
        if self.add is not None:
            options = {
                "rounded_probability_mass_function_add": self.add.rounded_probabilities() or {0: 0.0},
                "infinity_mass_add": self.add.infinity_mass,
                "symmetric": False,
            }
        return PrivacyLossDistribution.create_from_rounded_probability(
            self.remove.rounded_probabilities() or {0: 0.0},
            self.remove.infinity_mass,
            self.remove.discretization,
            pessimistic_estimate=self.remove.pessimistic,
            **options,
        )
