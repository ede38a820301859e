"""The job of one case: nodes, tasks, threads, node sharing, time limit and launcher options.

Every check applies a JobPlan as it is; `scalebench plan` prints the same plans. The node count is
the scale's: ranks a process grid leaves idle are spread over the nodes (at most
ceil(tasks / nodes) per node), never dropped with a node.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Mapping

from scalebench.errors import InputError, ScalebenchError
from scalebench.site.transport_evidence import EvidencePlan, evidence_plan
from scalebench.site import binding, launch
from scalebench.site.container import ContainerSpec
from scalebench.site.partition import SLURM_SCHEDULERS, PartitionSpec, Reservation, StackSpec
from scalebench.site.scales import Geometry, Scale, geometry


class LeftOut(ScalebenchError):
    """A case the plan leaves out; the message is the reason (a check skips with it)."""


@dataclass(frozen=True)
class JobPlan:
    scale: str
    nodes: int
    ranks_per_node: int  # of the geometry, idle ranks included
    threads_per_rank: int
    tasks: int  # launched
    exclusive: bool = False
    memory: str | None = None  # Slurm --mem value; "0" is all of each node's memory
    hyperthreads: bool | None = None  # None: the scheduler's default
    time_limit_s: int | None = None  # None: the partition's default; with startup_s in it
    gpus_per_node: int = 0
    launcher_options: tuple[str, ...] = ()
    stack: str = ""
    spack_lock: str = ""
    spack_specs: str = ""  # the concrete programs of its spack.lock (scalebench.site.spack_lock)
    env_vars: Mapping[str, str] = field(default_factory=dict)  # the job's own: threads and their placement
    binding: str = ""  # how its ranks are bound, as the results record it
    container: ContainerSpec | None = None  # the image the stack's programs run in
    reservation: Reservation | None = None  # the Slurm reservation it runs in
    constraint: str = ""  # the nodes' features it asks for (--constraint): the partition's job_options
    gpu_request: int = 0  # GPUs per node it asks Slurm for: gpus_per_node, or more where every job must ask
    transport_evidence: EvidencePlan | None = None  # how it proves its stack's transport (None: none declared)
    startup_s: int = 0  # its step's start-up (an image pulled or mounted on every node), in its time limit

    @property
    def tasks_per_node(self) -> int:
        """The most tasks any node runs: idle ranks are spread over the nodes."""
        return math.ceil(self.tasks / self.nodes)

    @property
    def idle_ranks(self) -> int:
        return self.nodes * self.ranks_per_node - self.tasks

    @property
    def geometry(self) -> Geometry:
        return Geometry(self.nodes, self.ranks_per_node, self.threads_per_rank)

    def with_tasks(self, tasks: int) -> JobPlan:
        """The same job launching `tasks` of its ranks (a process grid that leaves some idle)."""
        if not 0 < tasks <= self.nodes * self.ranks_per_node:
            raise InputError(f"tasks: {tasks} is not within the {self.nodes * self.ranks_per_node} ranks of the job")
        if tasks < self.nodes:
            raise LeftOut(f"{tasks} task(s) cannot occupy {self.nodes} nodes")
        return replace(self, tasks=tasks)

    def scheduler_options(self, scheduler: str) -> list[str]:
        """Options a check adds to its job: Slurm gets the node count and memory from the plan (not
        from tasks / tasks per node, which idle ranks would round down)."""
        if scheduler not in SLURM_SCHEDULERS:
            return []
        options = [f"--nodes={self.nodes}"]
        if self.memory is not None:
            options.append(f"--mem={self.memory}")
        if self.reservation is not None:
            options.append(f"--reservation={self.reservation.name}")
        if self.constraint:
            options.append(f"--constraint={self.constraint}")
        return options

    @property
    def step_environment(self) -> str:
        """Why the launched step's environment may not be the batch shell's, where the job then does
        not look for the program ('' when it is the same: scalebench.site.launch)."""
        return launch.step_environment(self.container, self.launcher_options)

    @property
    def rank_variables(self) -> launch.RankVariables | None:
        """What the launched command sets in some of its ranks only: the transport evidence's variables."""
        evidence = self.transport_evidence
        ranks = evidence.ranks(self.tasks) if evidence else ()
        return launch.RankVariables(evidence.variables, ranks) if evidence and ranks and evidence.variables else None

    @property
    def longest_s(self) -> int | None:
        """The longest this job may run: its reservation's length, else None (the partition's)."""
        return self.reservation.time_limit_s if self.reservation else None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.update(tasks_per_node=self.tasks_per_node, idle_ranks=self.idle_ranks,
                    launcher_options=list(self.launcher_options), env_vars=dict(self.env_vars),
                    container=self.container.to_json() if self.container else None,
                    reservation=self.reservation.to_json() if self.reservation else None,
                    transport_evidence=self.transport_evidence.to_json(self.tasks) if self.transport_evidence else None)
        if not self.constraint:  # most partitions have none: plan --json as it was
            del data["constraint"]
        if self.gpu_request == self.gpus_per_node:  # said only where it differs (a GPU partition's policy)
            del data["gpu_request"]
        return data


