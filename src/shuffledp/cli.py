"""The ``shuffle-dp`` command line (also ``python -m shuffledp``).

Subcommands::

    shuffle-dp delta --accountant NAME --eps0 E0 --n N --k K [--nx0 M] [--direction D] [--compositions T]
                     [--subsample Q] --eps E [E ...] [--json]
    shuffle-dp epsilon --accountant NAME --eps0 E0 --n N --k K [--nx0 M] [--direction D] [--compositions T]
                       [--subsample Q] --delta D [D ...] [--json]
    shuffle-dp calibrate --accountant NAME --n N --k K --eps E --delta D [--nx0 M] [--direction D] [--json]
    shuffle-dp bracket --eps0 E0 --n N --k K (--delta D [D ...] | --eps E [E ...]) [--json]
    shuffle-dp accountants [--json]
    shuffle-dp compare --n N --k K --eps E --delta D [--data uniform|zipf:S|PATH] [--draws M] [--seed S]
                       [--neighbouring R] [--randomizer KEY[,KEY...]] [--compositions T] [--subsample Q] [--json]

``--compositions T`` (default 1: the single-round accountant, output unchanged) composes T rounds and
``--subsample Q`` samples Q x N users of the population ``--n N`` each round (the papers' convention;
Q x N must be a whole number >= 1, and the output gives both N and Q x N); both apply to the accountants of :mod:`shuffledp.accounting.composition`
(PLDs) and to the ``girgis-rdp`` family (RDP); for ``compare`` they make (eps, delta) the total of T rounds
of Q x N users, every mechanism calibrated to it (:mod:`shuffledp.experiments.compare_rounds`). Accountant names are read from the registry (:mod:`shuffledp.accounting`). Bad input exits with
status 2 and one message naming the parameter, the accepted range and the value received.
"""

from __future__ import annotations

import argparse
import decimal
import inspect
import json
import math
import os
import sys
from typing import Any

from shuffledp import __version__
from shuffledp._allocator import keep_freed_memory

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``shuffle-dp: error: ...``, exit status 2) instead of a usage dump."""

    def error(self, message):
        self.exit(2, f"shuffle-dp: error: {message} (see `{self.prog} --help`)\n")


def _integer(text: str) -> int:
    """An integer option: plain (``1000000``) or integral scientific notation (``1e6``, ``1.5e3``)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        value = None
    if value is None or not value.is_finite() or value != value.to_integral_value():
        raise argparse.ArgumentTypeError(
            f"must be an integer (plain, or integral scientific notation such as 1e6); got {text!r}"
        )
    return int(value)


def _registry_names() -> list[str]:
    from shuffledp.accounting import list_accountants

    return list_accountants()


def _add_krr_arguments(parser: argparse.ArgumentParser, *, with_eps0: bool = True) -> None:
    """The k-RR setting every subcommand shares: --eps0 (unless the command computes it), --n and --k."""
    if with_eps0:
        parser.add_argument(
            "--eps0",
            dest="epsilon_local",
            metavar="EPS0",
            required=True,
            type=float,
            help="local epsilon_0 of k-RR (> 0)",
        )
    parser.add_argument(
        "--n", dest="n_users", metavar="N", required=True, type=_integer, help="number of users n (>= 1)"
    )
    parser.add_argument("--k", required=True, type=_integer, help="domain size k (>= 2)")


def _add_setting_arguments(parser: argparse.ArgumentParser, *, with_eps0: bool = True) -> None:
    names = _registry_names()
    parser.add_argument(
        "--accountant", required=True, metavar="NAME", help=f"accountant name, one of: {', '.join(names)}"
    )
    _add_krr_arguments(parser, with_eps0=with_eps0)
    parser.add_argument(
        "--nx0",
        type=_integer,
        default=None,
        help="other users holding x0, in [0, n-1] (dataset-dependent accountants)",
    )
    parser.add_argument(
        "--direction",
        default=None,
        help="forward (D(x0) vs D(x1), the paper's: Direction.REMOVE), reverse (Direction.ADD), or both "
        "(Direction.BOTH; accountants that take a direction)",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON array instead of a table")


def _add_composition_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--compositions",
        type=_integer,
        default=1,
        metavar="T",
        help="number of rounds composed (default 1: the single-round accountant)",
    )
    parser.add_argument(
        "--subsample",
        type=float,
        default=None,
        metavar="Q",
        help="fraction in (0, 1] of the population --n sampled each round (Q x N users report per round)",
    )


