"""Numerical Renyi divergence of a view's exact pmf pair: the clones pair of Feldman,
McMillan, Talwar (generic, or specialised to k-RR as ``clones-krr``), order by order.

For a pair (P, Q) on a finite set and an order lambda > 1,

    D_lambda(P || Q) = log M_lambda / (lambda - 1),   M_lambda = sum_x p(x)^lambda q(x)^(1 - lambda),

formed here in log space: log M_lambda = logsumexp(lambda log p - (lambda - 1) log q) over the atoms.
The clones pair is symmetric (Q is P with its two coordinates swapped), so D_lambda(P || Q) =
D_lambda(Q || P): one direction is both (the test evaluates both with mpmath).

Atoms. C ~ Bin(n - 1, r), A | C ~ Bin(C, 1/2), Delta ~ Bern(alpha), alpha = e^eps0 / (e^eps0 + 1);
with x = A + Delta the first coordinate, p(c, x) = Pr(C = c) (alpha B_c(x - 1) + (1 - alpha) B_c(x)),
q(c, x) = Pr(C = c) (alpha B_c(x) + (1 - alpha) B_c(x - 1)), B_c the Bin(c, 1/2) pmf, x = 0..c + 1. For
k-RR (``k`` given) r = 2q and, with probability 1 - w, w = (e^eps0 + 1) q, both views are the same
law (a third atom set shared by P and Q), which adds 1 - w to M_lambda; w = 1 at k = 2.

Which way it errs. Rows c = 0..c_hi are summed exactly; the rows c > c_hi (if any) contribute at most
Pr(C > c_hi) m_lambda(c_hi), and that bound is *added*: the returned divergence is an UPPER bound. Here
m_lambda(c) = sum_x P_c(x)^lambda Q_c(x)^(1 - lambda) is the moment of row c's own pair (P_c, Q_c), the laws of
x given C = c. Row c + 1's pair is row c's with an independent Bern(1/2) added to x under both (A' = A + B,
B ~ Bern(1/2)): one Markov kernel applied to both laws, so by data processing m_lambda(c + 1) <= m_lambda(c),
and every row above c_hi has a moment at most m_lambda(c_hi). (Each m_lambda(c) is also at most
e^((lambda - 1) eps0), since every likelihood ratio of the pair is at most e^eps0: the bound this module used
before, which keeps summing rows long after m_lambda has fallen close to 1.) c_hi is the first row at which
Pr(C > c) m_lambda(c) is below e^-50 at the largest order (found by bisection: the product falls with c), so
the returned divergence is above the exact one by less than e^-50 / (lambda - 1), because M_lambda >= 1
(c_hi = n - 1, exact, for small n). The remainder adds a factor of 2 to m_lambda(c_hi) for its rounding (the
row's log-moment is formed to a few ulp) and is never above the e^((lambda - 1) eps0) bound.
"""

from __future__ import annotations

import numpy as np

from shuffledp._numerics import log1mexp, logsumexp
from shuffledp.accounting.numerics.binomial import log_pmf, log_sf
from shuffledp.accounting.params import ShuffleSetting
from shuffledp.accounting.views.clones.pair import atoms, pair_parameters
from shuffledp.accounting.views.derived.rdp import log_moments

__all__ = ["log_moments", "clones_atoms", "clones_log_moments", "clones_rdp", "ORDERS", "REMAINDER_LOG_BOUND"]

#: integer orders 2..256 (Koskela et al.'s clones_comparison_fig1/delta_shuffler_renyi.py line 137,
#: alpha_max = 256; the same range as the Girgis accountants' conversion)
ORDERS = np.arange(2, 257, dtype=float)
#: log of the largest certified remainder left to the rows above c_hi (at the largest order)
REMAINDER_LOG_BOUND = -50.0
_ATOMS_PER_CHUNK = 400_000  # rows summed at once hold about this many atoms
_LOG_2 = float(np.log(2.0))


def _log_tails(parameters: dict) -> np.ndarray:
    """log Pr(C > c) at every row c = 0 .. n_trials (the last -inf): formed once per pair, for the crude row, the
    bisection and the remainder."""
    n_trials = float(parameters["n_trials"])
    rows = np.arange(0, n_trials + 1.0)
    return log_sf(rows + 1.0, n_trials, parameters["log_r"], parameters["log_1mr"])


def _crude_rows_upper(log_tails: np.ndarray, largest_order: float, epsilon_local: float) -> int:
    """The first c with log Pr(C > c) + (lambda_max - 1) eps0 <= REMAINDER_LOG_BOUND (n_trials if none): past
    it the rows' moments, each at most e^((lambda - 1) eps0), leave less than the bound."""
    ok = np.nonzero(log_tails + (largest_order - 1.0) * epsilon_local <= REMAINDER_LOG_BOUND)[0]
    return int(ok[0]) if ok.size else log_tails.size - 1


def _row_log_moments(c: int, parameters: dict, orders: np.ndarray) -> np.ndarray:
    """log m_lambda(c): the log-moments of row c's own pair (the row's atoms, without Pr(C = c))."""
    x = np.arange(0, c + 2, dtype=float)
    log_p, log_q = _split_atoms(np.full(x.size, float(c)), x, parameters)
    log_row = log_pmf(
        np.array([float(c)]), float(parameters["n_trials"]), parameters["log_r"], parameters["log_1mr"]
    )
    return log_moments(log_p, log_q, orders) - float(log_row[0])


