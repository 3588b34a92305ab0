"""Rule utility_boxplot_<region>: Figures 6/7 -- box plots of TV vs n, one panel per privacy setting."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp._joblog import setup_job_log  # noqa: E402
from shuffledp.data.io import atomic_output  # noqa: E402
from shuffledp.plotting.utility import figure_tv_boxplots  # noqa: E402

setup_job_log(snakemake)
frame = pd.read_csv(snakemake.input[0])
figure = figure_tv_boxplots(frame, label=snakemake.params.label)
with atomic_output(snakemake.output[0]) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
