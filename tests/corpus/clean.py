"""Correct kernels that are not twins of a bug, for the false-alarm pass."""
