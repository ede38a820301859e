"""The screening jobs of a partition: its nodes (all of them, or a Slurm node list) in chunks of at
most `screen_chunk_nodes` (site file; default site_configs/screening.yaml), balanced, each node in
exactly one; each chunk one job of one rank per core whose wall time the probe's durations set.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Mapping, Sequence

from scalebench.hpl import blas
from scalebench.programs import missing_binary, resolve_binary
from scalebench.screening.probe import ProbeSettings, load_settings
from scalebench.site import hostlist as site_hostlist
from scalebench.site.blas import stack_blas, threads_variables
from scalebench.site.jobs import JobPlan, LeftOut, job_plan
from scalebench.site.partition import SCREEN_MIN_NODES, PartitionSpec, Reservation, StackSpec
from scalebench.site.scales import node_scale
from scalebench.units import format_duration, format_size

# A job holds at most this share of a node's memory: the rest is the system's and the MPI's.
MEMORY_SHARE = 0.5
MAX_NODES_LISTED = 10**6


@dataclass(frozen=True)
class ScreeningJob:
    PLAN_KEY: ClassVar[str] = "screening"

    chunk: int  # 1-based
    chunks: int
    nodes: int
    names: tuple[str, ...]  # the chunk's nodes when known (a node list given or found), else ()
    predicted_s: float
    probe_args: tuple[str, ...]
    binary: str
    missing: str  # why the repository's probe cannot run, else ""
    env_vars: tuple[tuple[str, str], ...] = ()  # one BLAS thread per rank, the BLAS kernel HPL gets

    @property
    def hostlist(self) -> str:
        return hostlist(self.names)

    def to_json(self) -> dict[str, Any]:
        return {"chunk": self.chunk, "chunks": self.chunks, "nodes": self.nodes, "nodelist": self.hostlist,
                "predicted_s": round(self.predicted_s, 1), "binary": self.binary, "probe_args": list(self.probe_args),
                "env_vars": dict(self.env_vars)}


def chunk_nodes(partition: PartitionSpec, settings: ProbeSettings) -> int:
    return int(partition.screen.get("chunk_nodes") or settings.chunk_nodes)


def chunk_count(nodes: int, per_job: int) -> int:
    return max(1, math.ceil(nodes / per_job))


def chunk_sizes(nodes: int, chunks: int) -> list[int]:
    """`nodes` split into `chunks` sizes differing by at most one, larger first."""
    base, extra = divmod(nodes, chunks)
    return [base + (1 if i < extra else 0) for i in range(chunks)]


def planned_chunks(partition: PartitionSpec, settings: ProbeSettings | None = None) -> int:
    """How many screening jobs cover the partition's max_nodes."""
    settings = settings or load_settings()
    return chunk_count(partition.max_nodes, chunk_nodes(partition, settings))


def chunks_for(partition: PartitionSpec, names: Sequence[str] = (), settings: ProbeSettings | None = None) -> int:
    """How many jobs screen the partition's nodes, or `names` when given (a node list, or the nodes
    the scheduler has). Never more than max_nodes plans (ReFrame made that many cases): more nodes
    than the site file says make each job a little larger (plan_screening refuses one beyond
    max_nodes, naming it)."""
    settings = settings or load_settings()
    total = len(names) or partition.max_nodes
    return min(planned_chunks(partition, settings), chunk_count(total, chunk_nodes(partition, settings)))


def chunk_of(partition: PartitionSpec, chunk: int, names: Sequence[str], settings: ProbeSettings) -> tuple[int, int, tuple[str, ...]]:
    """(chunks, nodes of this chunk, their names) for the partition's nodes or `names` (chunks_for)."""
    chunks = chunks_for(partition, names, settings)
    total = len(names) or partition.max_nodes
    if chunk > chunks:
        raise LeftOut(f"chunk {chunk}: {total} node(s) fill {chunks} job(s) of at most "
                      f"{chunk_nodes(partition, settings)}")
    sizes = chunk_sizes(total, chunks)
    start = sum(sizes[:chunk - 1])
    return chunks, sizes[chunk - 1], tuple(names[start:start + sizes[chunk - 1]])


