"""The searches over datasets: the worst case over every pair of neighbouring datasets, bounded from above
by searches behind one interface (:mod:`~shuffledp.accounting.worst_case.search`) chosen by a table of
regimes (:mod:`~shuffledp.accounting.worst_case.regimes`), and from below by families of explicit datasets,
each family the maximum of its member views (:mod:`~shuffledp.accounting.worst_case.families`).

Sub-layers, bottom to top (each imports only those below it): ``search`` (the interface), ``exact`` (exact
laws and enumeration), ``k2`` / ``k3`` / ``k4`` (the searches per k), ``families`` (explicit datasets as
views, for the lower bound), ``regimes`` (the table).
"""
