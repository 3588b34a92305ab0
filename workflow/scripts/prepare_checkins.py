"""Rule prepare_checkins: parse one source file, count malformed and duplicate rows, write the check-ins."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.data.duplicates import DUPLICATE_KEY_COLUMNS, find_duplicates
from shuffledp.data.gowalla import DataFileError, check_bad_fraction, read_checkins
from shuffledp.data.source import read_source_record
from shuffledp.data.summary import source_summary
from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
log = logging.getLogger("prepare_checkins")
# This source's file, format and duplicates policy, as the fetch step recorded them.
name = snakemake.wildcards.source
source = {
    "name": name,
    **{item["id"]: item for item in read_source_record(snakemake.input.record)["files"]}[name],
}

log.info("source %s: %s (format %s)", source["name"], source["file_name"], source["format"])
try:
    parsed = read_checkins(
        snakemake.input.data,
        format=source["format"],
        lat_column=source.get("lat_column"),
        lon_column=source.get("lon_column"),
        user_column=source.get("user_column"),
    )
    log.info("%s", parsed.describe())
    check_bad_fraction(parsed, snakemake.params.max_bad_fraction, name=f"source {source['name']}")
except (DataFileError, ValueError) as error:
    log.error(str(error))
    raise SystemExit(str(error)) from None

earlier = [pd.read_parquet(path, columns=list(DUPLICATE_KEY_COLUMNS)) for path in snakemake.input.earlier]
duplicates = find_duplicates(
    parsed,
    earlier=pd.concat(earlier, ignore_index=True) if earlier else None,
    policy=source["duplicates"],
)
log.info("%s", duplicates.describe())
log.info("written: %d check-ins", len(duplicates.checkins))

summary = source_summary(
    parsed, name=source["name"], label=source.get("label") or source["file_name"], duplicates=duplicates
)
with atomic_output(snakemake.output.checkins) as temporary:
    duplicates.checkins.to_parquet(temporary, index=False)
atomic_write_text(snakemake.output.summary, summary.to_csv(index=False))
