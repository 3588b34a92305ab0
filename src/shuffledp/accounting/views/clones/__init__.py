"""The clone pairs of Feldman, McMillan & Talwar: the 2021 pair (generic and k-RR), the 2023 stronger clones, and the clones pair's numerical RDP."""
