"""Values printed in the paper, transcribed as strings with their source (package data).

Biswas, Jung, Palamidessi, *Tight Differential Privacy Guarantees for the Shuffle Model with
k-Randomized Response* (arXiv 2022). One CSV per table (``table2`` ... ``table6``) plus
``text_numbers`` (numbers quoted in the running text), and ``koskela_figures``: the curves of
Koskela, Heikkila & Honkela's Figures 1-3 as stored in their public code (numbers, not strings;
``tools/transcribe_koskela.py`` wrote it), with ``koskela_fig1_rdp_check`` and ``koskela_fig2_pld_check``:
the recorded runs of their functions against recomputations of the lines that make their Fig. 1 RDP and
Fig. 2 PLD curves differ (``tools/verify_koskela_fig1_rdp.py``, ``tools/verify_koskela_fig2_pld.py``;
see docs/koskela-figures.md), and ``koskela_fig2_lower_check``, a certified lower bound in their Fig. 2
setting (``tools/koskela_fig2_lower_bound.py``); and ``balle_figures``: Balle et al.'s Figure 3 as their code
computes it at their notebook's grids, current code and 2019 release (``tools/transcribe_balle.py``).
Values stay strings exactly as printed
("6.580E-7", "12E-4", "0"), so the printed precision is kept for
:func:`shuffledp.tables.printed_precision_verdict`. How they were transcribed, and the paper's
oddities, are in ``README.md`` next to this file.
"""

from __future__ import annotations

import re
from importlib import resources

import pandas as pd

__all__ = ["REFERENCE_NAMES", "load_reference", "parse_label"]

#: names accepted by :func:`load_reference`
REFERENCE_NAMES = (
    "table2",
    "table3",
    "table4",
    "table5",
    "table6",
    "text_numbers",
    "koskela_figures",
    "koskela_fig1_rdp_check",
    "koskela_fig2_pld_check",
    "koskela_fig2_lower_check",
    "balle_figures",
)

_LABEL = re.compile(r"^\s*([A-Za-z_0-9]+?)\s*=\s*([-+0-9.,eE]+)\s*$")


def load_reference(name: str) -> pd.DataFrame:
    """Return the transcription ``name`` (one of :data:`REFERENCE_NAMES`) as a frame of strings.

    Rows keep the paper's order (row by row, columns left to right within a row).
    """
    if name not in REFERENCE_NAMES:
        raise ValueError(f"`name` must be one of {', '.join(REFERENCE_NAMES)}; got {name!r}.")
    source = resources.files(__name__).joinpath(f"{name}.csv")
    with source.open("r", encoding="utf-8") as handle:
        return pd.read_csv(handle, dtype=str, keep_default_na=False)


def parse_label(label: str) -> tuple[str, float]:
    """Split a row or column label such as ``"eps=0.1"`` or ``"n=1,000"`` into (parameter, value)."""
    match = _LABEL.match(str(label))
    if match is None:
        raise ValueError(f"`label` must look like 'name=number' (e.g. 'eps=0.1'); got {label!r}.")
    return match.group(1), float(match.group(2).replace(",", ""))
