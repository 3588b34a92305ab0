"""The strong adversary's view (Balle et al. 2019; Koskela et al. 2021): the split pair with the blanket bits revealed."""
