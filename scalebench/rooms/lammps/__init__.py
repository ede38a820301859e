"""LAMMPS: timesteps/s, atom-steps/s and the Comm share at each scale, strong and weak scaling. The
check is reframe_tests/lammps.py, its input templates reframe_tests/inputs/lammps/; it reports in
the shared applications section (scalebench/reporting/sections/applications.py) beside OpenFOAM."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from scalebench.room import Room

NAME = "lammps"


def _parse(text: str) -> dict:
    from scalebench.rooms.lammps.output import parse_lammps

    return parse_lammps(text).to_dict()


def _checks() -> Sequence[Any]:
    from scalebench.rooms.lammps.rules import checks

    return checks()


ROOM = Room(NAME, _parse, _checks, Path(__file__).parent)
