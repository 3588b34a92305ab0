"""Explicit datasets of the lower bound: their exact sums, their views, the family (the maximum of its members) and the members added by regime."""
