"""Adversary views: each view yields its outcomes (:mod:`~shuffledp.accounting.views.base`), and delta, epsilon,
the privacy loss distribution, the Renyi moments and the composed tail are derived from them
(:mod:`~shuffledp.accounting.views.derived`); a view's fast exact sum is an override held to its stream."""
