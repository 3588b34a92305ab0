"""The weak adversary over output types, for every randomizer with finitely many outputs.

Write each report as the blanket mixture R(o | x) = gamma omega(o) + (1 - gamma) rho_x(o)
(:mod:`shuffledp.accounting.randomizers.types`). The adversary knows the other users' data and which of them
drew from the blanket, and is *given* the reports of those who did not (they do not depend on the differing
user's value, so it could simulate them; revealing them is post-processing in the adversary's favour). What
is left is the differing user's report hidden among the b ~ Bin(n - 1, gamma) blanket reports. Its law over
the type counts N (with the differing user's report counted) is the pair of
:mod:`shuffledp.accounting.views.types.counts` with cells p_t = gamma omega(t), the uncounted cell 1 - gamma
and weights u_t = r_0(t) / gamma, v_t = r_1(t) / gamma:

    P(N) = Mult_n(N; gamma omega, 1 - gamma) sum_t N_t r_0(t) / (n gamma),

so the likelihood ratio is sum_t N_t r_0(t) / sum_t N_t r_1(t) (docs/weak-adversary-types.md proves it, both
directions, and the left-out mass). Types with equal (r_0, r_1) are merged first
(:meth:`~shuffledp.accounting.randomizers.types.OutputTypes.merged`); for k-RR the view is Koskela et al.'s
weak view (a, c, m) exactly. The value is the smaller of the view's delta and the differing user's own
report's delta (both upper bounds for every dataset).

:class:`TypesView` is a :class:`~shuffledp.accounting.views.base.View`: its stream enumerates the count
vectors (small n; the generic derivations read it), and :meth:`TypesView.log_delta` is the exact sum with the
certified remainder of :meth:`CountPair.log_delta_parts`, one epsilon at a time, vectorised over the count
vectors (held to the stream by tests).
"""

from __future__ import annotations

import numpy as np

from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.randomizers import Randomizer
from shuffledp.accounting.randomizers.types import OutputTypes
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View
from shuffledp.accounting.views.types.counts import CountPair, dominated, log1m_of, stream, stream_left_out

__all__ = ["TypesView", "required_types", "weak_pair", "LOG_BEYOND_PROMISE", "EXACT_CELLS"]

#: the most count vectors an upper bound sums with every merged type kept; beyond, the types are grouped
#: into three per epsilon, each group taking its largest coefficient
#: (:func:`~shuffledp.accounting.views.types.counts.dominated`: larger, still an upper bound)
EXACT_CELLS = 5 * 10**6
#: below e^-700 (~1e-304) the certified Chernoff bound is returned as the upper bound (as the k-RR weak view)
LOG_BEYOND_PROMISE = -700.0


def required_types(owner: str, randomizer, inputs: int = 2) -> OutputTypes:
    """The randomizer's output types, or a one-line refusal naming ``owner``.

    Args:
        owner: what asks (named in the refusal).
        randomizer: the randomizer.
        inputs: how many inputs of interest.

    Returns:
        ``randomizer.output_types(inputs)``.

    Raises:
        ValueError: the randomizer has no output types (no finitely many outputs).
    """
    types = randomizer.output_types(inputs) if isinstance(randomizer, Randomizer) else None
    if types is None:
        raise ValueError(
            f"`randomizer` must have finitely many outputs (output types) for {owner}; got {randomizer!r}."
        )
    return types


def weak_pair(types: OutputTypes, n_users: int) -> CountPair:
    """The weak adversary's pair (module docstring) of the types, merged on the pair (x_0, x_1).

    Args:
        types: the randomizer's output types (rows 0 and 1 are read).
        n_users: n.

    Returns:
        The :class:`CountPair`: cells gamma omega(t), uncounted cell 1 - gamma, weights r_j(t) / gamma.
    """
    pair = types.merged((0, 1))
    g = pair.log_gamma
    return CountPair(
        int(n_users), pair.log_blanket_mass + g, log1m_of(g), pair.log_ratios[0] - g, pair.log_ratios[1] - g
    )


