"""Randomizers estimated from *support counts*: what unary encoding, local hashing, Hadamard response and subset
selection share.

Each of these randomizers' reports *supports* a set of values (unary encoding: the bits set to 1; local
hashing: the values hashing to the reported bucket; Hadamard response: the values whose code set holds the
reported index; subset selection: the reported subset). A user holding x supports x with probability
``p_support`` and each other value with probability ``q_support``, so the support count of value j over the n
users is S_j = A + B, A ~ Bin(c_j, p), B ~ Bin(n - c_j, q) independent (users are independent). The unbiased
estimate is pi_hat_j = (S_j / n - q) / (p - q), and its exact expected errors follow from that marginal law
alone (the S_j may be dependent across j; neither the expected squared error nor the expected L1 error sees
it):

* E ||pi_hat - pi||^2 = sum_j (c_j p (1 - p) + (n - c_j) q (1 - q)) / (n (p - q))^2;
* E ||pi_hat - pi||_1 / 2 = sum_j E|A + B - E(A + B)| / (2 n (p - q)), summed exactly on windows
  (:func:`~shuffledp.accounting.randomizers.counts.binomial_sum_mean_absolute_deviation`, as k-RR's).

The report counts (:meth:`SupportRandomizer.sample_counts`) are the k support counts followed by the number
of reports n (the shuffler publishes it; it is not a function of the support counts for every randomizer).
:func:`binomial_support_counts` draws them when the S_j are independent binomial sums (unary encoding; local
hashing under a fully random hash), with no per-user work.
"""

from __future__ import annotations

import abc

import numpy as np

from shuffledp._validation import check_integer
from shuffledp.accounting.randomizers.base import Randomizer
from shuffledp.accounting.randomizers.counts import (
    ExpectedError,
    as_rows,
    binomial_sum_mean_absolute_deviation,
    check_counts,
    check_rng,
)
from shuffledp.accounting.randomizers.type_blanket import TypeBlanket
from shuffledp.accounting.randomizers.types import OutputTypes

__all__ = ["SupportRandomizer", "binomial_support_counts", "support_expected_error"]


def support_expected_error(counts, p_support: float, q_support: float) -> ExpectedError:
    """Exact expected (half L1, squared L2) error of the support-count estimate (module docstring).

    Args:
        counts: the true histogram (k non-negative integers, a positive total).
        p_support: P(a report supports its own value).
        q_support: P(a report supports a given other value), < ``p_support``.

    Returns:
        ``ExpectedError(half L1, squared L2)``, both exact (the binomial windows leave out at most 1e-30 of
        mass each).
    """
    counts = np.asarray(counts, dtype=np.int64)
    n_users = int(counts.sum())
    p, q = float(p_support), float(q_support)
    distinct, multiplicity = np.unique(counts, return_counts=True)
    others = n_users - distinct
    own_variance = distinct * p * (1 - p)
    other_variance = others * q * (1 - q)
    swap = own_variance > other_variance  # sum over the narrower law
    deviation = binomial_sum_mean_absolute_deviation(
        np.where(swap, others, distinct),
        np.where(swap, q, p),
        np.where(swap, distinct, others),
        np.where(swap, p, q),
    )
    scale = n_users * (p - q)
    l1_half = 0.5 * float(np.sum(multiplicity * deviation)) / scale
    squared_l2 = float(np.sum(multiplicity * (own_variance + other_variance))) / scale**2
    return ExpectedError(l1_half, squared_l2)


def binomial_support_counts(counts, p_support: float, q_support: float, *, rng, size: int | None = None):
    """Independent support counts S_j = Bin(c_j, p) + Bin(n - c_j, q), with n appended (the report counts of
    :class:`SupportRandomizer`); O(size k) whatever n.

    Args:
        counts: the true histogram (int64, k entries).
        p_support, q_support: as :func:`support_expected_error`.
        rng: the numpy Generator drawn from (two ``binomial`` calls).
        size: None for one draw, shape (k + 1,); else ``size`` draws, shape (size, k + 1).

    Returns:
        The report counts.
    """
    replicates = 1 if size is None else check_integer(size, "size", low=1)
    n_users = int(counts.sum())
    shape = (replicates, counts.size)
    support = rng.binomial(np.broadcast_to(counts, shape), p_support) + rng.binomial(
        np.broadcast_to(n_users - counts, shape), q_support
    )
    reports = np.hstack([support, np.full((replicates, 1), n_users, dtype=support.dtype)])
    return reports[0] if size is None else reports


