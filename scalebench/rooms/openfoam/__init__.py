"""OpenFOAM: seconds per time step and solver time at each scale, strong and weak scaling, of tutorial
cases sized for the job (cases.py; reframe_tests/inputs/openfoam/cases.yaml). The check is
reframe_tests/openfoam.py; it reports in the shared applications section (benchmarks.yaml `section`),
so the room has no section of its own."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from scalebench.room import Room

NAME = "openfoam"


def _parse(text: str) -> dict:
    from scalebench.rooms.openfoam.output import parse_openfoam

    return parse_openfoam(text).to_dict()


def _checks() -> Sequence[Any]:
    from scalebench.rooms.openfoam.rules import checks

    return checks()


ROOM = Room(NAME, _parse, _checks, Path(__file__).parent)
