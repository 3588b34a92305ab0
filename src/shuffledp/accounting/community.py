"""The paper's community-level delta-hat, eq. (10): the worst single-value delta over a dataset.

Biswas et al. (arXiv 2022), eq. (10): delta_hat = max over x of the delta that makes the mechanism
tightly (eps, delta(x))-ADP when u's primary input is x. For a dataset with value counts c_x
(u included), user u holding x sees n_x0 = c_x - 1 others on x, so

    delta_hat(eps) = max_{x : c_x >= 1} delta(eps; n = sum_x c_x, n_x0 = c_x - 1).

**What the result is.** With the default accountant (``biswas-exact``, the exact delta of one bin's
count for one dataset and direction) each term is a lower bound on the histogram's delta for that
dataset, so delta_hat is a *lower bound* on the histogram's delta for this dataset -- not a DP
guarantee (which needs the worst case over all neighbouring datasets, e.g. ``strong-adversary``).
With ``biswas-printed`` it reproduces the paper's own calibration (which understates even that).
Accountants whose delta does not depend on n_x0 are evaluated once.

Counts are deduplicated (values with the same count give the same delta), and each distinct count
is evaluated for all epsilons at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from shuffledp._validation import check_real_array
from shuffledp.accounting import accountant_class, get_accountant
from shuffledp.accounting.params import Direction

__all__ = ["CommunityDelta", "community_delta"]


@dataclass(frozen=True)
class CommunityDelta:
    """delta_hat of eq. (10) at each epsilon, with the value (index into ``counts``) attaining it."""

    epsilons: np.ndarray
    log_delta: np.ndarray
    argmax_value: np.ndarray  # index x of the maximising value (first one in case of ties)
    argmax_count: np.ndarray  # its count c_x
    accountant: str
    n_users: int

    @property
    def delta(self) -> np.ndarray:
        return np.exp(self.log_delta)


def _checked_counts(counts) -> np.ndarray:
    array = np.asarray(counts)
    if array.ndim != 1 or array.size < 2:
        raise ValueError(
            f"`counts` must be a 1-d sequence of at least 2 value counts (k >= 2); got shape {array.shape}."
        )
    if not np.issubdtype(array.dtype, np.number) or np.any(np.isnan(array.astype(float))):
        raise TypeError(f"`counts` must be non-negative integers; got {counts!r}.")
    if np.any(array < 0) or np.any(array != np.round(array)):
        bad = array[(array < 0) | (array != np.round(array))][0]
        raise ValueError(f"`counts` must be non-negative integers; got {float(bad)!r}.")
    array = array.astype(np.int64)
    if array.sum() < 1:
        raise ValueError("`counts` must contain at least one user (sum >= 1); got sum 0.")
    return array


def community_delta(
    counts,
    *,
    epsilon_local: float,
    epsilons,
    accountant: str = "biswas-exact",
    direction: Direction | str | None = None,
    **options,
) -> CommunityDelta:
    """The paper's delta_hat(eps) of eq. (10) for the dataset with value counts ``counts``.

    Args:
        counts: the value counts c_x of the dataset (u included), one per value (k = len(counts) >= 2).
        epsilon_local: the local epsilon_0 of k-RR.
        epsilons: the epsilons at which delta_hat is evaluated (>= 0).
        accountant: the registry name of the accountant of each term.
        direction: the :class:`~shuffledp.accounting.params.Direction` read by an accountant that takes
            one (e.g. ``Direction.BOTH`` for ``biswas-exact``); None leaves the accountant's default.
        **options: further keyword options of the accountant.

    Returns:
        The :class:`CommunityDelta` at each epsilon.

    Raises:
        ValueError: on bad counts, epsilons, accountant name or direction.
    """
    if direction is not None:
        options["direction"] = Direction.parse(direction)
    counts = _checked_counts(counts)
    epsilons = check_real_array(epsilons, "epsilon", low=0.0)
    n_users, k = int(counts.sum()), counts.size
    cls = accountant_class(accountant)
    present = np.flatnonzero(counts >= 1)
    if not cls.needs_n_x0:
        log_delta = get_accountant(
            accountant, epsilon_local=epsilon_local, n_users=n_users, k=k, **options
        ).log_delta_for_epsilon(epsilons)
        first = int(present[0])
        return CommunityDelta(
            epsilons,
            log_delta,
            np.full(epsilons.shape, first),
            np.full(epsilons.shape, counts[first]),
            accountant,
            n_users,
        )
    unique = np.unique(counts[present])
    table = np.empty((unique.size, epsilons.size))
    for row, count in enumerate(unique):
        table[row] = get_accountant(
            accountant, epsilon_local=epsilon_local, n_users=n_users, k=k, n_x0=int(count) - 1, **options
        ).log_delta_for_epsilon(epsilons)
    best_row = np.argmax(table, axis=0)
    log_delta = table[best_row, np.arange(epsilons.size)]
    best_count = unique[best_row]
    # first value index carrying that count
    first_index = {int(c): int(present[np.argmax(counts[present] == c)]) for c in np.unique(best_count)}
    argmax_value = np.array([first_index[int(c)] for c in best_count])
    return CommunityDelta(epsilons, log_delta, argmax_value, best_count, accountant, n_users)
