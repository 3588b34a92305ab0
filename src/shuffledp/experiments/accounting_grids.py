"""Figure 1's grid and the config delta sweeps (``accounting.fig1``, ``accounting.sweeps``) as tidy frames.

Every delta comes from the accountant registry through :func:`shuffledp.experiments.accounting.log_delta`
(log space: values far below the double range are kept as ``log10_delta``, never as a false zero);
n_x0 follows the rules of :mod:`shuffledp.experiments.accounting`. Room: after
:mod:`shuffledp.experiments.accounting`, whose settings it uses; one sweep is one workflow job
(``workflow/rules/accounting.smk``, rule ``accounting_sweep``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from shuffledp._progress import progress
from shuffledp.accounting import Accountant, get_accountant
from shuffledp.experiments.accounting import ACCOUNTANT_LABELS, log_delta, n_x0_from_fraction, n_x0_from_rule

__all__ = ["fig1_frame", "sweep_frame", "fig1_grid", "sweep_series"]

_LOG10_E = 1.0 / math.log(10.0)
AccountantFactory = Callable[..., Accountant]


def _tidy(records: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    frame["delta"] = np.exp(frame["log_delta"].to_numpy(dtype=float))
    frame["log10_delta"] = frame["log_delta"] * _LOG10_E
    return frame.drop(columns="log_delta")


def _kind_of(name: str, factory_kind: Callable[[str], str] | None) -> str:
    if factory_kind is not None:
        return factory_kind(name)
    from shuffledp.accounting import accountant_class

    return accountant_class(name).kind.value


def fig1_frame(
    fig1: Mapping, *, factory: AccountantFactory = get_accountant, kind_of: Callable[[str], str] | None = None
) -> pd.DataFrame:
    """Long frame of delta over the (epsilon, epsilon_local) grid of ``accounting.fig1``.

    Columns: ``accountant``, ``kind``, ``label``, ``epsilon``, ``epsilon_local``, ``n_users``, ``k``,
    ``n_x0``, ``delta``, ``log10_delta`` (``-inf`` where delta = 0).
    """
    epsilons = np.linspace(fig1["epsilon"]["start"], fig1["epsilon"]["stop"], int(fig1["epsilon"]["num"]))
    locals_ = np.linspace(
        fig1["epsilon_local"]["start"], fig1["epsilon_local"]["stop"], int(fig1["epsilon_local"]["num"])
    )
    n_users, k = int(fig1["n_users"]), int(fig1["k"])
    n_x0 = n_x0_from_rule(fig1["n_x0"], n_users)
    records = []
    bar = progress(total=len(fig1["accountants"]) * len(locals_), desc="figure 1 grid")
    for name in fig1["accountants"]:
        kind = _kind_of(name, kind_of)
        for eps0 in locals_:
            values = log_delta(
                name, epsilons, epsilon_local=float(eps0), n_users=n_users, k=k, n_x0=n_x0, factory=factory
            )
            bar.update()
            for eps, value in zip(epsilons, values):
                records.append(
                    {
                        "accountant": name,
                        "kind": kind,
                        "label": ACCOUNTANT_LABELS.get(name, name),
                        "epsilon": float(eps),
                        "epsilon_local": float(eps0),
                        "n_users": n_users,
                        "k": k,
                        "n_x0": n_x0,
                        "log_delta": float(value),
                    }
                )
    bar.close()
    return _tidy(records)


def sweep_frame(
    name: str,
    sweep: Mapping,
    *,
    factory: AccountantFactory = get_accountant,
    kind_of: Callable[[str], str] | None = None,
) -> pd.DataFrame:
    """Long frame of delta over every combination of a sweep group's lists (one row per epsilon).

    Columns: ``sweep``, ``accountant``, ``kind``, ``label``, ``n_users``, ``k``, ``epsilon_local``,
    ``n_x0_fraction``, ``n_x0``, ``epsilon``, ``delta``, ``log10_delta``.
    """
    epsilons = np.asarray(sweep["epsilon"], dtype=float)
    records = []
    grid = list(
        itertools.product(sweep["n_users"], sweep["k"], sweep["epsilon_local"], sweep["n_x0_fraction"])
    )
    bar = progress(total=len(sweep["accountants"]) * len(grid), desc=f"sweep {name}")
    for accountant in sweep["accountants"]:
        kind = _kind_of(accountant, kind_of)
        for n_users, k, eps0, fraction in grid:
            n_x0 = n_x0_from_fraction(fraction, int(n_users))
            values = log_delta(
                accountant,
                epsilons,
                epsilon_local=float(eps0),
                n_users=int(n_users),
                k=int(k),
                n_x0=n_x0,
                factory=factory,
            )
            bar.update()
            for eps, value in zip(epsilons, values):
                records.append(
                    {
                        "sweep": name,
                        "accountant": accountant,
                        "kind": kind,
                        "label": ACCOUNTANT_LABELS.get(accountant, accountant),
                        "n_users": int(n_users),
                        "k": int(k),
                        "epsilon_local": float(eps0),
                        "n_x0_fraction": float(fraction),
                        "n_x0": n_x0,
                        "epsilon": float(eps),
                        "log_delta": float(value),
                    }
                )
    bar.close()
    return _tidy(records)


def fig1_grid(frame: pd.DataFrame, accountant: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(epsilons, epsilon_locals, log10 delta grid [epsilon_local, epsilon]) of one accountant of :func:`fig1_frame`."""
    rows = frame[frame["accountant"] == accountant]
    if rows.empty:
        raise ValueError(
            f"`accountant` must be one of {', '.join(sorted(frame['accountant'].unique()))}; got {accountant!r}."
        )
    grid = rows.pivot_table(index="epsilon_local", columns="epsilon", values="log10_delta", aggfunc="first")
    return grid.columns.to_numpy(dtype=float), grid.index.to_numpy(dtype=float), grid.to_numpy(dtype=float)


def sweep_series(frame: pd.DataFrame, x: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Curves of a :func:`sweep_frame`: label -> (x values, log10 delta), one per accountant and per
    combination of the other parameters that take more than one value."""
    parameters = ["n_users", "k", "epsilon_local", "n_x0_fraction", "epsilon"]
    if x not in parameters:
        raise ValueError(f"`x` must be one of {', '.join(parameters)}; got {x!r}.")
    varying = [p for p in parameters if p != x and frame[p].nunique() > 1]
    short = {"n_users": "n", "k": "k", "epsilon_local": "eps0", "n_x0_fraction": "n_x0/n", "epsilon": "eps"}
    series = {}
    for keys, group in frame.groupby(["label", *varying], sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        label = keys[0] + "".join(f", {short[p]}={value:g}" for p, value in zip(varying, keys[1:]))
        group = group.sort_values(x)
        series[label] = (group[x].to_numpy(dtype=float), group["log10_delta"].to_numpy(dtype=float))
    return series
