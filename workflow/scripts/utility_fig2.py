"""Rule utility_fig2: Figure 2 -- TV distance vs n on synthetic data (a) all mechanisms (b) Gaussian vs shuffle+INV."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from shuffledp._joblog import setup_job_log  # noqa: E402
from shuffledp.data.io import atomic_output  # noqa: E402
from shuffledp.plotting.utility import plot_tv_boxes  # noqa: E402
from shuffledp.tables import atomic_write_text  # noqa: E402

setup_job_log(snakemake)
frame = pd.concat([pd.read_csv(path) for path in snakemake.input], ignore_index=True)
atomic_write_text(snakemake.output.csv, frame.to_csv(index=False))
setting = snakemake.params.utility["fig2"]
figure, axes = plt.subplots(2, 2, figsize=(13, 9), squeeze=False)
for row, (calibration, name) in enumerate((("as_printed", "delta-hat: eq. (6) as printed"),
                                           ("configured", "delta-hat: configured accountant"))):
    data = frame[frame["calibration"] == calibration]
    accountant = data["accountant"].iloc[0]
    floored = " (delta floored)" if data["delta_floored"].any() else ""
    plot_tv_boxes(data, mechanisms=["gaussian", "shuffle", "shuffle+INV"], ax=axes[row, 0],
                  title=f"(a) {name} [{accountant}]{floored}")
    plot_tv_boxes(data, mechanisms=["gaussian", "shuffle+INV"], ax=axes[row, 1], title=f"(b) {name} [{accountant}]{floored}")
figure.suptitle(f"Synthetic data, k = {snakemake.params.utility['synthetic']['k']}, "
                f"eps = {setting['epsilon']:g}, eps0 = {setting['epsilon_local']:g}")
figure.tight_layout()
with atomic_output(snakemake.output.png) as temporary:
    figure.savefig(temporary, dpi=120)
plt.close(figure)