class TypesView(View):
    """The weak adversary's view over the output types of any randomizer with finitely many outputs (module
    docstring). Nothing k-RR specific: ``weak-adversary`` asks it for every randomizer but k-RR."""

    name = "weak-types"
    randomizers = (Randomizer,)

    def __init__(self, setting: ShuffleSetting):
        super().__init__(setting)
        self.types = required_types(f"view {self.name!r}", setting.randomizer)
        self.pair = weak_pair(self.types, setting.n_users)
        self._pairs = [self.pair] if self.pair.is_symmetric() else [self.pair, self.pair.exchanged()]

    def outcomes(self, K: float = DEFAULT_K):
        """The REMOVE direction's count vectors in the windows (:func:`~shuffledp.accounting.views.types.counts.stream`)."""
        for log_p, log_q in stream(self.pair, K):
            yield OutcomeChunk(log_p, log_q)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        """Certified bounds on the P- and Q-mass outside the windows (:func:`~shuffledp.accounting.views.types.counts.stream_left_out`)."""
        return LeftOut(*stream_left_out(self.pair, K))

    def loss_bounds(self) -> tuple[float, float]:
        """The largest losses: max_t log(u_t / v_t) and max_t log(v_t / u_t) (the loss is a weighted mean)."""
        d = self.pair.log_u - self.pair.log_v
        return float(d.max()), float(-d.min())

    def log_chernoff(self, eps: float) -> float:
        """The Chernoff bound on the view's sum at ``eps``, the larger direction (no sum: a scalar minimisation
        per direction), -inf where delta = 0. At least :meth:`log_delta` up to its certified remainder: a cheap
        upper end for a search.

        Args:
            eps: epsilon >= 0.

        Returns:
            log of the bound, at most 0.
        """
        if eps >= self.setting.epsilon_local:
            return -np.inf
        bounds = [pair.chernoff(eps)[0] for pair in self._pairs if pair.has_positive(eps)]
        return min(max(bounds, default=-np.inf), 0.0)

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: the exact sum over the count vectors with its certified remainder added (``upper``) or
        dropped, the larger direction, capped (``upper``) by the differing user's own delta; the windows are
        chosen per epsilon (``K`` is not used).

        Args:
            epsilons: epsilon values in [0, inf].
            K: unused (the sum certifies its own windows).
            upper: an upper bound (remainder added) or a lower bound (dropped).

        Returns:
            1-D log delta, one per epsilon.
        """
        eps = np.atleast_1d(np.asarray(epsilons, dtype=float)).ravel()
        out = np.full(eps.shape, -np.inf)
        for i, e in enumerate(eps):
            if e >= self.setting.epsilon_local:  # eps0-LDP reports: their shuffle is eps0-DP, delta = 0
                continue
            for pair in self._pairs:
                out[i] = max(out[i], _log_delta_at(pair, float(e), upper))
        return out


def _log_delta_at(pair: CountPair, eps: float, upper: bool) -> float:
    """One direction's log delta at ``eps``: the lower bound is the exact sum without its remainder; the upper
    bound is the Chernoff bound below e^-700, else the sum plus its remainder (of the grouped pair beyond
    :data:`EXACT_CELLS` count vectors), capped by the differing user's own delta. At most 0."""
    if not upper:
        return min(pair.log_delta_parts(eps, upper=False)[0], 0.0)
    if not pair.has_positive(eps):
        return -np.inf
    log_bound = pair.chernoff(eps)[0]
    if log_bound < LOG_BEYOND_PROMISE:  # certified, and below the accuracy promise
        return min(log_bound, 0.0)
    summed = pair
    if pair.n_cells > 3 and pair.cells(pair.plan_windows(eps)) > EXACT_CELLS:
        summed = dominated(pair, eps)  # larger: still an upper bound
    value = float(np.logaddexp(*summed.log_delta_parts(eps, upper=True)))
    return min(value, pair.log_local_delta(eps), 0.0)
