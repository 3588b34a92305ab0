"""The paper's single-bin view: the law of the x0-bin count of the shuffled histogram (Theorem IV.1), split by role (count law, cached blocks, tail sums, the view)."""
