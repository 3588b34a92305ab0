"""Koskela et al.'s weak adversary: the view, its rows (windows, certified remainders) and its per-row tables shared by many epsilons."""
