"""Benchmark output parsers, by kind: each takes the whole text and returns a JSON-ready dict.

``KINDS``: the kinds the benchmark rooms parse (scalebench.room); a new kind is a room's. Beside them:
what parsers share (_common.py), and HPL's solve windows, which energy reads (hpl_windows.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from scalebench import room, textfile
from scalebench.errors import InputError, ParseError
from scalebench.validation import excerpt

KINDS: dict[str, Callable[[str], dict]] = {found.name: found.parse for found in room.rooms()}


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
