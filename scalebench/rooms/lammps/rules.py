"""The plan of LAMMPSCheck: every workload of reframe_tests/inputs/lammps/workloads.yaml at every
scale of the system, strong and weak scaling, laid out as every application case is
(scalebench.site_plan.app_check)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from scalebench.rooms.lammps.inputs import load_lammps_workloads

if TYPE_CHECKING:
    from scalebench.site_plan import CheckSpec


def checks() -> tuple[CheckSpec, ...]:
    from scalebench.site_plan import app_check

    return (app_check("LAMMPSCheck", "workload", load_lammps_workloads, "lammps"),)
