"""Rule balle_panel: the four panels of Balle et al.'s Figure 3 -- our curves and references (one CSV and
one log per panel, all four in one job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.balle import panel_frame, shared_values
from shuffledp.io import atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log

setup_job_log(snakemake)
params = snakemake.params
# reference points shared between panels: computed once by rule balle_references (exact floats); a panel
# reads them only if it is one of the sharing panels, as when each panel was its own job
shared = {}
for path in snakemake.input:
    shared.update(shared_values(pd.read_csv(path)))
panels = zip(params.panels, params.sections, snakemake.output.csv)
for panel, section, csv in item_logs(panels, snakemake.log):
    frame = panel_frame(panel, section, known=shared if panel in params.shared else {})
    atomic_write_text(csv, frame.to_csv(index=False))
    logging.info("%s", frame.groupby(["role", "curve"], sort=False)["seconds"].sum().to_string())
