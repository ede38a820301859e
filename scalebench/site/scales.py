"""Named scales of a partition and the task geometry (nodes x ranks x threads) they give.

A scale is a node count (`4_nodes`), or a number of cores of one node (`16_cores`) for sub-node
scaling. A partition's scales come from its site file (`scales:`): node counts as a list or as
powers of two up to max_nodes, the full partition, and sub-node core counts. A scale the partition
cannot run is not one of its scales.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from scalebench.errors import InputError
from scalebench.validation import excerpt, require_count


@dataclass(frozen=True)
class Scale:
    name: str
    num_nodes: int
    cores_per_node: int | None = None  # None: every core of the node

    @property
    def sub_node(self) -> bool:
        return self.cores_per_node is not None


def node_scale(nodes: int) -> Scale:
    return Scale(f"{nodes}_node" if nodes == 1 else f"{nodes}_nodes", nodes)


def core_scale(cores: int) -> Scale:
    return Scale(f"{cores}_core" if cores == 1 else f"{cores}_cores", 1, cores)


def _ordering(scale: Scale) -> tuple[int, int]:
    return (scale.num_nodes, scale.cores_per_node or 0) if scale.sub_node else (scale.num_nodes, 1 << 62)


@dataclass(frozen=True)
class ScaleSpec:
    """What a site file's `scales:` says; `scales()` turns it into a partition's scales."""

    nodes: tuple[int, ...] | str = "powers_of_two"
    full: bool = True
    cores: tuple[int, ...] | str = "auto"

    @classmethod
    def from_site(cls, data: Mapping[str, Any] | None) -> ScaleSpec:
        """From a site file's `scales:` (its shape checked by the site schema) or from to_json()."""
        data = data or {}
        nodes, cores = data.get("nodes", "powers_of_two"), data.get("cores", "auto")
        return cls(nodes if isinstance(nodes, str) else tuple(nodes), data.get("full", True),
                   cores if isinstance(cores, str) else tuple(cores))

    def to_json(self) -> dict[str, Any]:
        return {"nodes": self.nodes if isinstance(self.nodes, str) else list(self.nodes), "full": self.full,
                "cores": self.cores if isinstance(self.cores, str) else list(self.cores)}

    def scales(self, max_nodes: int, cores_per_node: int) -> list[Scale]:
        """The partition's scales, smallest first: sub-node core counts, then node counts.

        cores "auto": powers of two below the node's cores on a single-node partition (a workstation
        scales over its cores), none on a cluster. A count beyond the partition is not a scale.
        """
        require_count("max_nodes", max_nodes)
        require_count("cores_per_node", cores_per_node)
        nodes = set(_powers_of_two(max_nodes) if self.nodes == "powers_of_two" else self.nodes)
        if self.full:
            nodes.add(max_nodes)
        if self.cores == "auto":
            cores = _powers_of_two(cores_per_node - 1) if max_nodes == 1 and cores_per_node > 1 else []
        else:
            cores = _powers_of_two(cores_per_node - 1) if self.cores == "powers_of_two" else self.cores
        found = [node_scale(n) for n in nodes if n <= max_nodes]
        found += [core_scale(c) for c in set(cores) if c < cores_per_node]  # all cores: the 1_node scale
        return sorted(found, key=_ordering)


def _powers_of_two(limit: int) -> list[int]:
    return [1 << k for k in range(limit.bit_length()) if 1 << k <= limit]


SCALING_MODES = ("strong", "weak")
# Where the two ranks of a point-to-point microbenchmark sit.
PLACEMENTS = ("intra_node", "inter_node")


def check_scaling(mode: str) -> str:
    """strong: the same problem at every scale; weak: the problem grows with the scale."""
    if mode not in SCALING_MODES:
        raise InputError(f"scaling: {excerpt(mode)} is not one of {', '.join(SCALING_MODES)}")
    return mode


def scaling_series(scales: list[Scale], max_nodes: int) -> list[Scale]:
    """The scales a scaling figure compares: node counts on a cluster, a machine's cores otherwise."""
    return [s for s in scales if not s.sub_node] if max_nodes > 1 else list(scales)


def scale_names(scale_lists: Iterable[Iterable[Scale]]) -> list[str]:
    """Every scale of the given partitions once, smallest first (a check's `scale` parameter)."""
    found = {scale.name: scale for scales in scale_lists for scale in scales}
    return [scale.name for scale in sorted(found.values(), key=_ordering)]


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
