"""k = 2: the worst case over datasets by branch and bound over blocks (blanket-bit blocks to n = 10^4, pair sums above)."""
