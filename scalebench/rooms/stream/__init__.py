"""STREAM: a node's memory bandwidth (copy, scale, add, triad), against its theoretical bandwidth
where the site file gives it. The check is reframe_tests/stream.py; build/bin/stream is hpcc's STREAM
(scripts/build-stream.sh)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from scalebench.room import Room

NAME = "stream"


def _parse(text: str) -> dict:
    from scalebench.rooms.stream.output import parse_stream

    return parse_stream(text).to_dict()


def _checks() -> Sequence[Any]:
    from scalebench.rooms.stream.rules import checks

    return checks()


def _section(results: Any, all_series: Sequence[Any]) -> list[Any]:
    from scalebench.rooms.stream.section import stream_section

    return stream_section(results, all_series, NAME)


ROOM = Room(NAME, _parse, _checks, Path(__file__).parent, _section)