class SupportRandomizer(Randomizer):
    """A randomizer over k values estimated from its support counts (module docstring). Subclasses give
    :attr:`support_probabilities` and :meth:`_sample_support`; the estimate and its exact errors are here."""

    k: int

    @property
    @abc.abstractmethod
    def support_probabilities(self) -> tuple[float, float]:
        """(p, q): P(a report supports its own value), P(it supports a given other value)."""

    def _sample_support(self, counts: np.ndarray, rng: np.random.Generator, replicates: int) -> np.ndarray:
        """``replicates`` draws of the k support counts of ``counts`` (validated), shape (replicates, k). Here:
        independent binomial counts from :attr:`support_probabilities` (each value's support count is a sum of
        two binomials); a randomizer whose reports are not independent across values overrides it."""
        p, q = self.support_probabilities
        return binomial_support_counts(counts, p, q, rng=rng, size=replicates)[:, :-1]

    @abc.abstractmethod
    def output_types(self, inputs: int = 2) -> OutputTypes:
        """Its output types (every support randomizer has finitely many outputs; :mod:`.types`)."""

    @property
    def blanket(self) -> TypeBlanket:
        """The blanket from its pair types (:class:`~shuffledp.accounting.randomizers.type_blanket.TypeBlanket`)."""
        return TypeBlanket(self.output_types(2))

    def sample_counts(self, counts, *, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        """The shuffled reports as counts: the k support counts, then the number of reports n.

        Args:
            counts: the true histogram (k non-negative integers).
            rng: the numpy Generator every draw comes from.
            size: None for one draw, shape (k + 1,); else ``size`` draws, shape (size, k + 1).

        Returns:
            The report counts.

        Raises:
            ValueError, TypeError: bad ``counts``, ``rng`` or ``size`` (one line naming it).
        """
        counts = check_counts(counts, k=self.k)
        check_rng(rng)
        replicates = 1 if size is None else check_integer(size, "size", low=1)
        support = self._sample_support(counts, rng, replicates)
        total = np.full((replicates, 1), int(counts.sum()), dtype=support.dtype)
        reports = np.hstack([support, total])
        return reports[0] if size is None else reports

    def estimate(self, reported_counts) -> np.ndarray:
        """pi_hat_j = (S_j / n - q) / (p - q) from the report counts (S_0, ..., S_{k-1}, n); unbiased, may have
        negative entries and need not sum to 1.

        Args:
            reported_counts: (..., k + 1), as :meth:`sample_counts` draws them.

        Returns:
            (..., k).

        Raises:
            ValueError: not k + 1 entries on the last axis, a negative or non-finite entry, a support count
                above n, or n = 0.
        """
        reports = as_rows(reported_counts, "reported_counts")
        if reports.shape[-1] != self.k + 1:
            raise ValueError(
                f"`reported_counts` must have k + 1 = {self.k + 1} entries on its last axis (k support counts, "
                f"then n); got shape {reports.shape}."
            )
        support, total = reports[..., :-1], reports[..., -1:]
        if np.any(total <= 0) or np.any(support < 0):
            raise ValueError("`reported_counts` must be non-negative with a positive n (last entry).")
        if np.any(support > total):
            raise ValueError("`reported_counts` support counts must be at most n (the last entry).")
        p, q = self.support_probabilities
        return (support / total - q) / (p - q)

    @classmethod
    def from_parameters(cls, *, epsilon_local: float, k: int | None = None) -> Randomizer:
        """The randomizer at (eps0, k) with its default parameters (``k`` None is refused in one line)."""
        return cls(epsilon_local=epsilon_local, k=k)  # type: ignore[call-arg]  # subclasses are dataclasses

    def expected_error(self, counts) -> ExpectedError:
        """Exact expected half-L1 and squared L2 error of :meth:`estimate` (:func:`support_expected_error`).

        Args:
            counts: the true histogram (k non-negative integers).

        Returns:
            ``ExpectedError(half L1, squared L2)``, both exact.

        Raises:
            ValueError, TypeError: bad ``counts``.
        """
        counts = check_counts(counts, k=self.k)
        if counts.sum() <= 0:
            raise ValueError("`counts` must have a positive total; got 0.")
        return support_expected_error(counts, *self.support_probabilities)