def job_plan(partition: PartitionSpec, stack: StackSpec, scale: str | Scale, *,
             threads_per_rank: int | None = None, ranks_per_node: int | None = None,
             whole_nodes: bool = False, gpus_per_node: int = 0, environ: Mapping[str, str] | None = None,
             reservation: Reservation | None = None) -> JobPlan:
    """The job of a case at a scale of the partition (by name), or at a layout of its own (a Scale:
    two ranks on two nodes, say) that the partition can hold, on a stack.

    threads_per_rank: None is 1. ranks_per_node: None fills the scale's cores. whole_nodes: the case
    takes its nodes whole (HPL): exclusive, all memory and no hyperthreads as the partition's
    job_options say; every multi-node case does too. environ: the submitting shell's variables (what
    it sets of OpenMP's placement is kept). reservation: one asked for on the command line (else the
    partition's, for its largest cases). LeftOut when the partition cannot run it.
    """
    if isinstance(scale, str):
        name, found = scale, partition.scale(scale)
        if found is None:
            known = ", ".join(s.name for s in partition.scales())
            raise LeftOut(f"scale {name} is not one of {partition.fullname}'s scales ({known})")
        scale = found
    elif scale.num_nodes > partition.max_nodes:
        raise LeftOut(f"{scale.name} needs {scale.num_nodes} nodes; the partition has {partition.max_nodes}")
    elif (scale.cores_per_node or 0) > partition.cores_per_node:
        raise LeftOut(f"{scale.name} needs {scale.cores_per_node} cores per node; the nodes have "
                      f"{partition.cores_per_node}")
    threads = 1 if threads_per_rank is None else threads_per_rank
    if scale.sub_node and ranks_per_node is not None and ranks_per_node * threads > scale.cores_per_node:
        raise LeftOut(f"scale {scale.name} has {scale.cores_per_node} core(s); the requested geometry needs "
                      f"{ranks_per_node * threads} per node")
    if scale.sub_node and threads > scale.cores_per_node:
        raise LeftOut(f"scale {scale.name} has {scale.cores_per_node} core(s), fewer than {threads} threads per rank")
    layout = geometry(scale, partition.cores_per_node, threads, ranks_per_node)
    lock_digest, lock_specs = stack.lock
    if lock_digest.startswith("missing"):
        raise LeftOut(f"stack {stack.stack}: {lock_digest} (spack install the environment first)")
    whole = whole_nodes or layout.nodes > 1
    options = partition.job_options
    stack_options = tuple(option.format(threads_per_rank=layout.threads_per_rank) for option in stack.launcher_options)
    bound = binding.binding(partition.launcher, partition.cpu_bind, stack.features, stack_options,
                            layout.threads_per_rank, {**(environ or {}), **stack.env_vars},
                            layout.ranks_per_node, gpus_per_node)
    memory = ("0" if options.memory == "whole" else options.memory) if whole else None
    launcher_options = (stack_options + bound.launcher_options
                        + launch.end_on_dead_rank(partition.launcher, stack_options)
                        + (stack.container.launcher_options() if stack.container else ()))
    reserved = partition.reservation_for(layout.nodes, reservation)
    startup = stack.startup.seconds(layout.nodes) if launch.step_environment(stack.container, launcher_options) else 0
    return JobPlan(
        scale=scale.name, nodes=layout.nodes, ranks_per_node=layout.ranks_per_node,
        threads_per_rank=layout.threads_per_rank, tasks=layout.ranks,
        exclusive=whole and options.exclusive, memory=memory,
        hyperthreads=options.hyperthreads if whole else None,
        time_limit_s=_default_limit(partition, reserved, startup), gpus_per_node=gpus_per_node,
        launcher_options=launcher_options,
        stack=stack.stack, spack_lock=lock_digest, spack_specs=lock_specs, env_vars=bound.env_vars,
        binding=bound.summary, container=stack.container, reservation=reserved,
        transport_evidence=evidence_plan(str(stack.extras.get("transport") or ""), stack.env_vars),
        startup_s=startup, constraint=options.constraint,
        gpu_request=partition.gpus.requested(gpus_per_node, whole) if partition.gpus else gpus_per_node)


def _default_limit(partition: PartitionSpec, reservation: Reservation | None, startup_s: int) -> int | None:
    """A job's time limit before its check sets one: the partition's default (None) or, where its step
    starts late, that default and the start-up, within the longest the job may run."""
    if not startup_s or partition.time_limit_s is None:
        return None
    limit = partition.time_limit_s + startup_s
    longest = (reservation.time_limit_s if reservation else None) or partition.max_time_limit_s
    return min(limit, longest) if longest else limit
