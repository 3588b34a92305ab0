"""Helpers for the figure tests: colour science and what a figure tells its reader.

The colour checks use their own sRGB -> CIELAB conversion (CIE 1976, D65 white) and the WCAG 2.x
relative luminance / contrast ratio, written out here from the published formulas so the tests do
not reuse the code they check.
"""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb
from matplotlib.text import Text


def _linear(colour) -> np.ndarray:
    rgb = np.asarray(to_rgb(colour), dtype=float)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def lab(colour) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ _linear(
        colour
    )
    xyz = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(first, second) -> float:
    return float(np.linalg.norm(lab(first) - lab(second)))


def contrast_ratio(first, second) -> float:
    """WCAG contrast ratio (1 to 21) of two opaque colours."""
    weights = np.array([0.2126, 0.7152, 0.0722])
    lighter, darker = sorted(
        (float(weights @ _linear(first)), float(weights @ _linear(second))), reverse=True
    )
    return (lighter + 0.05) / (darker + 0.05)


def figure_text(figure) -> str:
    """Every piece of text the reader sees in a figure (titles, suptitles, labels, legends, notes)."""
    return "\n".join(t.get_text() for t in figure.findobj(Text) if t.get_visible() and t.get_text())


def legend_texts(container) -> list[str]:
    """Texts of every legend of a figure or an Axes."""
    legends = list(getattr(container, "legends", []))
    if hasattr(container, "get_legend") and container.get_legend() is not None:
        legends.append(container.get_legend())
    if hasattr(container, "subfigs"):
        for subfigure in container.subfigs:
            legends += list(subfigure.legends)
    return [t.get_text() for legend in legends for t in legend.get_texts()]
