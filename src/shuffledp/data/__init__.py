"""Data handling: Gowalla parsing and row validation, kept apart from geometry (crop, grid).

Modules, in the order the data passes through them:

* ``download`` -- retrying, verified, atomic download of the SNAP file.
* ``source`` -- which data a run reads (SNAP, the bundled subsets, local files), decided once and
  recorded; the one-line data label every Gowalla output carries.
* ``gowalla`` -- read SNAP text / CSV check-ins; every row kept or counted as malformed, by reason.
* ``duplicates`` -- exact duplicate rows, within a file and against sources listed earlier.
* ``geometry`` -- regions (bounding boxes), crop, grid, cell tables, local projection to km.
* ``summary`` -- the data summary table (per source and per region, with the paper's counts).

Everything except the two readers and the download is a pure function of arrays / DataFrames.
"""
