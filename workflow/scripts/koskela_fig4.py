"""Rule koskela_fig4: Koskela et al.'s Figure 4 -- delta(eps) of shuffled Gaussian noise by Monte Carlo (CSV),
the figure with its bands, and one verdict per curve."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shuffledp.experiments.shuffled_gaussian import fig4_frame, fig4_verdicts
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.koskela_fig4 import figure_koskela_fig4
from shuffledp.tables import write_table

setup_job_log(snakemake)
section = snakemake.params.section
frame = fig4_frame(section, seed=int(snakemake.params.seed))
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
logging.info(
    "seconds per estimator and d: %s",
    frame.groupby(["estimator", "dimension"])["seconds"].first().round(3).to_dict(),
)
verdicts = fig4_verdicts(frame, smallest_delta=float(snakemake.params.smallest_delta))
write_table(
    verdicts,
    csv=snakemake.output.verdicts_csv,
    markdown=snakemake.output.verdicts_md,
    caption="Koskela et al. Figure 4 (shuffled Gaussian, Monte Carlo): one verdict per curve",
)
logging.info("%s", verdicts[["curve", "verdict", "note"]].to_string())
figure = figure_koskela_fig4(frame, confidence=float(section["confidence"]))
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
