"""k = 3: the exact worst case by branch and bound over blocks of datasets, and the same blocks on windowed laws at larger n."""
