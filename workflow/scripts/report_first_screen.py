"""Rule report_first_screen: open the HTML report in headless Chromium (tools/check_report_browser.py),
keep a screenshot of the first screen and the check's findings as JSON beside the report.

Where chromium or chromedriver is absent (``report.browser_check: auto``), the rule has no PNG output
and the JSON says ``"checked": false`` with the reason: it never pretends to have looked
(docs/decisions/workflow.md).
"""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import importlib.util
import json
import logging
from pathlib import Path

from shuffledp.io import atomic_output, atomic_write_text
from shuffledp.joblog import setup_job_log

setup_job_log(snakemake)
log = logging.getLogger("report_first_screen")

spec = importlib.util.spec_from_file_location("check_report_browser", Path(snakemake.params.tool))
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)

report = Path(snakemake.input.html)
screenshot = snakemake.output.get("screenshot")
if screenshot is None:
    result = {
        "report": str(report),
        "checked": False,
        "ok": None,
        "screenshot": None,
        "reason": snakemake.params.absent_reason,
    }
    log.warning("not checked in a browser: %s", result["reason"])
else:
    with atomic_output(screenshot) as temporary:
        result = tool.check(report, temporary, width=snakemake.params.width, height=snakemake.params.height)
    result = {**result, "screenshot": str(screenshot), "checked": True}
    log.info(
        "browser check of %s: ok=%s (%d images, %d anchors, %d tables)",
        report,
        result["ok"],
        result["images"],
        result["anchors"],
        result["tables"],
    )
atomic_write_text(snakemake.output.json, json.dumps(result, indent=2) + "\n")
if result.get("checked") and not result["ok"]:
    failures = {
        k: result[k]
        for k in (
            "broken_images",
            "broken_anchors",
            "missing_files",
            "overflowing_tables",
            "page_wider_than_viewport",
        )
        if result[k]
    }
    log.error("browser check failed: %s", json.dumps(failures)[:4000])
    raise SystemExit(f"the report fails its browser check (see {snakemake.output.json}): {sorted(failures)}")
