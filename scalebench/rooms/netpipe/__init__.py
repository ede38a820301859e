"""NetPIPE: one-way latency and bandwidth over message sizes between two ranks (ping-pong), and the
message rate of a one-direction stream, within a node or between two. The checks are NetPIPECheck and
NetPIPEStreamCheck in reframe_tests/microbench.py; they report in the shared microbenchmark section
(scalebench/reporting/sections/microbenchmarks.py), so this room has none of its own."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from scalebench.room import Room

NAME = "netpipe"


def _parse(text: str) -> dict:
    from scalebench.rooms.netpipe.output import parse_netpipe

    return parse_netpipe(text).to_dict()


def _checks() -> Sequence[Any]:
    from scalebench.rooms.netpipe.rules import checks

    return checks()


ROOM = Room(NAME, _parse, _checks, Path(__file__).parent)
