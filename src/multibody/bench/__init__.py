"""Benchmark commands against peers (not imported by the library)."""
