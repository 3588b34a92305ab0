"""Numerical Renyi divergence of a view's exact pmf pair (issue 21): the clones pair of Feldman,
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

import math

import numpy as np

from shuffledp._numerics import log1mexp, log_binom_pmf_loader, logsumexp
from shuffledp.accounting.numerics.binomial import log_pmf, log_sf
from shuffledp.accounting.views.clones.pair import pair_parameters

__all__ = ["log_moments", "clones_atoms", "clones_log_moments", "clones_rdp", "ORDERS", "REMAINDER_LOG_BOUND"]

#: integer orders 2..256 (Koskela et al.'s clones_comparison_fig1/delta_shuffler_renyi.py line 137,
#: alpha_max = 256; the same range as the Girgis accountants' conversion)
ORDERS = np.arange(2, 257, dtype=float)
#: log of the largest certified remainder left to the rows above c_hi (at the largest order)
REMAINDER_LOG_BOUND = -50.0
_ATOMS_PER_CHUNK = 400_000


def log_moments(log_p: np.ndarray, log_q: np.ndarray, orders) -> np.ndarray:
    """log M_lambda = log sum_x p^lambda q^(1 - lambda) for each order (atoms with p = 0 add nothing;
    an atom with q = 0 < p gives +inf). Formed as logsumexp over x of log p + (lambda - 1) log(p / q)."""
    log_p, log_q = np.asarray(log_p, dtype=float), np.asarray(log_q, dtype=float)
    keep = log_p > -np.inf
    log_p, log_q = log_p[keep], log_q[keep]
    orders = np.atleast_1d(np.asarray(orders, dtype=float))
    if not log_p.size:
        return np.full(orders.size, -np.inf)
    with np.errstate(invalid="ignore"):
        loss = log_p - log_q  # +inf where q = 0
    out = np.empty(orders.size)
    step = max(1, _ATOMS_PER_CHUNK * 16 // log_p.size)
    for start in range(0, orders.size, step):
        lam1 = orders[start:start + step, None] - 1.0
        exponent = log_p[None, :] + lam1 * loss[None, :]
        top = np.max(exponent, axis=1, keepdims=True)
        finite = np.isfinite(top[:, 0])
        shift = np.where(np.isfinite(top), top, 0.0)
        with np.errstate(invalid="ignore"):
            summed = shift[:, 0] + np.log(np.sum(np.exp(exponent - shift), axis=1))
        out[start:start + step] = np.where(finite, summed, top[:, 0])
    return out


def _rows_upper(n_trials: int, log_r: float, log_1mr: float, largest_order: float, epsilon_local: float) -> int:
    """Last row c_hi to sum: the first c with log Pr(C > c) + (lambda_max - 1) eps0 <= REMAINDER_LOG_BOUND."""
    rows = np.arange(0, n_trials + 1, dtype=float)
    tail = log_sf(rows + 1.0, float(n_trials), log_r, log_1mr)  # log Pr(C > c)
    ok = np.nonzero(tail + (largest_order - 1.0) * epsilon_local <= REMAINDER_LOG_BOUND)[0]
    return int(rows[ok[0]]) if ok.size else n_trials


def _split_atoms(cc: np.ndarray, x: np.ndarray, parameters: dict) -> tuple[np.ndarray, np.ndarray]:
    """(log p, log q) of the split pair at rows ``cc`` and first coordinates ``x`` (0 <= x <= c + 1)."""
    half = math.log(0.5)
    log_alpha, log_1malpha = parameters["log_alpha"], parameters["log_1malpha"]
    log_c = log_pmf(cc, float(parameters["n_trials"]), parameters["log_r"], parameters["log_1mr"])
    b_x = np.where(x <= cc, log_binom_pmf_loader(np.minimum(x, cc), cc, half, half), -np.inf)
    b_xm1 = np.where(x >= 1, log_binom_pmf_loader(np.maximum(x - 1.0, 0.0), cc, half, half), -np.inf)
    log_p = log_c + np.logaddexp(log_alpha + b_xm1, log_1malpha + b_x)
    log_q = log_c + np.logaddexp(log_alpha + b_x, log_1malpha + b_xm1)
    return log_p, log_q


def clones_atoms(c, x, epsilon_local: float, n_users: int, k: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(log p, log q) of the clones pair (without the k-RR weight) at the atoms (c, x): C = c and first
    coordinate x (0 <= x <= c + 1); for checks on subsets of atoms (tools/verify_koskela_fig1_rdp.py)."""
    parameters = pair_parameters(epsilon_local, n_users, k)
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


def clones_log_moments(epsilon_local: float, n_users: int, k: int | None, orders=ORDERS) -> np.ndarray:
    """log M_lambda of the clones pair (generic when ``k`` is None, k-RR otherwise): an upper bound
    within e^-50 of the exact value (module docstring)."""
    orders = np.asarray(orders, dtype=float)
    if np.any(orders <= 1.0):
        raise ValueError(f"`orders` must all be > 1; got min {float(orders.min())!r}.")
    parameters = pair_parameters(epsilon_local, n_users, k)
    log_weight = parameters.pop("log_weight")
    split = _split_pair_moments(parameters, orders, float(epsilon_local))
    if log_weight >= 0.0:
        return split
    return np.logaddexp(log_weight + split, float(log1mexp(log_weight)))


def clones_rdp(epsilon_local: float, n_users: int, k: int | None, orders=ORDERS) -> tuple[np.ndarray, np.ndarray]:
    """(orders, D_lambda) of the clones pair, both directions (equal: symmetric pair); upper bound."""
    orders = np.asarray(orders, dtype=float)
    moments = clones_log_moments(epsilon_local, n_users, k, orders)
    return orders, np.maximum(moments, 0.0) / (orders - 1.0)
