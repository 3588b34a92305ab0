"""Adversary views: each view's exact delta and its binned privacy loss distribution, in one module."""
