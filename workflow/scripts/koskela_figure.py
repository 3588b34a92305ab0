"""Rule koskela_figure: Koskela et al.'s Figure N -- our composed curves (CSV) and the figure with theirs."""

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from shuffledp.experiments.koskela import figure_frame  # noqa: E402
from shuffledp.io import atomic_output, atomic_write_text  # noqa: E402
from shuffledp.joblog import setup_job_log  # noqa: E402
from shuffledp.plotting.koskela import figure_koskela  # noqa: E402
from shuffledp.reference import load_reference  # noqa: E402

setup_job_log(snakemake)
number = int(snakemake.wildcards.number)
frame = figure_frame(number, snakemake.params.section)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
logging.info("%s", frame.groupby(["curve", "compositions"])["seconds"].sum().to_string())
published = load_reference("koskela_figures")
figure = figure_koskela(frame, published[published["figure"] == str(number)], number=number,
                        section=snakemake.params.section, smallest_delta=snakemake.params.smallest_delta)
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
