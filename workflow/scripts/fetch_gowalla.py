"""Rule fetch_gowalla: download the SNAP Gowalla check-ins, verify them, place them atomically."""

import logging

from shuffledp.data.download import DownloadError, download
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
log = logging.getLogger("fetch_gowalla")
params = snakemake.params

try:
    download(
        params.url,
        snakemake.output[0],
        expected_rows=params.expected_rows,
        retries=params.retries,
        timeout=params.timeout,
        backoff=params.backoff,
        log=log.info,
    )
except DownloadError as error:
    log.error(str(error))
    raise SystemExit(str(error)) from None
