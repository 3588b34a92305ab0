"""The worst case over datasets: explicit families (the lower bound), exact enumeration at small n, the k = 2 pair search, the k = 3 blocks, the own-value-hit and third-value views."""
