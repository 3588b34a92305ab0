"""Numerics of the accountants (bottom layer): binomial pieces, Chernoff bounds, certified sums and searches."""
