"""Data handling: Gowalla parsing, cropping and gridding (pure functions on arrays and DataFrames)."""
