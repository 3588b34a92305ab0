"""Rule balle_claims: the two claims of Balle et al.'s Sec. 6 text that the corrected Bennett code
overturns, counted on our Figure 3 curves (balle_fig3.csv)."""

from shuffledp._warm import hand_over

hand_over(snakemake)  # before the imports: in the run's warm interpreter when it has one (shuffledp._warm)

import logging

import pandas as pd

from shuffledp.experiments.balle import overturned_claims
from shuffledp.joblog import setup_job_log
from shuffledp.tables import write_table

setup_job_log(snakemake)
table = overturned_claims(pd.read_csv(snakemake.input[0], dtype={"panel": str}))
write_table(
    table,
    csv=snakemake.output.csv,
    markdown=snakemake.output.md,
    caption="Balle et al. Sec. 6: Hoeffding against Bennett, counted on our Figure 3 curves",
)
logging.info("%s", table[["panel", "claim_holds", "claim_fails", "verdict"]].to_string())
