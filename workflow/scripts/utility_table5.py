"""Rule utility_table5: Table V and the text's community TV numbers, paper values beside ours."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.utility_tables import community_text_comparison, individual_tables
from shuffledp.io import atomic_write_text
from shuffledp.joblog import setup_job_log
from shuffledp.reference import load_reference
from shuffledp.tables import write_table

setup_job_log(snakemake)
individual = pd.concat([pd.read_csv(path) for path in snakemake.input.individual], ignore_index=True)
community = pd.concat([pd.read_csv(path) for path in snakemake.input.community], ignore_index=True)
wide, comparison = individual_tables(
    individual, load_reference("table5"), table="V", block_of=lambda row: f"n={row['n_users']:,}"
)
text = community_text_comparison(community, load_reference("text_numbers"))
write_table(
    wide,
    csv=snakemake.output.csv,
    latex=snakemake.output.latex,
    markdown=snakemake.output.markdown,
    caption="Table V: individual-specific utility |pi_hat_x0 - pi_x0| (mean of Monte-Carlo draws), synthetic data; "
    "delta floored per calibration (printed / configured)",
)
atomic_write_text(
    snakemake.output.comparison, pd.concat([comparison, text], ignore_index=True).to_csv(index=False)
)
summary = (
    community.groupby(["n_users", "calibration", "accountant", "mechanism"])
    .agg(
        l1_half_mean=("l1_half", "mean"),
        l1_half_sd=("l1_half", "std"),
        delta=("delta", "first"),
        delta_floored=("delta_floored", "first"),
        sigma=("sigma", "first"),
        sigma_diffprivlib=("sigma_diffprivlib", "first"),
    )
    .reset_index()
)
atomic_write_text(snakemake.output.text, summary.to_csv(index=False))
logging.info("verdicts: %s", pd.concat([comparison, text])["verdict"].value_counts().to_dict())
