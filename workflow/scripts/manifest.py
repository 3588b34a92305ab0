"""Rule manifest: write results/<stage>/MANIFEST.json (config, versions, commit, checksums, run time)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import glob
import json
import logging
import time
from pathlib import Path

from shuffledp.joblog import setup_job_log
from shuffledp.provenance import build_manifest, data_sources, reference_files, write_manifest

started = time.time()
setup_job_log(snakemake)
log = logging.getLogger("manifest")

stage = snakemake.params.stage
# which Gowalla data the run used (written by the data stage before any output that reads the data)
label_path = Path(snakemake.params.data_label)
data = json.loads(label_path.read_text(encoding="utf-8")) if label_path.is_file() else None
if stage == "data" and data is not None:
    inputs = data_sources(snakemake.config, raw_path=None, record=data)
else:
    inputs = list(snakemake.params.inputs)
if stage in ("accounting", "utility"):
    inputs += reference_files()
benchmarks = sorted({path for pattern in snakemake.params.benchmarks for path in glob.glob(pattern)})
manifest = build_manifest(
    stage=stage,
    config=snakemake.config,
    inputs=inputs,
    outputs=list(snakemake.input.outputs),
    benchmarks=benchmarks,
    repo_dir=snakemake.params.repo,
    started=started,
    data=data,
)
for path in manifest["missing_files"]:
    log.warning("listed but missing: %s", path)
log.info(
    "stage %s: %d inputs, %d outputs, %d benchmark files; config sha256 %s; git %s",
    stage,
    len(manifest["inputs"]),
    len(manifest["outputs"]),
    len(benchmarks),
    manifest["config"]["sha256"],
    manifest["git"],
)
write_manifest(snakemake.output[0], manifest)
