"""The k-RR "stronger clones" pair of Feldman, McMillan, Talwar (SODA 2023, arXiv:2208.04591) as a view
(:class:`Clones2023View`: its outcomes, from which its PLD is derived) and its exact delta
(:meth:`Clones2023View.log_delta`), for ``clones-krr-2023``.

The 2023 reduction decomposes each local randomizer as R(x) = p Q0 + p Q1 + (1 - 2p) LO(x) and u's as
R(x0) = e^eps0 p Q0 + p Q1 + (1 - (e^eps0 + 1) p) LO(x0) (and the swap for x1); it counts how many
reports are samples of Q0 and of Q1. For k-RR with Q0, Q1 the point masses on x0, x1 the decomposition
holds with p = q_k = 1 / (e^eps0 + k - 1). The pair on (x, y) = (count of Q0, count of Q1):

    (A, B, n - 1 - A - B) ~ Mult(n - 1; p, p, 1 - 2p)            (the other n - 1 users),
    u adds (1, 0) w.p. e^eps0 p, (0, 1) w.p. p, (0, 0) w.p. 1 - (e^eps0 + 1) p   under P,
    and (0, 1) w.p. e^eps0 p, (1, 0) w.p. p, (0, 0) w.p. 1 - (e^eps0 + 1) p     under Q.

So P(x, y) = M(x - 1, y) [e^eps0 p + p y / x + (1 - (e^eps0 + 1) p) p (n - x - y) / ((1 - 2p) x)], with
M the trinomial pmf, and Q the swap of x and y; the pair is symmetric, one direction suffices. At k = 2
the third branch is empty and the pair is our ``clones-krr`` pair at k = 2. Unlike ``clones-krr``
(joint convexity: the (0, 0) branch is factored out), the branches share outcomes here, so the exact
divergence is smaller for k >= 3.

**Validity.** The paper's erratum states that the proof of its Lemma 3.5 fails for p < 1 / (e^eps0 + 1);
k-RR's p = q_k is below that for every k >= 3. Brute force over every dataset (tests) finds datasets
whose true delta exceeds this pair's at k >= 3 (docs/decisions/generic-bounds.md): it is the bound
*as printed*, a guarantee only at k = 2.

Evaluation: the outcomes reachable from the (C, A) windows of :func:`~shuffledp.accounting.views.binned.
split_pair_rows` (C = A + B ~ Bin(n - 1, 2p), A | C ~ Bin(C, 1/2)) are enumerated in log space; every
branch maps an in-window (c, a) to an enumerated outcome, so the P-mass (and the Q-mass) outside is at
most Pr((C, A) outside the windows), computed exactly and *added* to delta (the value errs high).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.binomial import log_binom_pmf_loader
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.base import DEFAULT_K, LeftOut, OutcomeChunk, View
from shuffledp.accounting.views.binned import LOG_HALF, flat_rows, log_a_outside, split_pair_rows

__all__ = ["MAX_OUTCOMES", "Clones2023View", "check_size", "outcome_logs"]

#: refuse pairs whose windows hold more outcomes than this (memory; about n q_k K^2 outcomes)
MAX_OUTCOMES = 20_000_000
_K_WINDOW = (
    10.0  # window half-width in standard deviations (left-out mass is certified and added, see module)
)


def _windows(setting: ShuffleSetting):
    krr = setting.krr
    s, log_w, a_lo, a_hi, log_s_out = split_pair_rows(
        setting.n_users - 1, krr.log_2q, krr.log_1m2q, _K_WINDOW
    )
    return krr, s, log_w, a_lo, a_hi, log_s_out


def check_size(setting: ShuffleSetting) -> None:
    """Refuse (one line) a pair whose windows would hold more than :data:`MAX_OUTCOMES` outcomes; the
    window sizes are computed in O(sqrt(n)) before anything of the size of the outcomes is allocated."""
    epsilon_local, n_users, k = setting.epsilon_local, setting.n_users, setting.k
    _, s, _, a_lo, a_hi, _ = _windows(setting)
    count = float(np.sum(a_hi - a_lo + 3.0)) + 2.0 * s.size
    if count > MAX_OUTCOMES:
        limit = max(1, int(n_users * MAX_OUTCOMES / count))
        raise ValueError(
            f"`n_users` must be an integer in [1, about {limit}] for accountant 'clones-krr-2023' at "
            f"eps0 = {epsilon_local}, k = {k} (its windows would hold {count:.3g} outcomes, more than "
            f"{MAX_OUTCOMES}); got {n_users}."
        )


@functools.lru_cache(maxsize=8)
def outcome_logs(setting: ShuffleSetting):
    """(log P, log Q, log of the certified left-out mass) over every enumerated outcome (x, y).

    Outcomes: x + y = t for t in the C window and t = c + 1; x from the A window of c = t or t - 1,
    widened by one. log P uses the trinomial of the others and u's three branches (module docstring).
    """
    check_size(setting)
    epsilon_local, n_users = setting.epsilon_local, setting.n_users
    krr, s, log_w, a_lo, a_hi, log_s_out = _windows(setting)
    log_out = log_a_outside(s, log_w, a_lo, a_hi, log_s_out)
    t = np.arange(s[0], s[-1] + 2.0)
    lo = np.empty_like(t)
    hi = np.empty_like(t)
    lo[:-1], hi[:-1] = a_lo, a_hi + 1.0
    lo[-1], hi[-1] = a_lo[-1], a_hi[-1] + 1.0
    lo[1:] = np.minimum(lo[1:], a_lo)
    hi[1:] = np.maximum(hi[1:], a_hi + 1.0)
    lo, hi = np.clip(lo, 0.0, t), np.clip(hi, 0.0, t)
    tt, x, _ = flat_rows(t, lo, hi)
    y = tt - x
    log_p_u, log_q_u = krr.log_q + epsilon_local, krr.log_q  # u's two informative branches
    log_rest = float(log1mexp(min(0.0, float(np.logaddexp(log_p_u, log_q_u)))))  # 1 - (e^eps0 + 1) q
    log_p = _mix(x, y, n_users - 1, krr, log_p_u, log_q_u, log_rest)
    log_q = _mix(y, x, n_users - 1, krr, log_p_u, log_q_u, log_rest)
    keep = np.isfinite(log_p) | np.isfinite(log_q)  # both sides -inf: not an outcome
    log_p, log_q = log_p[keep], log_q[keep]
    log_p.flags.writeable = False  # cached: shared by every caller
    log_q.flags.writeable = False
    return log_p, log_q, log_out


def _log_trinomial(a, b, m, krr):
    """log Mult(m; q, q, 1 - 2q) at (a, b, m - a - b); -inf outside the simplex."""
    ok = (a >= 0) & (b >= 0) & (a + b <= m)
    a_, b_ = np.where(ok, a, 0.0), np.where(ok, b, 0.0)
    c = a_ + b_
    out = log_binom_pmf_loader(c, float(m), krr.log_2q, krr.log_1m2q) + log_binom_pmf_loader(
        a_, c, LOG_HALF, LOG_HALF
    )
    return np.where(ok, out, -np.inf)


def _mix(x, y, m, krr, log_first, log_second, log_rest):
    """log of first * M(x - 1, y) + second * M(x, y - 1) + rest * M(x, y)."""
    with np.errstate(invalid="ignore", over="ignore"):  # -inf sums at extreme eps0 are the intended zeros
        parts = np.stack(
            [
                log_first + _log_trinomial(x - 1.0, y, m, krr),
                log_second + _log_trinomial(x, y - 1.0, m, krr),
                log_rest + _log_trinomial(x, y, m, krr),
            ]
        )
    return logsumexp(parts, axis=0)


def _key(setting: ShuffleSetting) -> ShuffleSetting:
    """The setting without n_x0 (the pair does not depend on it): one cache entry per pair."""
    return ShuffleSetting(epsilon_local=setting.epsilon_local, n_users=setting.n_users, k=setting.k)


class Clones2023View(View):
    """The 2023 pair as a view: one chunk of every enumerated outcome (x, y), the certified window remainder
    left out (``K`` is unused: the windows are fixed). Symmetric. Every likelihood ratio is at most e^eps0
    (P and Q mix the same three laws with weights whose ratios are e^eps0, e^-eps0 and 1). NOT a dominating
    pair for k >= 3 (:meth:`refusal`). :meth:`log_delta` is the sum over those outcomes (held to the stream by tests)."""

    name = "clones-krr-2023"
    symmetric = True

    def outcomes(self, K: float = DEFAULT_K) -> Iterator[OutcomeChunk]:
        log_p, log_q, _ = outcome_logs(_key(self.setting))
        yield OutcomeChunk(log_p, log_q)

    def left_out(self, K: float = DEFAULT_K) -> LeftOut:
        log_out = outcome_logs(_key(self.setting))[2]
        return LeftOut(log_out, log_out)

    def loss_bounds(self) -> tuple[float, float]:
        return (self.setting.epsilon_local, self.setting.epsilon_local)

    def refusal(self) -> str | None:
        if self.setting.k == 2:
            return None
        return (
            f"clones-krr-2023 at k = {self.setting.k} >= 3 is not a guarantee: Feldman-McMillan-Talwar's Lemma 3.5 "
            f"fails when p < 1/(e^eps0 + 1), and k-RR's p = 1/(e^eps0 + k - 1) is below it"
        )

    def log_delta(self, epsilons, *, K: float = DEFAULT_K, upper: bool = True) -> np.ndarray:
        """Override: with ``upper`` log H_{e^eps}(P || Q) of the pair plus the certified left-out mass (-inf from
        eps0 on; the windows are fixed, ``K`` is not used); without it the stream's lower value.

        Args:
            epsilons: epsilon values in [0, inf] (scalar or array).
            K: unused by the sum (the stream's windows are fixed).
            upper: the sum plus the left-out mass (True) or the stream's lower value (False).

        Returns:
            log delta at each epsilon (1-D).
        """
        if not upper:
            return super().log_delta(epsilons, K=K, upper=False)
        epsilons = np.atleast_1d(np.asarray(epsilons, dtype=float))
        epsilon_local = self.setting.epsilon_local
        log_p, log_q, log_out = outcome_logs(_key(self.setting))
        out = np.full(epsilons.shape, -np.inf)
        loss = log_p - log_q
        for i, eps in np.ndenumerate(epsilons):
            if eps >= epsilon_local:
                continue
            above = loss > eps
            terms = log_p[above] + log1mexp(eps - loss[above]) if np.isfinite(eps) else np.zeros(0)
            value = float(logsumexp(terms)) if terms.size else -np.inf
            out[i] = min(0.0, float(np.logaddexp(value, log_out)))
        return out
