"""Parsing of human-written quantities (memory sizes)."""
from __future__ import annotations

import re
from decimal import Decimal

from scalebench.errors import InputError

# Bare K/M/G/T are binary, as in Slurm (--mem=16G means 16 GiB); kB/MB/GB/TB are decimal.
_FACTORS = {
    "": 1, "b": 1,
    "k": 2**10, "kib": 2**10, "kb": 10**3,
    "m": 2**20, "mib": 2**20, "mb": 10**6,
    "g": 2**30, "gib": 2**30, "gb": 10**9,
    "t": 2**40, "tib": 2**40, "tb": 10**12,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str | int, field: str = "size") -> int:
    """Bytes from '16GiB', '16G', '1.5 TB' or a plain byte count."""
    if isinstance(text, int):
        value = text
    else:
        match = _SIZE.match(str(text))
        unit = match.group(2).lower() if match else None
        if not match or unit not in _FACTORS:
            raise InputError(f"{field}: cannot parse {text!r} as a size (e.g. 16GiB, 64G, 500GB)")
        value = int(Decimal(match.group(1)) * _FACTORS[unit])
    if value <= 0:
        raise InputError(f"{field}: must be positive, got {text!r}")
    return value


def format_size(num_bytes: int) -> str:
    """'16.0 GiB' style, for reports."""
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if num_bytes >= factor:
            return f"{num_bytes / factor:.1f} {unit}"
    return f"{num_bytes} B"

