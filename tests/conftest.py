"""Suite-wide test configuration.

Hypothesis runs derandomized by default, so CI sees the same examples on every run (a red CI is
then a real regression, not a new random draw). Explore with fresh random examples locally:
``pytest --hypothesis-profile=explore`` (more examples, randomized).
"""

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", max_examples=500, deadline=None, print_blob=True)
settings.load_profile("ci")
