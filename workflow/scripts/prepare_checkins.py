"""Rule prepare_checkins: parse one source file, count malformed rows, write the valid check-ins."""

import logging

from shuffledp._joblog import setup_job_log
from shuffledp.data.gowalla import check_bad_fraction, read_checkins, source_summary
from shuffledp.data.io import atomic_output
from shuffledp.tables import atomic_write_text

setup_job_log(snakemake)
log = logging.getLogger("prepare_checkins")
source = snakemake.params.source

log.info("source %s: %s (format %s)", source["name"], source["file_name"], source["format"])
parsed = read_checkins(
    snakemake.input[0],
    format=source["format"],
    lat_column=source.get("lat_column"),
    lon_column=source.get("lon_column"),
    user_column=source.get("user_column"),
)
log.info("%s", parsed.describe())
try:
    check_bad_fraction(parsed, snakemake.params.max_bad_fraction, name=f"source {source['name']}")
except ValueError as error:
    log.error(str(error))
    raise SystemExit(str(error)) from None

summary = source_summary(parsed, name=source["name"], label=source.get("label") or source["file_name"])
with atomic_output(snakemake.output.checkins) as temporary:
    parsed.checkins.to_parquet(temporary, index=False)
atomic_write_text(snakemake.output.summary, summary.to_csv(index=False))
