"""Compiled kernels (built from cext/*.pyx)."""
