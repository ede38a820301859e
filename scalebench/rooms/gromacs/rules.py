"""The plan of GROMACSCheck: every workload of workloads.yaml at every scale of the system, strong and weak
scaling, each case one job laid out as every application case is (scalebench.site_plan.app_check): its
ranks are MPI ranks, its threads per rank mdrun's OpenMP threads."""
from __future__ import annotations

from typing import TYPE_CHECKING

from scalebench.rooms.gromacs.inputs import load_workloads

if TYPE_CHECKING:
    from scalebench.site_plan import CheckSpec


def checks() -> tuple[CheckSpec, ...]:
    from scalebench.site_plan import app_check

    return (app_check("GROMACSCheck", "workload", load_workloads, "gromacs"),)
