"""Scaling figures (speedup, efficiencies, Karp-Flatt) and comparisons of configurations against a
baseline (geometric means, health warnings)."""
