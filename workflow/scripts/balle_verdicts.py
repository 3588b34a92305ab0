"""Rule balle_verdicts: Balle et al.'s Figure 3 (four panels, theirs on top of ours) and one verdict per curve."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.experiments.balle import KNOWN_DIFFERENCES, panel_verdicts
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.balle import figure_balle
from shuffledp.reference import load_reference
from shuffledp.tables import write_table

setup_job_log(snakemake)
ours = pd.concat([pd.read_csv(path, dtype={"panel": str}) for path in snakemake.input], ignore_index=True)
atomic_write_text(snakemake.output.csv, ours.to_csv(index=False))
published = load_reference("balle_figures")
verdicts = panel_verdicts(
    ours, published, snakemake.params.panels, tolerance=snakemake.params.tolerance, notes=KNOWN_DIFFERENCES
)
write_table(
    verdicts,
    csv=snakemake.output.verdicts_csv,
    markdown=snakemake.output.verdicts_md,
    caption="Balle et al. Figure 3: one verdict per published curve, against the authors' code",
)
logging.info("%s", verdicts[["panel", "curve", "verdict", "max_relative_difference"]].to_string())
figure = figure_balle(ours, published, sections=snakemake.params.panels)
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
