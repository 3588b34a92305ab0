"""The ``shuffle-dp`` command line (also ``python -m shuffledp``).

Subcommands are registered by the function :func:`build_parser`; each subcommand module adds its
own parser through a ``register(subparsers)`` function and sets ``func`` to its handler.
"""

from __future__ import annotations

import argparse
import sys

from shuffledp import __version__

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shuffle-dp",
        description=(
            "Tight (epsilon, delta) accounting for the shuffle model with k-randomized response "
            "(reproduction of Biswas, Jung & Palamidessi)."
        ),
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser


def main(argv: list[str] | None = None) -> int:
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


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
