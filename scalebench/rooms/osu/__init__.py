"""OSU Micro-Benchmarks: latency, bandwidth, bidirectional bandwidth and, over 1, 2 and 4 pairs, message
rate between two ranks, within a node or between two; collectives on whole nodes. The checks are the
OSU*Check classes of reframe_tests/microbench.py; they report in the shared microbenchmark section
(scalebench/reporting/sections/microbenchmarks.py), so this room has none of its own."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from scalebench.room import Room

NAME = "osu"


def _parse(text: str) -> dict:
    from scalebench.rooms.osu.output import parse_osu

    return parse_osu(text).to_dict()


def _checks() -> Sequence[Any]:
    from scalebench.rooms.osu.rules import checks

    return checks()


ROOM = Room(NAME, _parse, _checks, Path(__file__).parent)
