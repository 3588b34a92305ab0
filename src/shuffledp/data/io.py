"""Atomic file output (re-exported from :mod:`shuffledp._io`, the one implementation)."""

from __future__ import annotations

from shuffledp._io import atomic_output, atomic_write_text

__all__ = ["atomic_output", "atomic_write_text"]