def _add_compare_parser(commands) -> None:
    compare = commands.add_parser(
        "compare",
        help="shuffled k-RR or a trusted curator at one (epsilon, delta): expected error of each mechanism",
    )
    _add_krr_arguments(compare, with_eps0=False)
    compare.add_argument("--eps", required=True, type=float, help="target epsilon (> 0)")
    compare.add_argument("--delta", required=True, type=float, help="target delta in (0, 1)")
    compare.add_argument(
        "--data",
        default="uniform",
        help="true histogram: uniform (default), zipf:S (cell j has probability ~ j^-S), or a CSV of k counts",
    )
    compare.add_argument(
        "--draws",
        type=_integer,
        default=200,
        help="Monte-Carlo draws of the simulated rows (>= 2; default 200)",
    )
    compare.add_argument(
        "--seed", type=_integer, default=0, help="root seed of the simulated rows (>= 0; default 0)"
    )
    compare.add_argument(
        "--neighbouring",
        default="replace-one",
        help="replace-one (default; L2 sensitivity sqrt 2) or add-remove (1), for the central mechanisms",
    )
    compare.add_argument(
        "--randomizer",
        default=None,
        help="registered randomizer key(s), comma-separated: one key gives its detailed comparison (one round "
        "only for a key other than krr); several give them side by side, each at the eps0 of its tightest valid "
        "upper bound; default: k-RR's detailed comparison, then every shuffled randomizer side by side",
    )
    compare.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    _add_composition_arguments(compare)  # T rounds of Q x N users against one total (eps, delta)
    compare.set_defaults(func=_run_compare)


