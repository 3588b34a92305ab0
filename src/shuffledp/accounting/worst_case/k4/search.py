"""The k >= 4 search behind the search interface: the smaller of the block search
(:mod:`~shuffledp.accounting.worst_case.k4.blocks`) and the own-value-hit views
(:mod:`~shuffledp.accounting.worst_case.k4.own_hits`), each where the table of regimes runs it."""

from __future__ import annotations

import math

from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.worst_case.k4.blocks import K4BlockSearch
from shuffledp.accounting.worst_case.k4.own_hits import OwnHitsSearch
from shuffledp.accounting.worst_case.search import Search, SearchResult, Status, log_or_minus_inf

__all__ = ["K4Search", "K4BlocksAndOwnHits", "K4BlocksOnly", "OwnHitsOnly"]


class K4Search(Search):
    """Both k >= 4 searches or one of them (the subclasses below name which): every value each returns is
    a certified upper bound on the worst case over every dataset, so their minimum is one. The own-value
    hits are built first and handed to the block search, which bounds the nodes too large to expand by them.
    Its lower value is -inf: neither search certifies the delta of the dataset it names."""

    name = "k4"
    blocks: bool = True
    own_hits: bool = True

    def __init__(self, setting: ShuffleSetting):
        super().__init__(setting)
        self.own = (
            OwnHitsSearch(n_users=self.n_users, k=self.k, epsilon_local=self.epsilon_local)
            if self.own_hits
            else None
        )
        self.block_search = (
            K4BlockSearch(n_users=self.n_users, k=self.k, epsilon_local=self.epsilon_local, own_hits=self.own)
            if self.blocks
            else None
        )

    def result(self, eps: float) -> SearchResult:
        """The smaller of the two searches' certified values at ``eps``.

        Args:
            eps: the central epsilon.

        Returns:
            upper: the minimum; dataset: the block search's argmax leaf (else the own-value-hit (a, b));
            closed when the block search closed.
        """
        logs, dataset, closed = [], None, self.block_search is None  # the own-value hits always close
        if self.block_search is not None:
            worst = self.block_search.worst(float(eps))
            logs.append(log_or_minus_inf(worst.upper))
            dataset, closed = (tuple(worst.argmax) if worst.argmax is not None else None), worst.exact
        if self.own is not None:
            own = self.own.worst(float(eps))
            logs.append(log_or_minus_inf(own.upper))
            dataset = dataset if dataset is not None else tuple(own.argmax)
        return SearchResult(min(logs), -math.inf, dataset, Status.CLOSED if closed else Status.OPEN)


class K4BlocksAndOwnHits(K4Search):
    """Both searches (k = 4 to n = 32, k >= 5 to n = 24)."""

    name = "k4-blocks+own-hits"


class K4BlocksOnly(K4Search):
    """The block search alone (k = 4, 32 < n <= 50)."""

    name = "k4-blocks"
    own_hits = False


class OwnHitsOnly(K4Search):
    """The own-value-hit views alone (k >= 5, 24 < n <= 32)."""

    name = "own-hits"
    blocks = False
