"""Named scales and the task geometry (nodes x ranks x threads) they give on a partition."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import yaml

from scalebench import paths

from scalebench.site import rundir as provenance
from scalebench.errors import InputError


@dataclass(frozen=True)
class Scale:
    name: str
    num_nodes: int
    cores_per_node: int | None = None  # None: every core of the node


@dataclass(frozen=True)
class Geometry:
    nodes: int
    ranks_per_node: int
    threads_per_rank: int

    @property
    def ranks(self) -> int:
        return self.nodes * self.ranks_per_node

    @property
    def cores_per_node(self) -> int:
        return self.ranks_per_node * self.threads_per_rank


def load_scales() -> list[Scale]:
    return [Scale(**item) for item in yaml.safe_load((paths.PACKAGE_DATA / "scales.yaml").read_text())]


def scale_names() -> list[str]:
    return [scale.name for scale in load_scales()]


def get_scale(name: str) -> Scale:
    for scale in load_scales():
        if scale.name == name:
            return scale
    raise InputError(f"scale: unknown scale {name!r} (known: {', '.join(scale_names())})")


def skip_reason(scale: Scale, cores_per_node: int, max_nodes: int,
                cores_needed_per_node: int | None = None) -> str | None:
    """Why a partition cannot (or need not) run this scale; None when it can.

    cores_needed_per_node: what an explicit ranks x threads geometry needs; a sub-node scale
    smaller than that is skipped (the whole-node case is a user error, raised by geometry()).
    """
    if scale.num_nodes > max_nodes:
        return f"scale {scale.name} needs {scale.num_nodes} nodes; the partition has {max_nodes}"
    if scale.cores_per_node is not None:
        if scale.cores_per_node > cores_per_node:
            return (f"scale {scale.name} needs {scale.cores_per_node} cores per node; "
                    f"the partition's nodes have {cores_per_node}")
        if scale.cores_per_node == cores_per_node:
            return f"scale {scale.name} is the whole node: run as 1_node"
        if cores_needed_per_node and cores_needed_per_node > scale.cores_per_node:
            return (f"scale {scale.name} has {scale.cores_per_node} core(s); the requested geometry "
                    f"needs {cores_needed_per_node} per node")
    return None


def geometry(scale: Scale, cores_per_node: int, threads_per_rank: int = 1,
             ranks_per_node: int | None = None) -> Geometry:
    """Ranks per node fill the scale's cores with `threads_per_rank` threads each, unless given."""
    if cores_per_node <= 0:
        raise InputError(f"cores_per_node: must be positive, got {cores_per_node}")
    if threads_per_rank <= 0:
        raise InputError(f"threads_per_rank: must be positive, got {threads_per_rank}")
    cores = scale.cores_per_node or cores_per_node
    if ranks_per_node is None:
        if threads_per_rank > cores:
            raise InputError(f"threads_per_rank: {threads_per_rank} exceeds the {cores} cores of scale {scale.name}")
        ranks_per_node = cores // threads_per_rank
    if ranks_per_node <= 0:
        raise InputError(f"ranks_per_node: must be positive, got {ranks_per_node}")
    limit = min(cores, cores_per_node)  # a sub-node scale may use only its own cores
    if ranks_per_node > limit:
        raise InputError(f"ranks_per_node: {ranks_per_node} exceeds the {limit} cores of scale {scale.name}")
    if ranks_per_node * threads_per_rank > limit:
        raise InputError(f"threads_per_rank: {ranks_per_node} ranks x {threads_per_rank} threads exceeds "
                         f"the {limit} cores of scale {scale.name}")
    return Geometry(scale.num_nodes, ranks_per_node, threads_per_rank)


# --- where a check runs: geometry, stack, launcher options ---------------------------------------

@dataclass(frozen=True)
class TaskSetup:
    """What a check sets for its scale on a partition and stack; `skip` says why it cannot run."""

    skip: str | None
    attributes: dict[str, Any] = field(default_factory=dict)  # check attribute -> value
    launcher_options: list[str] = field(default_factory=list)
    geometry: Geometry | None = None

    def apply(self, check: Any) -> None:
        """Skip the check with the reason, or set its task geometry, stack and launcher options."""
        check.skip_if(self.skip is not None, self.skip)
        for name, value in self.attributes.items():
            setattr(check, name, value)
        check.job.launcher.options = list(self.launcher_options)


def task_setup(scale_name: str, extras: Mapping[str, Any], num_cores: int, environ_name: str,
               env_extras: Mapping[str, Any], threads_per_rank: int = 1,
               ranks_per_node: int | None = None) -> TaskSetup:
    """The nodes x ranks x threads of a named scale on a partition (extras give cores_per_node and
    max_nodes; skip_reason and geometry decide), the stack's name and Spack lock digest, and the stack's
    launcher options with {threads_per_rank} filled in; or the reason the case is skipped."""
    scale = get_scale(scale_name)
    cores = int(extras.get("cores_per_node") or num_cores)
    needed = ranks_per_node * threads_per_rank if ranks_per_node else None
    reason = skip_reason(scale, cores, int(extras.get("max_nodes", 1)), needed)
    if reason is not None:
        return TaskSetup(reason)
    layout = geometry(scale, cores, threads_per_rank, ranks_per_node)
    stack = str(env_extras.get("stack", environ_name))
    lock = env_extras.get("spack_lock")
    lock_digest = provenance.file_digest(lock) if lock else ""
    if lock_digest.startswith("missing"):
        return TaskSetup(f"stack {stack}: {lock_digest} (spack install the environment first)")
    return TaskSetup(None, {
        "num_nodes": layout.nodes, "num_tasks": layout.ranks,
        "num_tasks_per_node": layout.ranks_per_node, "num_cpus_per_task": layout.threads_per_rank,
        "stack": stack, "spack_lock": lock_digest,
    }, [str(opt).format(threads_per_rank=layout.threads_per_rank)
        for opt in env_extras.get("launcher_options", [])], layout)
