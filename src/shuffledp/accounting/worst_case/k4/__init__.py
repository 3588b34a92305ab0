"""k >= 4: the block search over every dataset and the own-value-hit views, and their minimum."""
