"""Rule fig3: Figure 3 -- check-in scatter per region (top row) and cell-count heat maps (bottom)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import json
import logging
import string
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

from shuffledp.data.geometry import Region, counts_grid, equirectangular_km, region_extent_km
from shuffledp.io import atomic_output
from shuffledp.joblog import setup_job_log
from shuffledp.plotting.maps import add_data_label, plot_cell_counts, plot_checkins

setup_job_log(snakemake)
log = logging.getLogger("fig3")

regions = [Region.from_config(entry["name"], entry) for entry in snakemake.params.regions]
figure, axes = plt.subplots(2, len(regions), figsize=(6.0 * len(regions), 8.5), squeeze=False)
letters = iter(string.ascii_lowercase)
for column, (region, checkins_path) in enumerate(zip(regions, snakemake.input.checkins)):
    checkins = pd.read_parquet(checkins_path, columns=["latitude", "longitude"])
    lat0, lon0 = region.centre
    x, y = equirectangular_km(checkins["latitude"], checkins["longitude"], lat0=lat0, lon0=lon0)
    extent = region_extent_km(region)
    plot_checkins(
        x,
        y,
        extent=extent,
        ax=axes[0, column],
        title=f"({next(letters)}) {region.label}: {len(checkins):,} check-ins",
    )
    log.info("%s: %d check-ins, extent %s km", region.name, len(checkins), extent)
for column, (region, cells_path) in enumerate(zip(regions, snakemake.input.cells)):
    grid = counts_grid(pd.read_csv(cells_path), region)
    plot_cell_counts(
        grid,
        extent=region_extent_km(region),
        ax=axes[1, column],
        title=f"({next(letters)}) {region.label}: {region.n_lon} x {region.n_lat} cells",
    )
names = " and ".join(f"{region.label} {region.n_lon} x {region.n_lat}" for region in regions)
title = f"Biswas et al. Fig. 3: Gowalla check-ins and their cell grids ({names})"
figure.suptitle(title)
log.info("title: %s", title)
add_data_label(figure, json.loads(Path(snakemake.input.label).read_text(encoding="utf-8"))["label"])
figure.tight_layout()
with atomic_output(snakemake.output[0]) as temporary:
    figure.savefig(temporary, dpi=150)
plt.close(figure)
