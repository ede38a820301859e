"""The benchmarks (scalebench.benchmark says what one is), each imported here by name. BENCHMARKS, in name
order, is the list the central places read; a benchmark's folder missing from it fails a unit test. Beside
it, every benchmark's output parsed by its kind (`scalebench parse KIND FILE`)."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from scalebench import textfile
from scalebench.benchmarks import gromacs, hpcc, hpl, lammps, netpipe, openfoam, osu, stream
from scalebench.errors import InputError, ParseError
from scalebench.validation import excerpt

BENCHMARKS = (gromacs.BENCHMARK, hpcc.BENCHMARK, hpl.BENCHMARK, lammps.BENCHMARK, netpipe.BENCHMARK, openfoam.BENCHMARK,
              osu.BENCHMARK, stream.BENCHMARK)
# The benchmarks' knobs: plan's -S names and their checks' variables (scalebench.knobs).
SETTINGS = tuple(found.settings for found in BENCHMARKS if found.settings is not None)
KINDS: dict[str, Callable[[str], dict]] = {found.name: found.parse for found in BENCHMARKS}


def _parser(kind: str) -> Callable[[str], dict]:
    try:
        return KINDS[kind]
    except (KeyError, TypeError):
        known = ", ".join(sorted(KINDS))
        raise InputError(f"unknown output kind {excerpt(kind)} (known kinds: {known})") from None


def parse_text(kind: str, text: str) -> dict:
    """Parse ``text`` as output of ``kind``; InputError for an unknown kind, ParseError for no result."""
    return _parser(kind)(text)


def parse_file(kind: str, path: str | Path) -> dict:
    """Parse the file at ``path`` (a regular file, scalebench.textfile's limits); undecodable bytes
    become U+FFFD rather than an error, UTF-16/32 is named."""
    parser = _parser(kind)
    text = textfile.read_text(path, f"{kind} output")
    try:
        return parser(text)
    except ParseError as err:
        raise ParseError(f"{path}: {err}") from None
