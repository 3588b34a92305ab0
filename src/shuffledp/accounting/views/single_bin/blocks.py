"""The cached blocks of counts of the single-bin view (:class:`CountBlocks`): the values (s, log P1(s), L_s, v_s)
of :class:`~shuffledp.accounting.views.single_bin.counts.CountLaw` in blocks of :data:`BLOCK` consecutive
counts, evaluated by window sums or, from n = :data:`RUN_USERS` on, by the recurrence runs of
:func:`~shuffledp.accounting.views.single_bin.runs.evaluate_run` where those are certified (their state is a
:class:`~shuffledp.accounting.views.single_bin.runs.RunState`); the bulk of S on either side, and every
cached block merged, for the tail sums (:mod:`~shuffledp.accounting.views.single_bin.tails`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import numpy as np

from shuffledp.accounting.views.single_bin.counts import CountLaw
from shuffledp.accounting.views.single_bin.runs import RUN_SPACINGS, RunState, evaluate_run

__all__ = ["CountBlocks", "FirstBulks", "MergedBlocks", "BLOCK", "RUN_USERS"]

BLOCK = 64  # s values per cached block
_BULK_SDS = 10.0  # the bulk of S evaluated in one go reaches this many standard deviations
#: from this n on, runs of consecutive s are evaluated by the pmf recurrence (O(1) per s after
#: anchors every _RUN_SPACING values) where it is certified; below it every s is a window sum (so every
#: recorded output up to n = 10^6 is unchanged to the bit)
RUN_USERS = 10**7
_RUN_SPACING = RUN_SPACINGS[-1]  # s values a walk evaluates ahead when it leaves the cached blocks

#: (s, log P1, L, v): four arrays over the same counts
Counts = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
#: sign -> (the blocks, the bulk) that a new instance's first call of ``bulk(sign)`` computes: below
#: :data:`RUN_USERS` they depend on the law and the sign only (one batch of window sums into an empty cache), so
#: new instances of one law given the same dict take them from the first one instead of computing them again
FirstBulks = dict[int, tuple[dict[int, Counts], Counts]]


@dataclass(frozen=True)
class MergedBlocks:
    """Every cached block merged in order of s (``counts``), valid while the cache holds ``blocks`` blocks."""

    blocks: int
    counts: Counts


class CountBlocks:
    """The cached blocks of one count law (module docstring)."""

    def __init__(self, law: CountLaw, first_bulks: FirstBulks | None = None):
        """No block is cached yet.

        Args:
            law: the count law whose values are cached.
            first_bulks: shared by instances of one law (see :data:`FirstBulks`), or None.
        """
        self.law = law
        self._first_bulks = first_bulks
        #: block index -> (s, log P1, L, v) of its counts
        self.cache: dict[int, Counts] = {}
        #: the recurrence runs' state (the anchor law with N - 2 users off x0, each run's last values)
        self.runs = RunState()
        self._bulk: dict[int, Counts] = {}
        self._merged: MergedBlocks | None = None

    @property
    def by_runs(self) -> bool:
        """Whether runs of counts are evaluated by the recurrence (n >= :data:`RUN_USERS`)."""
        return self.law.n_users >= RUN_USERS

    def ensure(self, indices) -> None:
        """Evaluate every missing block among ``indices`` in one call and cache it.

        From n = :data:`RUN_USERS` on, each run of consecutive missing blocks is first tried by the
        recurrence (:func:`~shuffledp.accounting.views.single_bin.runs.evaluate_run`); blocks it does not certify are summed by windows.
        """
        missing = sorted(
            {int(i) for i in indices if int(i) not in self.cache and 0 <= int(i) * BLOCK <= self.law.n_users}
        )
        if missing and self.by_runs:
            missing = self._ensure_runs(missing)
        if not missing:
            return
        ranges = [
            np.arange(i * BLOCK, min((i + 1) * BLOCK, self.law.n_users + 1), dtype=np.int64) for i in missing
        ]
        values = self.law.evaluate(np.concatenate(ranges))
        self._store(missing, ranges, values)

    def _ensure_runs(self, missing: list[int]) -> list[int]:
        """Cache the runs of consecutive blocks the recurrence certifies; return the other blocks."""
        left, start = [], 0
        for end in range(1, len(missing) + 1):
            if end < len(missing) and missing[end] == missing[end - 1] + 1:
                continue
            run = missing[start:end]
            first, last = run[0] * BLOCK, min((run[-1] + 1) * BLOCK, self.law.n_users + 1) - 1
            values = evaluate_run(self.law, self.runs, first, last)
            if values is None:
                left.extend(run)
            else:
                ranges = [
                    np.arange(i * BLOCK, min((i + 1) * BLOCK, self.law.n_users + 1), dtype=np.int64)
                    for i in run
                ]
                self._store(run, ranges, values)
            start = end
        return left

    def _store(self, indices, ranges, values) -> None:
        offset = 0
        for index, s in zip(indices, ranges):
            part = slice(offset, offset + s.size)
            self.cache[index] = (s, *(v[part] for v in values))
            offset += s.size

    def block(self, index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Cached (s, log P1, L, v) for s in [index * B, (index + 1) * B) intersected with [0, n]."""
        self.ensure([index])
        return self.cache[index]

    def bulk(self, sign: int) -> Counts:
        """(s, log P1, L, v) on the blocks covering the bulk of S on the side the tail sums need.

        Forward tails lie above the mean, reverse tails below: [mean - 3 sd, mean + _BULK_SDS sd] or
        its mirror image, evaluated in one call (it only narrows the threshold search and pre-fills
        the cache, so its extent does not affect the result).

        Args:
            sign: +1 (forward tails) or -1 (reverse tails).

        Returns:
            the four arrays, in order of s.
        """
        shared = self._first_bulks if not (self.cache or self.by_runs) else None
        if shared is not None and sign in shared:
            blocks, self._bulk[sign] = shared[sign]
            self.cache.update(blocks)
        if sign not in self._bulk:
            law = self.law
            p, q = math.exp(law.log_p), math.exp(law.log_q)
            mean = law.n_x0 * p + law.n_off * q
            sd = math.sqrt(law.n_x0 * p * (1 - p) + law.n_off * q * (1 - q))
            below, above = (3.0, _BULK_SDS) if sign > 0 else (_BULK_SDS, 3.0)
            first = max(0, int(mean - below * sd)) // BLOCK
            last = min(law.n_users, int(mean + above * sd) + 1) // BLOCK
            self.ensure(range(first, last + 1))
            parts = [self.cache[i] for i in range(first, last + 1)]
            self._bulk[sign] = cast(
                Counts, tuple(np.concatenate([part[j] for part in parts]) for j in range(4))
            )
            if shared is not None:
                shared[sign] = (dict(self.cache), self._bulk[sign])
        return self._bulk[sign]

    def merged(self) -> Counts:
        """(s, log P1, L, v) over every cached block in order of s (rebuilt when blocks were added).

        Returns:
            the four arrays, in order of s.
        """
        kept = self._merged
        if kept is None or kept.blocks != len(self.cache):
            keys = sorted(self.cache)
            counts = cast(Counts, tuple(np.concatenate([self.cache[i][j] for i in keys]) for j in range(4)))
            kept = self._merged = MergedBlocks(len(self.cache), counts)
        return kept.counts

    def ahead(self, first: bool) -> int:
        """Blocks fetched together when a walk reaches a missing block: 1 below :data:`RUN_USERS`; from it on
        1,024 counts at a walk's first block, 8,192 once it goes on.

        Args:
            first: whether the block is the walk's first.

        Returns:
            the number of blocks.
        """
        if not self.by_runs:
            return 1
        return (_RUN_SPACING if first else RUN_SPACINGS[0]) // BLOCK
