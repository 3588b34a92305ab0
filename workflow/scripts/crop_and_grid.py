"""Rule crop_and_grid: pool the prepared sources, crop to one region, assign cells, count."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging
from pathlib import Path

import pandas as pd

from shuffledp.data.geometry import Region, crop_and_grid
from shuffledp.data.summary import region_summary
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
log = logging.getLogger("crop_and_grid")

region = Region.from_config(snakemake.params.name, snakemake.params.region)
# results/data/sources/<source id>.parquet, in the order the fetch step recorded them
sources = [Path(path).stem for path in snakemake.input]
frames = [
    pd.read_parquet(path).drop(columns="row_key", errors="ignore").assign(source=name)
    for name, path in zip(sources, snakemake.input)
]
checkins = pd.concat(frames, ignore_index=True)
cropped, cells = crop_and_grid(checkins, region)
summary = region_summary(region, rows_considered=len(checkins), kept=len(cropped))

log.info(
    "region %s (%s): %d grid cells (%d rows x %d columns)",
    region.name,
    region.label,
    region.n_cells,
    region.n_lat,
    region.n_lon,
)
for name, frame in zip(sources, frames):
    log.info(
        "  from source %s: %d of %d valid check-ins inside the box",
        name,
        int((cropped["source"] == name).sum()),
        len(frame),
    )
log.info("kept %d check-ins; the paper reports %s", len(cropped), region.paper_count)

atomic_write_text(snakemake.output.cells, cells.to_csv(index=False))
with atomic_output(snakemake.output.checkins) as temporary:
    cropped.to_parquet(temporary, index=False)
atomic_write_text(snakemake.output.summary, summary.to_csv(index=False))
