"""scalebench: HPL and application scaling harness (library side, no ReFrame import)."""

__version__ = "0.1.0"
