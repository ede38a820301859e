"""The plans of HPL's checks: HPLCheck at every scale of the system (scalebench.hpl.case_plan),
HPLTuneCheck's sweep on one node, and HPLScalingCheck, which runs no job and compares the HPLCheck
cases of a partition's series. Its knobs are HplSettings's (scalebench.hpl.case_plan)."""
from __future__ import annotations

from typing import Any, Mapping

from scalebench.check import CasePlan, CheckSpec, Settings, always, fixed_values, has_scale, system_scales
from scalebench.hpl.case_plan import HplSettings, plan_hpl, plan_tuning
from scalebench.site.partition import PartitionSpec, StackSpec
from scalebench.site.scales import Scale, scaling_series

Params = Mapping[str, Any]


def hpl_series(partition: PartitionSpec) -> list[Scale]:
    """The HPL cases HPLScalingCheck compares on a partition."""
    return scaling_series(partition.scales(), partition.max_nodes)


def _plan_hpl(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
    plan = plan_hpl(partition, stack, params["scale"], settings.of(HplSettings), settings.environ, settings.reservation)
    return CasePlan(plan.job, plan)


def _plan_tuning(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
    plan = plan_tuning(partition, stack, settings.of(HplSettings), settings.environ, nbs=settings.sweep_nbs,
                       reservation=settings.reservation)
    return CasePlan(plan.job, plan)


def _plan_scaling(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
    names = ", ".join(s.name for s in hpl_series(partition))
    return CasePlan(None, note=f"speedup and efficiency over HPLCheck at {names}")


def _valid_scaling(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    return len(hpl_series(partition)) >= 2


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("HPLCheck", ("scale",), ("hpl",), ("hpl",), system_scales, has_scale, _plan_hpl),
    CheckSpec("HPLTuneCheck", ("scale",), ("hpl",), ("hpl",), fixed_values(scale=("1_node",)), always, _plan_tuning,
              directory="reframe_tests/tuning"),
    CheckSpec("HPLScalingCheck", (), ("hpl",), ("hpl",), fixed_values(), _valid_scaling, _plan_scaling),
)
