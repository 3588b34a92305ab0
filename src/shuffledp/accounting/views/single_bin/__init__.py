"""The paper's single-bin view: the law of the x0-bin count of the shuffled histogram (Theorem IV.1), and its state-free pieces."""
