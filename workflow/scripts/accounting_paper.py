"""Rule accounting_paper: the paper's accounting outputs in one job -- Table II, Table IV and Figure 1 (one log
file per item, as when each was its own job). The config delta sweeps are rule accounting_sweep, one job each."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from shuffledp.experiments.accounting import table2_frames, table4_frames, verdict_counts
from shuffledp.experiments.accounting_grids import fig1_frame, fig1_grid
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log
from shuffledp.plotting.accounting import figure_delta_surfaces
from shuffledp.reference import load_reference
from shuffledp.tables import write_table

CAPTIONS = {
    "table2": "Table II: delta of the paper's columns, our evaluation of them, and genuine bounds",
    "table4": "Table IV: tight delta for various epsilon, as printed (eq. 6) and exact",
}


def _save(figure, path, dpi):
    with atomic_output(path) as temporary:
        figure.savefig(temporary, dpi=dpi)
    plt.close(figure)


def table(name, outputs, settings):
    log = logging.getLogger(f"accounting_{name}")
    frames = table2_frames if name == "table2" else table4_frames
    frame, comparison = frames(settings, load_reference(name))
    write_table(
        frame,
        csv=outputs["csv"],
        latex=outputs["latex"],
        markdown=outputs["markdown"],
        caption=CAPTIONS[name],
    )
    atomic_write_text(outputs["comparison"], comparison.to_csv(index=False))
    unit = "rows" if name == "table2" else "cells"
    log.info(
        "%s: %d %s; verdicts %s",
        "Table II" if name == "table2" else "Table IV",
        len(frame),
        unit,
        verdict_counts(comparison),
    )


def fig1(outputs, settings):
    log = logging.getLogger("accounting_fig1")
    frame = fig1_frame(settings)
    atomic_write_text(outputs["data"], frame.to_csv(index=False))
    names = list(settings["accountants"])
    figure = figure_delta_surfaces(frame, accountants=names, grid_of=fig1_grid)
    for name in names:
        grid = fig1_grid(frame, name)[2]
        log.info("%s: %d of %d grid points have delta = 0", name, int(np.isneginf(grid).sum()), grid.size)
    _save(figure, outputs["figure"], 150)


setup_job_log(snakemake)
accounting, output = snakemake.params.accounting, snakemake.output
items = [("table2", None), ("table4", None), ("fig1", None)]
for kind, _ in item_logs(items, snakemake.log):
    if kind in ("table2", "table4"):
        table(
            kind,
            {key: getattr(output, f"{kind}_{key}") for key in ("csv", "latex", "markdown", "comparison")},
            accounting[kind],
        )
    else:
        fig1({"data": output.fig1_data, "figure": output.fig1_figure}, accounting["fig1"])
