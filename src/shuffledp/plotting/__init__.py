"""Drawing only: every function takes ``ax=None`` plus keyword-only options and returns the Axes.

Modules: ``maps`` (check-in scatter and grid heat maps), ``accounting`` (delta curves and surfaces),
``utility`` (TV-distance curves and box plots). Nothing here computes a statistic.
"""
