"""Rule fetch_gowalla: download the SNAP Gowalla check-ins, verify them, place them atomically."""

import logging

from shuffledp.data.download import DownloadError, download

logging.basicConfig(filename=snakemake.log[0], level=logging.INFO, format="%(asctime)s %(message)s")
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
