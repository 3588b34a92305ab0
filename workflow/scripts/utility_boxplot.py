"""Rule utility_boxplot_<region>: Figures 6/7 -- box plots of TV vs n, one panel per privacy setting."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp._joblog import setup_job_log  # noqa: E402
from shuffledp.data.io import atomic_output  # noqa: E402
from shuffledp.plotting.utility import plot_tv_boxes  # noqa: E402

setup_job_log(snakemake)
frame = pd.read_csv(snakemake.input[0])
settings = frame[["epsilon", "epsilon_local"]].drop_duplicates().to_numpy().tolist()
figure, axes = plt.subplots(1, len(settings), figsize=(7.5 * len(settings), 5), squeeze=False)
for ax, letter, (epsilon, epsilon_local) in zip(axes[0], "abcdefgh", settings):
    data = frame[(frame["epsilon"] == epsilon) & (frame["epsilon_local"] == epsilon_local)]
    floored = " (delta floored)" if data["delta_floored"].any() else ""
    plot_tv_boxes(data, mechanisms=["gaussian", "shuffle", "shuffle+INV"], ax=ax,
                  title=f"({letter}) {snakemake.params.label}: eps = {epsilon:g}, eps0 = {epsilon_local:g}{floored}")
figure.tight_layout()
with atomic_output(snakemake.output[0]) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