def _rows_upper(parameters: dict, log_tails: np.ndarray, largest_order: float, epsilon_local: float) -> int:
    """Last row c_hi to sum: the first c with log Pr(C > c) + log m_lambda_max(c) <= REMAINDER_LOG_BOUND (module
    docstring), by bisection below the crude row (:func:`_crude_rows_upper`, where it holds since every m is at
    most e^((lambda - 1) eps0)). The product falls with c, so the first such row is found; the remainder's
    validity does not depend on it (only on data processing above the row chosen). ``log_tails``:
    :func:`_log_tails` of the pair."""
    n_trials = int(parameters["n_trials"])
    crude = _crude_rows_upper(log_tails, largest_order, epsilon_local)
    if crude >= n_trials:
        return n_trials
    order = np.array([largest_order])

    def small_enough(c: int) -> bool:
        return float(log_tails[c]) + float(_row_log_moments(c, parameters, order)[0]) <= REMAINDER_LOG_BOUND

    low, high = -1, crude  # small_enough(high); low: a row below the first such row (or -1)
    while high - low > 1:
        middle = (low + high) // 2
        if small_enough(middle):
            high = middle
        else:
            low = middle
    return high


def _split_atoms(cc: np.ndarray, x: np.ndarray, parameters: dict) -> tuple[np.ndarray, np.ndarray]:
    """(log p, log q) of the split pair at rows ``cc`` and first coordinates ``x`` (0 <= x <= c + 1): the
    pair's one formula (:func:`~shuffledp.accounting.views.clones.pair.atoms`), rows weighted by log_pmf."""
    log_c = log_pmf(cc, float(parameters["n_trials"]), parameters["log_r"], parameters["log_1mr"])
    return atoms(log_c, cc, x, parameters["log_alpha"], parameters["log_1malpha"])


def clones_atoms(c, x, setting: ShuffleSetting, generic: bool) -> tuple[np.ndarray, np.ndarray]:
    """(log p, log q) of the clones pair (without the k-RR weight) at the atoms (c, x): C = c and first
    coordinate x (0 <= x <= c + 1); for checks on subsets of atoms (tools/verify_koskela_fig1_rdp.py)."""
    parameters = pair_parameters(setting, generic)
    return _split_atoms(np.asarray(c, dtype=float), np.asarray(x, dtype=float), parameters)


def _split_pair_moments(parameters: dict, orders: np.ndarray, epsilon_local: float) -> np.ndarray:
    """log M_lambda of the split pair (without the k-RR weight), certified remainder added."""
    n_trials = parameters["n_trials"]
    log_tails = _log_tails(parameters)
    c_hi = _rows_upper(parameters, log_tails, float(orders.max()), epsilon_local)
    sums = np.full((0, orders.size), -np.inf)
    c = 0
    while c <= c_hi:
        stop = c
        atoms = 0
        while stop <= c_hi and atoms < _ATOMS_PER_CHUNK:
            atoms += stop + 2
            stop += 1
        rows = np.arange(c, stop, dtype=float)
        cc = np.repeat(rows, (rows + 2).astype(int))
        x = np.concatenate([np.arange(0, int(row) + 2, dtype=float) for row in rows])
        log_p, log_q = _split_atoms(cc, x, parameters)
        sums = np.vstack([sums, log_moments(log_p, log_q, orders)[None, :]])
        c = stop
    total = logsumexp(sums, axis=0)
    if c_hi < n_trials:
        # the rows above c_hi: Pr(C > c_hi) m_lambda(c_hi) (module docstring), twice for rounding
        row = np.minimum(_row_log_moments(c_hi, parameters, orders) + _LOG_2, (orders - 1.0) * epsilon_local)
        total = np.logaddexp(total, float(log_tails[c_hi]) + row)
    return total


def clones_log_moments(setting: ShuffleSetting, generic: bool, orders=ORDERS) -> np.ndarray:
    """log M_lambda of the clones pair (generic, or k-RR): an upper bound within e^-50 of the exact value
    (module docstring). An override of the view's derived moments
    (:meth:`~shuffledp.accounting.views.base.View.log_moments`), held to them by tests."""
    orders = np.asarray(orders, dtype=float)
    if np.any(orders <= 1.0):
        raise ValueError(f"`orders` must all be > 1; got min {float(orders.min())!r}.")
    parameters = pair_parameters(setting, generic)
    log_weight = parameters.pop("log_weight")
    split = _split_pair_moments(parameters, orders, setting.epsilon_local)
    if log_weight >= 0.0:
        return split
    return np.logaddexp(log_weight + split, float(log1mexp(log_weight)))


def clones_rdp(setting: ShuffleSetting, generic: bool, orders=ORDERS) -> tuple[np.ndarray, np.ndarray]:
    """(orders, D_lambda) of the clones pair, both directions (equal: symmetric pair); upper bound."""
    orders = np.asarray(orders, dtype=float)
    moments = clones_log_moments(setting, generic, orders)
    return orders, np.maximum(moments, 0.0) / (orders - 1.0)
