"""Rule koskela_figure: Koskela et al.'s Figures 1-3 -- our composed curves (CSV) and each figure with theirs
(one CSV, PNG and log per figure, all three in one job)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from shuffledp.experiments.koskela import figure_frame
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import item_logs, setup_job_log
from shuffledp.plotting.koskela import figure_koskela
from shuffledp.reference import load_reference

setup_job_log(snakemake)
params = snakemake.params
published = load_reference("koskela_figures")  # their stored curves of every figure, read once
figures = zip(params.numbers, params.sections, snakemake.output.csv, snakemake.output.png)
for number, section, csv, png in item_logs(figures, snakemake.log):
    number = int(number)
    frame = figure_frame(number, section)
    atomic_write_text(csv, frame.to_csv(index=False))
    logging.info("%s", frame.groupby(["curve", "compositions"])["seconds"].sum().to_string())
    figure = figure_koskela(
        frame,
        published[published["figure"] == str(number)],
        number=number,
        section=section,
        smallest_delta=params.smallest_delta,
    )
    with atomic_output(png) as temporary:
        figure.savefig(temporary, dpi=120)
    plt.close(figure)