def build_parser() -> argparse.ArgumentParser:
    names = _registry_names()
    parser = _Parser(
        prog="shuffle-dp",
        description=(
            "Tight (epsilon, delta) accounting for the shuffle model with k-randomized response "
            "(reproduction of Biswas, Jung & Palamidessi)."
        ),
        epilog=f"registered accountants: {', '.join(names)}",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    delta = commands.add_parser(
        "delta", help="delta for one or more epsilons", epilog=f"accountants: {', '.join(names)}"
    )
    _add_setting_arguments(delta)
    _add_composition_arguments(delta)
    delta.add_argument("--eps", required=True, type=float, nargs="+", help="epsilon values (>= 0)")
    delta.set_defaults(func=_run_delta)

    epsilon = commands.add_parser(
        "epsilon",
        help="smallest epsilon for one or more target deltas",
        epilog=f"accountants: {', '.join(names)}",
    )
    _add_setting_arguments(epsilon)
    _add_composition_arguments(epsilon)
    epsilon.add_argument(
        "--delta", required=True, type=float, nargs="+", help="target delta values in [0, 1]"
    )
    epsilon.set_defaults(func=_run_epsilon)

    calibrate = commands.add_parser(
        "calibrate",
        help="largest eps0 meeting a target (epsilon, delta)",
        epilog=f"accountants: {', '.join(names)}",
    )
    _add_setting_arguments(calibrate, with_eps0=False)
    calibrate.add_argument("--eps", required=True, type=float, help="target epsilon (>= 0)")
    calibrate.add_argument("--delta", required=True, type=float, help="target delta in [0, 1)")
    calibrate.set_defaults(func=_run_calibrate)

    bracket = commands.add_parser(
        "bracket", help="worst-case epsilon (or delta): valid upper bound vs lower bound, with their ratio"
    )
    _add_krr_arguments(bracket)
    targets = bracket.add_mutually_exclusive_group(required=True)
    targets.add_argument("--delta", type=float, nargs="+", help="target delta values: print epsilon")
    targets.add_argument("--eps", type=float, nargs="+", help="epsilon values: print delta")
    bracket.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    bracket.set_defaults(func=_run_bracket)

    _add_compare_parser(commands)

    listing = commands.add_parser("accountants", help="list the accountants with their labels and scopes")
    listing.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    listing.set_defaults(func=_run_accountants)
    return parser


def _direction(text: str):
    """``--direction forward|reverse|both`` as a :class:`~shuffledp.accounting.params.Direction` (REMOVE,
    ADD, BOTH): the one place where the command line's strings become the library's direction."""
    from shuffledp.accounting.params import Direction

    return Direction.parse(text)


def _options(args) -> dict:
    """Accountant keyword options from the command line (``direction`` only where accepted)."""
    from shuffledp.accounting import accountant_class

    cls = accountant_class(args.accountant)
    options = {}
    if args.direction is not None:
        if "direction" not in inspect.signature(cls.__init__).parameters:
            raise ValueError(
                f"`--direction` is not accepted by accountant {args.accountant!r}; got {args.direction!r}."
            )
        options["direction"] = _direction(args.direction)
    if args.nx0 is not None:
        if not cls.needs_n_x0:
            raise ValueError(
                f"`--nx0` is not accepted by accountant {args.accountant!r} (its result does not depend "
                f"on the dataset); got {args.nx0!r}."
            )
        options["n_x0"] = args.nx0
    return options


def _accountant(args):
    from shuffledp.accounting import get_accountant

    compositions = getattr(args, "compositions", 1)
    subsample = getattr(args, "subsample", None)
    if compositions == 1 and subsample is None:
        return get_accountant(
            args.accountant,
            epsilon_local=args.epsilon_local,
            n_users=args.n_users,
            k=args.k,
            **_options(args),
        )
    return _composed_accountant(args, compositions, 1.0 if subsample is None else subsample)


def _composed_accountant(args, compositions: int, subsample: float):
    from shuffledp._validation import check_integer, check_real
    from shuffledp.accounting import accountant_class, get_accountant, list_accountants
    from shuffledp.accounting.composition import MAX_COMPOSITIONS, composable, compose, compose_tighter

    check_integer(compositions, "compositions", low=1, high=MAX_COMPOSITIONS)
    check_real(subsample, "subsample", low=0.0, high=1.0, low_open=True)
    cls = accountant_class(args.accountant)  # unknown names fail here with the registry's message
    if args.direction is not None or args.nx0 is not None:
        raise ValueError(
            "`--compositions` / `--subsample` compose the dataset-free accountants only; drop `--direction` and "
            f"`--nx0`; got direction={args.direction!r}, nx0={args.nx0!r}."
        )
    if args.accountant in composable():
        return (compose_tighter if cls.composed_beside is not None else compose)(
            args.accountant,
            epsilon_local=args.epsilon_local,
            n_users=args.n_users,
            k=args.k,
            compositions=compositions,
            subsample=subsample,
        )
    if getattr(cls, "accepts_compositions", False):  # RDP accountants compose in closed form
        return get_accountant(
            args.accountant,
            epsilon_local=args.epsilon_local,
            n_users=args.n_users,
            k=args.k,
            compositions=compositions,
            subsample=subsample,
        )
    names = sorted(
        list(composable())
        + [
            name
            for name in list_accountants()
            if getattr(accountant_class(name), "accepts_compositions", False)
        ]
    )
    raise ValueError(
        f"`--accountant` must be one of {', '.join(names)} with `--compositions` or `--subsample`; "
        f"got {args.accountant!r}."
    )


def _emit(rows: list[dict], as_json: bool, columns: list[str]) -> None:
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    print("\t".join(columns))
    for row in rows:
        cells = []
        for column in columns:
            value = row[column]
            cells.append(f"{value:.6g}" if isinstance(value, float) else str(value))
        print("\t".join(cells))


def _json_float(value: float):
    """JSON has no -inf: log(0) is written as null."""
    return None if math.isinf(value) else value


def _subsample_columns(args, rows: list[dict], columns: list[str]) -> list[str]:
    """With ``--subsample``: state the population and the users sampled per round in every row."""
    if getattr(args, "subsample", None) is None:
        return columns
    from shuffledp.accounting.params import users_per_round

    per_round = users_per_round(args.n_users, args.subsample)
    for row in rows:
        row.update({"population": args.n_users, "per_round": per_round, "subsample": float(args.subsample)})
    return columns + ["population", "subsample", "per_round"]


def _run_delta(args) -> int:
    accountant = _accountant(args)
    tighter = hasattr(accountant, "log_delta_with_source")  # composed beside another: which one gave it
    if tighter:
        log_delta, sources = accountant.log_delta_with_source(args.eps)
    else:
        log_delta, sources = accountant.log_delta_for_epsilon(args.eps), []
    rows = []
    for eps, log_value in zip(args.eps, log_delta):
        rows.append(
            {
                "eps": float(eps),
                "delta": float(math.exp(log_value)),
                "log_delta": float(log_value) if not args.json else _json_float(float(log_value)),
                "accountant": accountant.name,
                "kind": accountant.kind.value,
            }
        )
    columns = ["eps", "delta", "log_delta", "accountant", "kind"]
    if tighter:
        for row, source in zip(rows, sources):
            row["tighter"] = source
        columns.append("tighter")
    _emit(rows, args.json, _subsample_columns(args, rows, columns))
    return 0


def _run_epsilon(args) -> int:
    accountant = _accountant(args)
    tighter = hasattr(accountant, "epsilon_with_source")  # composed beside another: which one gave it
    rows = []
    for d in args.delta:
        eps, source = accountant.epsilon_with_source(d) if tighter else (accountant.epsilon_for_delta(d), "")
        row = {
            "delta": float(d),
            "eps": float(eps),
            "accountant": accountant.name,
            "kind": accountant.kind.value,
        }
        if tighter:
            row["tighter"] = source
        rows.append(row)
    columns = ["delta", "eps", "accountant", "kind"] + (["tighter"] if tighter else [])
    _emit(rows, args.json, _subsample_columns(args, rows, columns))
    return 0


def _run_calibrate(args) -> int:
    from shuffledp.accounting import accountant_class
    from shuffledp.accounting.calibrate import calibrate_epsilon_local

    options = _options(args)
    eps0 = calibrate_epsilon_local(
        args.accountant, n_users=args.n_users, k=args.k, epsilon=args.eps, delta=args.delta, **options
    )
    kind = accountant_class(args.accountant).kind.value
    rows = [{"eps0": eps0, "eps": args.eps, "delta": args.delta, "accountant": args.accountant, "kind": kind}]
    _emit(rows, args.json, ["eps0", "eps", "delta", "accountant", "kind"])
    return 0


def _run_bracket(args) -> int:
    from shuffledp.accounting.bracket import bracket

    rows = bracket(
        epsilon_local=args.epsilon_local, n_users=args.n_users, k=args.k, deltas=args.delta, epsilons=args.eps
    )
    if args.delta is not None:
        columns = ["delta", "eps_lower", "eps_upper", "ratio", "lower", "upper"]
    else:
        columns = ["eps", "delta_lower", "delta_upper", "ratio", "lower", "upper"]
        if args.json:
            for row in rows:
                row["log_delta_lower"] = _json_float(row["log_delta_lower"])
                row["log_delta_upper"] = _json_float(row["log_delta_upper"])
    if args.json:
        for row in rows:
            row["ratio"] = _json_float(row["ratio"])
    _emit(rows, args.json, columns)
    return 0


def _run_accountants(args) -> int:
    from shuffledp.accounting import accountant_class

    rows = []
    for name in _registry_names():
        cls = accountant_class(name)
        rows.append(
            {
                "name": name,
                "kind": cls.kind.value,
                "needs_nx0": bool(cls.needs_n_x0),
                "scope": cls.scope,
                "reference": cls.reference,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(
                f"{row['name']}\t{row['kind']}\t{'needs --nx0' if row['needs_nx0'] else 'any dataset'}\t{row['scope']}"
            )
    return 0


def _compare_cell(value, digits: int = 5) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _print_comparison(result) -> None:
    print(
        f"{'mechanism':<18}{'eps0 from':<11}{'eps0':>12}{'sigma':>10}  {'E[L1]/2':>11} {'(SE)':>10}  "
        f"{'E[L2^2]':>11} {'(SE)':>10}  method"
    )
    for row in result.rows:
        source = {"upper": "upper", "lower": "lower"}.get(row["calibration"], "-")
        standard_error = "" if row["method"] == "exact" else f"({row['l1_half_se']:.2g})"
        l2_error = "" if row["method"] == "exact" else f"({row['squared_l2_se']:.2g})"
        print(
            f"{row['mechanism']:<18}{source:<11}{_compare_cell(row['epsilon_local'], 8):>12}"
            f"{_compare_cell(row['sigma'], 5):>10}  {row['l1_half']:>11.5g} {standard_error:>10}  "
            f"{row['squared_l2']:>11.4g} {l2_error:>10}  {row['method']}"
        )
    verdict = result.verdict
    pair = verdict["shuffle_vs_gaussian"]
    print(
        f"winner (smallest expected half L1 error; shuffled rows at the upper-bound eps0): {verdict['winner']} "
        f"(L1/2 {verdict['winner_l1_half']:.4g})"
    )
    if pair["winner_lower"] is None:  # T rounds: no lower-bound eps0
        certainty = (
            "certain: more than 3 SE apart"
            if pair["certain"]
            else f"not certain: {pair['standard_errors_apart']:.1f} SE apart"
        )
        print(
            f"shuffle+inv+proj vs gaussian+proj: {pair['winner']} wins, TV ratio shuffle/gaussian "
            f"{pair['ratio']:.4g}; {certainty}"
        )
        return
    certainty = (
        "certain: same winner at both eps0 and more than 3 SE apart"
        if pair["certain"]
        else f"not certain: winner at the lower-bound eps0 {pair['winner_lower']}, "
        f"{min(pair['standard_errors_apart'], pair['standard_errors_apart_lower']):.1f} SE apart"
    )
    print(
        f"shuffle+inv+proj vs gaussian+proj: {pair['winner']} wins, TV ratio shuffle/gaussian "
        f"{pair['ratio']:.4g} (at the lower-bound eps0 {pair['ratio_lower']:.4g}); {certainty}"
    )
    print(
        "upper: eps0 of worst-case-upper (valid); lower: eps0 of worst-case-lower (no analysis allows more); "
        "SE only on monte-carlo rows"
    )


def _print_rounds(result) -> None:
    rounds = result.verdict["rounds"]
    print(
        f"T = {rounds['compositions']} rounds of {rounds['per_round']} users (q = {rounds['subsample']:g} of "
        f"n = {rounds['population']}) against the total (eps, delta); per round: eps0 {rounds['epsilon_local']:.6g} "
        f"({rounds['shuffle_accountant']} PLD, composed), sigma {rounds['sigma']:.6g}, geometric eps "
        f"{rounds['geometric_epsilon']:.6g}, local eps {rounds['local_epsilon']:.6g}"
    )
    print(f"{'average of T rounds':<18}{'E[L1]/2':>12} {'(SE)':>10}  {'E[L2^2]':>11}  method")
    for row in result.rows:
        if row["average_l1_half"] is not None:
            standard_error = f"({row['average_l1_half_se']:.2g})" if row["average_l1_half_se"] else ""
            print(
                f"{row['mechanism']:<18}{row['average_l1_half']:>12.5g} {standard_error:>10}  "
                f"{row['average_squared_l2']:>11.4g}  {row['average_method']}"
            )
    print(
        f"winner on the average of T rounds: {result.verdict['average_winner']} "
        f"(L1/2 {result.verdict['average_winner_l1_half']:.4g}); the table above is per round"
    )


def _print_randomizers(result) -> None:
    print(
        "which randomizer to shuffle (each at the eps0 its tightest valid upper bound certifies, as searched: "
        "the largest for k-RR, a certified crossing for the others; curators at the same target)"
    )
    print(
        f"{'randomizer':<20}{'parameters':<16}{'eps0':>12}  {'certified by':<22}{'E[L1/2]':>11}  {'E[L2^2]':>11}"
    )
    for row in result.rows:
        l1_half = "-" if row["l1_half"] is None else f"{row['l1_half']:.5g}"
        print(
            f"{row['randomizer']:<20}{row['parameters'] or '-':<16}{_compare_cell(row['epsilon_local'], 8):>12}  "
            f"{row['accountant']:<22}{l1_half:>11}  {row['squared_l2']:>11.4g}"
        )
    verdict = result.verdict
    beating = ", ".join(verdict["shuffled_beating_gaussian"]) or "none"
    print(
        f"best shuffled: {verdict['best_shuffled']}; best of all: {verdict['best']} (by {verdict['metric']}); "
        f"shuffled randomizers beating the Gaussian curator: {beating}"
    )


def _randomizer_keys(text: str | None) -> list[str] | None:
    """``--randomizer`` as a list of keys (None when omitted)."""
    if text is None:
        return None
    keys = [key.strip() for key in text.split(",")]
    if not all(keys):
        raise ValueError(f"`--randomizer` must be registered keys separated by commas; got {text!r}.")
    return keys


def _run_compare(args) -> int:
    keys = _randomizer_keys(args.randomizer)
    if args.compositions == 1 and args.subsample is None and keys is not None and len(keys) > 1:
        from shuffledp.experiments.which_randomizer import compare_randomizers

        table = compare_randomizers(
            n_users=args.n_users,
            k=args.k,
            epsilon=args.eps,
            delta=args.delta,
            data=args.data,
            randomizers=keys,
            neighbouring=args.neighbouring,
        )
        if args.json:
            print(json.dumps(table.to_json(), indent=2))
        else:
            _print_randomizers(table)
        return 0
    side_by_side: Any = None
    if args.compositions == 1 and args.subsample is None:  # one round: today's comparison, unchanged
        from shuffledp.experiments.compare import compare

        result = compare(
            n_users=args.n_users,
            k=args.k,
            epsilon=args.eps,
            delta=args.delta,
            data=args.data,
            draws=args.draws,
            seed=args.seed,
            neighbouring=args.neighbouring,
            randomizer="krr" if keys is None else keys[0],
        )
        if keys is None:  # the default: every shuffled randomizer side by side after k-RR's detail
            from shuffledp.experiments.which_randomizer import compare_randomizers

            side_by_side = compare_randomizers(
                n_users=args.n_users,
                k=args.k,
                epsilon=args.eps,
                delta=args.delta,
                data=args.data,
                neighbouring=args.neighbouring,
            )
            result.verdict["randomizers"] = side_by_side.to_json()
    else:
        from shuffledp.experiments.compare_rounds import compare_rounds

        if keys not in (None, ["krr"]):
            raise ValueError(
                f"`--randomizer` must be krr with --compositions / --subsample (the rounds are k-RR's); "
                f"got {args.randomizer!r}."
            )
        result = compare_rounds(
            n_users=args.n_users,
            k=args.k,
            epsilon=args.eps,
            delta=args.delta,
            compositions=args.compositions,
            subsample=1.0 if args.subsample is None else args.subsample,
            data=args.data,
            draws=args.draws,
            seed=args.seed,
            neighbouring=args.neighbouring,
        )
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        _print_comparison(result)
        if "rounds" in result.verdict:
            _print_rounds(result)
        if side_by_side is not None:
            _print_randomizers(side_by_side)
    return 0


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except (TypeError, ValueError) as error:
        print(f"shuffle-dp: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise  # handled by main()
    except OSError as error:  # an unreadable --data file: one line naming it and the cause
        from shuffledp.io import describe_os_error

        print(f"shuffle-dp: error: {describe_os_error(error)}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    """Run the command line; a closed output pipe (``shuffle-dp accountants | head``) exits quietly.

    On a broken pipe, stdout is pointed at devnull so that the interpreter's final flush does not
    print a second error, and the exit status is 1 (the recipe of the Python docs, "Note on SIGPIPE").

    One BLAS thread unless the caller set ``OPENBLAS_NUM_THREADS``: a command computes one answer, and
    OpenBLAS starting a thread pool per core costs ~0.15 s CPU at import (half the command's
    start-up); it takes effect only where numpy is not imported yet (the console script). The values are
    the same bits either way (the CLI grid, n = 10^6 keys included, passes with one thread). glibc's allocator
    keeps freed memory for the next array (:mod:`shuffledp._allocator`: fewer page faults, the same values).
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    keep_freed_memory()
    try:
        try:
            return _main(argv)
        finally:
            sys.stdout.flush()  # surface a broken pipe here, not at interpreter exit
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
