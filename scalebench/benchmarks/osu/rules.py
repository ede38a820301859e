"""The plans of the OSU checks: the point-to-point programs (osu_latency, osu_bw, osu_bibw) on two ranks
within a node or between two (scalebench.interconnect.microbench lays them out, as NetPIPE's), osu_mbw_mr
on 1, 2 and 4 pairs, the collectives on every core of two nodes (or of one). Buffers on the host, or with
-S osu_buffers=device on the GPUs, one per rank (-d cuda|rocm)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from scalebench.check import CasePlan, CheckSpec, Settings, case_job, fixed_values
from scalebench.errors import InputError
from scalebench.interconnect import microbench
from scalebench.knobs import knob
from scalebench.site.jobs import LeftOut
from scalebench.site.partition import PartitionSpec, StackSpec
from scalebench.site.scales import Scale

Params = Mapping[str, Any]
Layout = Callable[[PartitionSpec, Params], tuple[Scale, int | None]]  # (scale, ranks per node; None: every core)
POINT_TO_POINT = ("OSULatencyCheck", "OSUBandwidthCheck", "OSUBiBandwidthCheck")
PAIRS = (1, 2, 4)
COLLECTIVES = ("osu_allreduce", "osu_alltoall", "osu_allgather")
BUFFERS = ("host", "device")


@dataclass(frozen=True)
class OsuSettings:
    osu_buffers: str = knob("host", recorded=True)  # one of BUFFERS: where OSU's messages live on a GPU partition


def pairs_layout(partition: PartitionSpec, placement: str, pairs: int) -> tuple[Scale, int] | str:
    """osu_mbw_mr with `pairs` pairs: half the ranks on each of two nodes (inter_node), or all on one
    (intra_node); or why the partition cannot hold them."""
    two = microbench.two_ranks(partition, {"placement": placement})
    if isinstance(two, str):
        return two
    scale, _ = two
    per_node = pairs if placement == "inter_node" else 2 * pairs
    if per_node > partition.cores_per_node:
        return f"{pairs} pair(s) {placement} need {per_node} cores per node; the nodes have {partition.cores_per_node}"
    return scale, per_node


def _valid_pairs(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    return not isinstance(pairs_layout(partition, params["placement"], params["pairs"]), str)


def _plan(layout: Layout, collective: bool = False) -> Callable[[PartitionSpec, StackSpec, Params, Settings], CasePlan]:
    """An OSU case: host buffers, or device buffers (-d cuda|rocm [D D]) with one GPU per rank bound to it."""
    def plan(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
        buffers = settings.of(OsuSettings).osu_buffers
        if buffers not in BUFFERS:
            raise InputError(f"osu_buffers: {buffers!r} is not one of {', '.join(BUFFERS)}")
        scale, ranks_per_node = layout(partition, params)
        if buffers == "host":
            return CasePlan(case_job(partition, stack, scale, settings, ranks_per_node=ranks_per_node))
        gpus = partition.gpus
        if gpus is None or not gpus.runtime:
            raise LeftOut(f"device buffers need GPUs with their arch (sm_* or gfx*) in the site file; "
                          f"{partition.fullname} has {'none' if gpus is None else 'arch ' + repr(gpus.arch)}")
        per_node = ranks_per_node or gpus.count  # a whole-node collective: one rank per GPU
        if per_node > gpus.count:
            raise LeftOut(f"device buffers: {per_node} ranks per node, {gpus.count} GPUs to give them")
        job = case_job(partition, stack, scale, settings, ranks_per_node=per_node, gpus_per_node=per_node)
        return CasePlan(job, args=("-d", gpus.runtime) if collective else ("-d", gpus.runtime, "D", "D"))
    return plan


def _two_rank_layout(partition: PartitionSpec, params: Params) -> tuple[Scale, int | None]:
    return microbench.two_ranks(partition, params)  # type: ignore[return-value]


def _pairs_layout(partition: PartitionSpec, params: Params) -> tuple[Scale, int | None]:
    return pairs_layout(partition, params["placement"], params["pairs"])  # type: ignore[return-value]


def _whole_nodes_layout(partition: PartitionSpec, params: Params) -> tuple[Scale, int | None]:
    return microbench.whole_nodes_scale(partition.max_nodes), None


CHECKS: tuple[CheckSpec, ...] = (
    *(CheckSpec(name, ("placement",), ("osu",), (), fixed_values(placement=microbench.PLACEMENTS),
                microbench.valid_two_ranks, _plan(_two_rank_layout)) for name in POINT_TO_POINT),
    CheckSpec("OSUMultiBandwidthCheck", ("placement", "pairs"), ("osu",), (),
              fixed_values(placement=microbench.PLACEMENTS, pairs=PAIRS), _valid_pairs, _plan(_pairs_layout)),
    CheckSpec("OSUCollectiveCheck", ("placement", "benchmark"), ("osu",), (),
              fixed_values(benchmark=COLLECTIVES, placement=("whole_nodes",)), microbench.valid_whole_nodes,
              _plan(_whole_nodes_layout, collective=True)),
)
