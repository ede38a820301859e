"""The plan of LAMMPSCheck: every workload of reframe_tests/inputs/lammps/workloads.yaml at every
scale of the system, strong and weak scaling, laid out as every application case is
(scalebench.site_plan.plan_app)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from scalebench.rooms.lammps.inputs import load_lammps_workloads
from scalebench.site.partition import PartitionSpec
from scalebench.site.scales import SCALING_MODES

if TYPE_CHECKING:
    from scalebench.site_plan import CheckSpec

CHECK = "LAMMPSCheck"


def _values(partitions: Sequence[PartitionSpec]) -> Mapping[str, Sequence[Any]]:
    from scalebench.site_plan import system_scale_names

    return {"scale": system_scale_names(partitions), "workload": list(load_lammps_workloads()),
            "scaling": list(SCALING_MODES)}


def checks() -> tuple[CheckSpec, ...]:
    from scalebench.site_plan import CheckSpec, has_scale, plan_app

    return (CheckSpec(CHECK, ("scale", "workload", "scaling"), ("lammps",), (), _values, has_scale,
                      plan_app),)