def plan_screening(partition: PartitionSpec, stack: StackSpec, chunk: int, names: Sequence[str] = (),
                   settings: ProbeSettings | None = None, environ: Mapping[str, str] | None = None,
                   reservation: Reservation | None = None) -> tuple[JobPlan, ScreeningJob]:
    """The job of one chunk: one rank per core of every node, exclusive, within the probe's time
    limit (and the partition's or its reservation's); LeftOut with the reason when it cannot be.
    environ and reservation as for job_plan."""
    settings = settings or load_settings()
    chunks, nodes, chunk_names = chunk_of(partition, chunk, names, settings)
    if nodes < SCREEN_MIN_NODES:
        raise LeftOut(f"{nodes} node(s) in chunk {chunk}: screening compares a node with the median of at least "
                      f"{SCREEN_MIN_NODES}")
    if nodes > partition.max_nodes:
        raise LeftOut(f"{nodes} nodes in one job; the partition has {partition.max_nodes} (max_nodes)")
    job = job_plan(partition, stack, node_scale(nodes), whole_nodes=True, environ=environ, reservation=reservation)
    memory = job.ranks_per_node * settings.memory_per_rank()
    if memory > MEMORY_SHARE * partition.memory_per_node:
        raise LeftOut(f"the probe needs {format_size(memory)} per node ({job.ranks_per_node} ranks), more than "
                      f"{MEMORY_SHARE:.0%} of {format_size(partition.memory_per_node)}: lower dgemm_n or stream_n in "
                      f"site_configs/screening.yaml")
    limit = settings.time_limit_s + job.startup_s  # its image pulled or mounted on every node first
    longest = job.longest_s or partition.max_time_limit_s
    if longest:
        limit = min(limit, longest)
    predicted = settings.predicted_s(nodes)
    if predicted + job.startup_s > limit:
        started = f" after a start-up of {format_duration(job.startup_s)}" if job.startup_s else ""
        raise LeftOut(f"the probe takes {format_duration(predicted)}{started}, longer than the time limit "
                      f"{format_duration(limit)}")
    binary = str(stack.extras.get("screen_binary") or "screen-probe")  # a relative path is under the repository
    # One BLAS thread per rank, and the BLAS kernel policy of the HPL DGEMM it compares with.
    linked = stack_blas(stack.extras.get("blas"), job.spack_specs, resolve_binary(binary), stack.env_vars, environ)
    env = {name: "1" for name in ("OMP_NUM_THREADS", *threads_variables(linked.runs.name))}
    coretype = blas.choose_coretype(stack.env_vars, environ or {}, partition.microarch, linked)
    if coretype.value:
        env["OPENBLAS_CORETYPE"] = coretype.value
    screening = ScreeningJob(chunk, chunks, nodes, chunk_names, predicted, tuple(settings.args()),
                             resolve_binary(binary), missing_binary(binary, "screening probe") or "", tuple(env.items()))
    return replace(job, time_limit_s=limit), screening


# --- Slurm host lists ----------------------------------------------------------------------------

def natural(name: str) -> tuple[object, ...]:
    """n2 before n10."""
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def hostlist(nodes: Sequence[str]) -> str:
    """Slurm's compressed form: n[1-3,7],gpu01, c[1-2]n[01-04]. Numbers keep their zero padding."""
    return site_hostlist.fold(nodes)


def expand_hostlist(text: str, where: str = "node list") -> list[str]:
    """Slurm's node list (n[1-3,7],gpu01, c[1-2]n[01-04]) as names, in the order given, each once;
    InputError naming what is not one. At most MAX_NODES_LISTED names."""
    return site_hostlist.expand(text, where, MAX_NODES_LISTED)
