"""Rule reproduction_report: write the reproduction report as Markdown and self-contained HTML."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging
from pathlib import Path

from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.provenance import config_sha256, file_sha256, git_state
from shuffledp.report import ReportInputs, build_report, render_html, render_markdown

setup_job_log(snakemake)
log = logging.getLogger("reproduction_report")

params = snakemake.params
reads = [
    Path(path) for path in [*snakemake.input.reads, *snakemake.input.hypotheses, *snakemake.input.data_source]
]
inputs = ReportInputs(
    config=snakemake.config,
    report_dir=Path(snakemake.output.markdown).parent,
    comparisons=[Path(p) for p in params.comparisons],
    figures={int(k): [Path(p) for p in v] for k, v in params.figures.items()},
    figure_data={int(k): [Path(p) for p in v] for k, v in params.figure_data.items()},
    data_summary=Path(params.data_summary) if params.data_summary else None,
    data_source=Path(snakemake.input.data_source[0]) if snakemake.input.data_source else None,
    cell_counts=[Path(p) for p in params.cell_counts],
    gaussian_checks=[Path(p) for p in params.gaussian_checks],
    extras={
        name: {kind: [Path(p) for p in paths] for kind, paths in extra.items()}
        for name, extra in params.extras.items()
    },
    manifests={stage: Path(path) for stage, path in params.manifests.items()},
    hypotheses=Path(snakemake.input.hypotheses[0]) if snakemake.input.hypotheses else None,
    producers={k: v for k, v in params.producers.items() if v},
    checksums={str(path): file_sha256(path) for path in reads if path.is_file()},
    expected_stages=list(params.stages),
    title=params.title,
    config_sha256=config_sha256(snakemake.config),
    git=git_state(params.repo),
)
blocks = build_report(inputs)
log.info(
    "%d blocks from %d comparison files, %d figures",
    len(blocks),
    len(inputs.comparisons),
    len(inputs.figures),
)
atomic_write_text(snakemake.output.markdown, render_markdown(blocks))
atomic_write_text(snakemake.output.html, render_html(blocks, title=params.title))
