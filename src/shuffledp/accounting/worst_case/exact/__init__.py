"""Exact laws of explicit datasets and the exact k = 3 worst case by enumeration at small n."""
