"""Rule utility_fig2: Figure 2 -- TV distance vs n on synthetic data, one row per calibration of the Gaussian."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp._joblog import setup_job_log  # noqa: E402
from shuffledp.data.io import atomic_output  # noqa: E402
from shuffledp.plotting.utility import figure_tv_vs_n  # noqa: E402
from shuffledp.tables import atomic_write_text  # noqa: E402

setup_job_log(snakemake)
frame = pd.concat([pd.read_csv(path) for path in snakemake.input], ignore_index=True)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
figure = figure_tv_vs_n(frame, k=snakemake.params.utility["synthetic"]["k"])
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
