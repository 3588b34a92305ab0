"""The report's document model: small blocks that :mod:`shuffledp.report.build` assembles and
:mod:`shuffledp.report.render` writes as Markdown or HTML.

Room: plain frozen dataclasses; imports nothing from the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    anchor: str | None = None


@dataclass(frozen=True)
class Paragraph:
    text: str  # inline Markdown subset: `code`, **bold**, [text](link)


@dataclass(frozen=True)
class Table:
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True)
class BulletList:
    items: Sequence[str]


@dataclass(frozen=True)
class Figure:
    path: Path  # the image file
    caption: str
    link: str  # path as written in the Markdown (relative to the report)
