"""The full histogram's views: the exact law of a dataset pair's histogram (or of a post-processing of it) on finitely many cells."""
