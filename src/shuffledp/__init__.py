"""shuffledp: tight privacy accounting and utility experiments for the shuffle model with k-RR.

Layers (each imports only from the layers above it in this list):

* ``shuffledp._numerics``, ``shuffledp._validation``, ``shuffledp._random`` -- pure helpers.
* ``shuffledp.accounting`` -- delta/epsilon accountants for the shuffled k-RR histogram.
* ``shuffledp.mechanisms``, ``shuffledp.estimators``, ``shuffledp.metrics`` -- simulation and estimation.
* ``shuffledp.data`` -- Gowalla parsing, cropping and gridding.
* ``shuffledp.experiments`` -- one module per workflow stage: config slice (+ rng) -> tidy rows.
* ``shuffledp.plotting`` -- drawing only.
* ``shuffledp.cli`` -- the ``shuffle-dp`` command.
"""

__version__ = "0.2.0"

__all__ = ["__version__"]
