"""Exact duplicate check-ins: within a file and against sources listed earlier.

Exact duplicate rows (see :func:`find_duplicates`)
    A valid row whose every field (all columns of the file, as text) equals an earlier valid row's is
    an exact duplicate: of the same file, or of a source listed earlier. Readers keep them; the data
    stage counts them per source and keeps or drops them (config ``data.duplicates``).

Room: row validation after parsing (:mod:`shuffledp.data.gowalla`); the data stage applies the
configured policy (``data.duplicates``) and reports the counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from shuffledp.data.gowalla import EXAMPLES_PER_REASON, ParsedCheckins

__all__ = [
    "DUPLICATE_POLICIES",
    "DUPLICATE_KEY_COLUMNS",
    "Duplicates",
    "find_duplicates",
]


#: what ``data.duplicates`` may say: keep exact duplicate rows, or drop all but the first occurrence
DUPLICATE_POLICIES = ("drop", "keep")


#: columns written beside the check-ins of a source so later sources can be checked against them
DUPLICATE_KEY_COLUMNS = ("row_key", "user", "latitude", "longitude")


@dataclass(frozen=True)
class Duplicates:
    """Exact duplicate rows of one source (see :func:`find_duplicates`).

    ``in_file`` marks rows equal to an earlier row of the same file, ``of_earlier_source`` rows equal
    to a row of a source listed before it (a row that is both counts once, as the latter); ``checkins``
    is the source's check-ins with a ``row_key`` column, all rows kept (policy "keep") or without the
    duplicates (policy "drop").
    """

    checkins: pd.DataFrame
    policy: str
    in_file: int
    of_earlier_source: int
    examples: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.in_file + self.of_earlier_source

    @property
    def dropped(self) -> int:
        return self.total if self.policy == "drop" else 0

    def describe(self) -> str:
        action = "dropped" if self.policy == "drop" else "kept (data.duplicates: keep)"
        lines = [
            f"exact duplicate rows: {self.total} ({action})",
            f"  repeating an earlier row of this file: {self.in_file}",
            f"  repeating a row of a source listed earlier: {self.of_earlier_source}",
        ]
        lines += [f"    e.g. {example}" for example in self.examples]
        return "\n".join(lines)


def find_duplicates(
    parsed: ParsedCheckins, *, earlier: pd.DataFrame | None = None, policy: str = "drop"
) -> Duplicates:
    """Count the exact duplicate rows of ``parsed`` and keep or drop them.

    Two valid rows are exact duplicates when every field of the file is equal as text (a 64-bit
    hash of the raw fields, ``row_key``) and their parsed user and coordinates are equal too, so a
    hash collision alone cannot merge two different check-ins. ``earlier`` holds the
    :data:`DUPLICATE_KEY_COLUMNS` of the sources listed before this one (``None``: it is the first).
    The first occurrence (earlier sources first, then file order) is never a duplicate.
    """
    if policy not in DUPLICATE_POLICIES:
        raise ValueError(
            f"`policy` must be one of {', '.join(map(repr, DUPLICATE_POLICIES))}; got {policy!r}."
        )
    keys = parsed.row_keys
    if keys is None:  # built by hand, not by a reader: hash the parsed columns instead
        keys = pd.util.hash_pandas_object(parsed.checkins, index=False).to_numpy(dtype=np.uint64)
    checkins = parsed.checkins.assign(row_key=keys)
    columns = list(DUPLICATE_KEY_COLUMNS)
    current = checkins[columns]
    in_file = current.duplicated(keep="first").to_numpy()
    of_earlier = np.zeros(len(current), dtype=bool)
    if earlier is not None and len(earlier):
        previous = pd.MultiIndex.from_frame(earlier[columns].astype(current.dtypes.to_dict()))
        of_earlier = pd.MultiIndex.from_frame(current).isin(previous)
    duplicate = in_file | of_earlier
    examples = [
        ", ".join(f"{name}={value}" for name, value in row.items() if name != "row_key")
        for _, row in checkins.loc[duplicate].head(EXAMPLES_PER_REASON).iterrows()
    ]
    if policy == "drop":
        checkins = checkins.loc[~duplicate].reset_index(drop=True)
    return Duplicates(
        checkins=checkins,
        policy=policy,
        in_file=int((in_file & ~of_earlier).sum()),
        of_earlier_source=int(of_earlier.sum()),
        examples=examples,
    )
