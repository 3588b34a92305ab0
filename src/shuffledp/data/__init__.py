"""Data handling: Gowalla parsing, cropping and gridding (pure functions on arrays and DataFrames).

Modules: ``gowalla`` (read SNAP / CSV check-ins with malformed-row counts, crop, grid, project),
``download`` (retrying, verified, atomic download of the SNAP file), ``io`` (atomic file output).
"""
