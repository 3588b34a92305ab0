# Data stage: fetch Gowalla -> prepare sources -> crop and grid per region -> Figure 3.
