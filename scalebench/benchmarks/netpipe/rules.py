"""The plans of NetPIPECheck (ping-pong) and NetPIPEStreamCheck (one-direction stream): two ranks,
within a node (intra_node) or one on each of two nodes (inter_node); scalebench.interconnect.microbench
lays them out as it does OSU's point-to-point tests."""
from __future__ import annotations

from typing import Any, Mapping

from scalebench.check import CasePlan, CheckSpec, Settings, case_job, fixed_values
from scalebench.interconnect import microbench
from scalebench.site.partition import PartitionSpec, StackSpec

NAMES = ("NetPIPECheck", "NetPIPEStreamCheck")


def _plan(partition: PartitionSpec, stack: StackSpec, params: Mapping[str, Any], settings: Settings) -> CasePlan:
    scale, ranks_per_node = microbench.two_ranks(partition, params)  # type: ignore[misc]
    return CasePlan(case_job(partition, stack, scale, settings, ranks_per_node=ranks_per_node))


CHECKS: tuple[CheckSpec, ...] = tuple(
    CheckSpec(name, ("placement",), ("netpipe",), (), fixed_values(placement=microbench.PLACEMENTS),
              microbench.valid_two_ranks, _plan) for name in NAMES)
