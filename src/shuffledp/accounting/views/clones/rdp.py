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
Pr(C > c_hi) e^((lambda - 1) eps0) (every likelihood ratio of the pair is at most e^eps0), and that
bound is *added*: the returned divergence is an UPPER bound, and above the exact one by less than
e^-50 / (lambda - 1) because M_lambda >= 1 and c_hi is the first row at which the bound is below e^-50
at the largest order (c_hi = n - 1, exact, for small n).
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


def _rows_upper(
    n_trials: int, log_r: float, log_1mr: float, largest_order: float, epsilon_local: float
) -> int:
    """Last row c_hi to sum: the first c with log Pr(C > c) + (lambda_max - 1) eps0 <= REMAINDER_LOG_BOUND."""
    rows = np.arange(0, n_trials + 1, dtype=float)
    tail = log_sf(rows + 1.0, float(n_trials), log_r, log_1mr)  # log Pr(C > c)
    ok = np.nonzero(tail + (largest_order - 1.0) * epsilon_local <= REMAINDER_LOG_BOUND)[0]
    return int(rows[ok[0]]) if ok.size else n_trials


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
    n_trials, log_r, log_1mr = parameters["n_trials"], parameters["log_r"], parameters["log_1mr"]
    c_hi = _rows_upper(n_trials, log_r, log_1mr, float(orders.max()), epsilon_local)
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
        log_tail = float(log_sf(np.array([c_hi + 1.0]), float(n_trials), log_r, log_1mr)[0])
        total = np.logaddexp(total, log_tail + (orders - 1.0) * epsilon_local)
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
