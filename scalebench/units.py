"""Parsing of human-written quantities (memory sizes)."""
from __future__ import annotations

import re
from decimal import Decimal

from scalebench.errors import InputError
from scalebench.validation import excerpt, excerpt_text

# Bare K/M/G/T are binary, as in Slurm (--mem=16G means 16 GiB); kB/MB/GB/TB are decimal.
_FACTORS = {
    "b": 1,
    "k": 2**10, "kib": 2**10, "kb": 10**3,
    "m": 2**20, "mib": 2**20, "mb": 10**6,
    "g": 2**30, "gib": 2**30, "gb": 10**9,
    "t": 2**40, "tib": 2**40, "tb": 10**12,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str | int, field: str = "size") -> int:
    """Bytes from '16GiB', '16G', '1.5 TB' or '512B'; an int is a byte count already (scalebench's own
    values). A written size needs its unit: '768' could mean GiB to its author and bytes to a parser."""
    if isinstance(text, int):
        value = text
    else:
        match = _SIZE.match(str(text))
        unit = match.group(2).lower() if match else None
        if match and unit == "":
            raise InputError(f"{field}: {excerpt(text)} has no unit; write it with one, e.g. {excerpt_text(match.group(1), 12)}GiB "
                             "(bare K/M/G/T are binary, kB/MB/GB/TB decimal, B bytes)")
        if not match or unit not in _FACTORS:
            raise InputError(f"{field}: cannot parse {excerpt(text)} as a size (e.g. 16GiB, 64G, 500GB)")
        value = int(Decimal(match.group(1)) * _FACTORS[unit])
    if value <= 0:
        raise InputError(f"{field}: must be positive, got {excerpt(text)}")
    return value


_DECIMAL = ("kb", "mb", "gb", "tb")


def parse_slurm_size(text: str | int, field: str = "size") -> int:
    """Bytes of a size Slurm is asked for or says (--mem, MaxMemPerNode, RealMemory): its units are binary
    (its M is MiB), so a decimal unit is refused as the mistake it would be: 850000MB, meant as Slurm's
    850000M, would ask for 5% less."""
    match = _SIZE.match(str(text)) if not isinstance(text, int) else None
    if match and match.group(2).lower() in _DECIMAL:
        unit = match.group(2)
        raise InputError(f"{field}: {excerpt(text)}: Slurm's sizes are binary (its M is MiB): write "
                         f"{excerpt_text(match.group(1), 12)}{unit[0].upper()} or {excerpt_text(match.group(1), 12)}"
                         f"{unit[0].upper()}iB")
    return parse_size(text, field)


def format_size(num_bytes: int) -> str:
    """'16.0 GiB' style, for reports."""
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if num_bytes >= factor:
            return f"{num_bytes / factor:.1f} {unit}"
    return f"{num_bytes} B"



_DURATION = re.compile(r"^\s*(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s)?\s*$")
_CLOCK = re.compile(r"^\s*(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)\s*$")  # Slurm's [D-][HH:]MM:SS


def parse_duration(text: str | int | float, field: str = "time") -> int:
    """Seconds from ReFrame's '1d2h30m', Slurm's '1-02:30:00' / '30:00', or a number of seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = text
    else:
        words = str(text)
        match = _DURATION.match(words)
        clock = _CLOCK.match(words)
        if match and any(match.groups()):
            days, hours, minutes, secs = (int(g or 0) for g in match.groups())
        elif clock:
            days, hours, minutes, secs = (int(g or 0) for g in clock.groups())
        else:
            raise InputError(f"{field}: cannot parse {excerpt(text)} as a duration (e.g. 4h, 1d12h, 30m, 02:00:00)")
        seconds = ((days * 24 + hours) * 60 + minutes) * 60 + secs
    if not 0 < seconds < 10 * 365 * 86400:
        raise InputError(f"{field}: must be between 1 s and 10 years, got {excerpt(text)}")
    return int(seconds)


def format_duration(seconds: float) -> str:
    """'2h05m', '4m10s', '12s': a time limit or prediction at a glance."""
    total = int(round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"
