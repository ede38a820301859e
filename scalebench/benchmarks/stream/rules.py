"""The plan of STREAMCheck: one job on one whole node (exclusive), one rank with a thread on every
core, each array a share of the node's memory (rules.yaml). Run it on every node of a partition with
ReFrame's --distribute: the check has no dependencies.

The rank is bound to all the node's cores and OpenMP places a thread on each (scalebench.site.binding:
OMP_PLACES=cores), so the threads spread over every memory controller; a node's bandwidth is what all
its cores draw at once, which is the figure a memory specification is held to.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from scalebench import loaders
from scalebench.check import CasePlan, CheckSpec, Settings, fixed_values, has_scale
from scalebench.errors import InputError
from scalebench.knobs import knob
from scalebench.site.jobs import job_plan
from scalebench.site.partition import PartitionSpec, StackSpec
from scalebench.units import format_size

CHECK = "STREAMCheck"
SCALE = "1_node"
ARRAYS = 3
MAX_ELEMENTS = 2**31 - 1  # hpcc's STREAM indexes its arrays with an int
RULES = Path(__file__).with_name("rules.yaml")


@dataclass(frozen=True)
class StreamSettings:
    array_elements: int | None = knob(None, recorded=True)  # doubles per array per rank; None: rules.yaml's share


@dataclass(frozen=True)
class ArrayRules:
    memory_fraction: float
    min_elements: int

    def elements(self, memory_per_node: int, ranks_per_node: int = 1) -> int:
        """Doubles per array per rank: the three arrays of every rank take memory_fraction of the node."""
        share = int(self.memory_fraction * memory_per_node / (ARRAYS * 8 * ranks_per_node))
        return min(MAX_ELEMENTS, max(self.min_elements, share))


@functools.cache
def array_rules() -> ArrayRules:
    data = loaders.load_yaml(RULES, "STREAM rules")
    fraction, least = data.get("array_memory_fraction"), data.get("min_array_elements")
    if not (isinstance(fraction, float) and 0 < fraction < 1 and isinstance(least, int) and least > 0):
        raise ValueError(f"{RULES}: array_memory_fraction must be a fraction, min_array_elements a count")
    return ArrayRules(fraction, least)


def _plan(partition: PartitionSpec, stack: StackSpec, params: Mapping[str, Any], settings: Settings) -> CasePlan:
    job = job_plan(partition, stack, params["scale"], threads_per_rank=partition.cores_per_node, ranks_per_node=1,
                   whole_nodes=True, environ=settings.environ, reservation=settings.reservation)
    elements = settings.of(StreamSettings).array_elements or array_rules().elements(partition.memory_per_node)
    if not 0 < elements <= MAX_ELEMENTS:
        raise InputError(f"array_elements: {elements} is not a count of doubles from 1 to {MAX_ELEMENTS}")
    note = (f"{elements} doubles per array, 3 arrays ({format_size(ARRAYS * 8 * elements)}) per rank, "
            f"1 rank x {job.threads_per_rank} threads")
    return CasePlan(job, note=note, args=(str(elements),))


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(CHECK, ("scale",), ("stream",), (), fixed_values(scale=(SCALE,)), has_scale, _plan),)
