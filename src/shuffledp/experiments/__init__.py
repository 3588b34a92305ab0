"""Experiments: the library side of the workflow's stages, one module per rule file.

Each module turns a config slice (plain dicts, already validated by the workflow's schema) into tidy
``pandas`` frames; none reads or writes files, and none knows about Snakemake. Every function that
draws takes ``rng: numpy.random.Generator`` or a seed and derives its stream with
:func:`shuffledp._random.job_rng`, so a job's numbers do not depend on job order or ``--cores``.

=======================  =====================================  ==========================================
module                   serves (workflow/rules/)               what it builds
=======================  =====================================  ==========================================
``accounting``           ``accounting.smk`` (paper)             Tables II and IV beside the paper, Fig. 1
                                                                grid, delta sweeps
``guarantees``           ``accounting.smk`` (beyond the paper)  epsilon at a fixed delta for every
                                                                accountant, the worst-case bracket table
``utility``              ``utility.smk`` (replicates)           synthetic data, delta-hat, calibration,
                                                                one replicate job per setting, sweeps
``utility_tables``       ``utility.smk`` (comparison rules)     Tables V/VI and Sec. V-C.2 against the
                                                                paper's single printed draws
``equal_guarantee``      ``utility.smk``                        every mechanism at one target (eps, delta)
``exact_error``          ``compare``, ``phase_diagram``         exact expected TV / squared L2 of the
                                                                unprojected estimators
``compare``              ``shuffle-dp compare``                 every mechanism at one (n, k, eps, delta)
``phase_diagram``        ``utility.smk``                        exact equal-error boundary over (n, eps)
=======================  =====================================  ==========================================

What a module here may import: :mod:`shuffledp.accounting`, :mod:`shuffledp.mechanisms`,
:mod:`shuffledp.estimators`, :mod:`shuffledp.metrics`, :mod:`shuffledp.tables`,
:mod:`shuffledp.reference`, :mod:`shuffledp.config` (its error type) and the private helpers (``_numerics``, ``_validation``, ``_random``,
``_progress``), and sibling modules listed above it in the table. Never :mod:`shuffledp.report`,
:mod:`shuffledp.plotting` or :mod:`shuffledp.data` (the workflow passes data in as arrays).

Import the module you need (``from shuffledp.experiments.utility import individual_job``); this
package re-exports nothing, so importing one stage does not load the others.
"""
