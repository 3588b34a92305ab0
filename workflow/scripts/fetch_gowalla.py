"""Rule fetch_gowalla: decide which Gowalla data the run reads and record it (results/data/source.json).

snap: download the SNAP file, verify it, place it atomically (or stop with one line). auto: the same,
but when SNAP cannot be reached, the bundled subsets (checked against their sha256 list), with one
line in the log saying so. local: the user's files. Every later data job reads the record.
"""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import json
import logging

from shuffledp.data.download import DownloadError, download
from shuffledp.data.source import BundledDataError, choose_source
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
log = logging.getLogger("fetch_gowalla")
params = snakemake.params
snap = params.data["snap"]
requested = params.data["source"]


def fetch():
    download(
        snap["url"],
        params.raw_path,
        expected_rows=snap["expected_rows"],
        retries=snap["retries"],
        timeout=snap["timeout_seconds"],
        backoff=snap["backoff_seconds"],
        connect_timeout=snap["connect_timeout_seconds"],
        # auto: the attempts stay out of the log, whose one line says what was used instead
        log=log.info if requested == "snap" else log.debug,
    )


try:
    record = choose_source(
        params.data,
        repo=params.repo,
        raw_path=params.raw_path,
        local_data_dir=params.local_data_dir,
        fetch=fetch,
        log=log.warning,
    )
except (DownloadError, BundledDataError) as error:
    log.error(str(error))
    raise SystemExit(str(error)) from None
if record["source"] != "bundled":
    log.info("Gowalla data: %s (%s)", record["source"], record["reason"])
atomic_write_text(snakemake.output.record, json.dumps(record, indent=2) + "\n")
