"""What the interconnect microbenchmarks share (the checks in reframe_tests/microbench.py): curves per
message size as figures named <figure>_<bytes> (the "sized" figures of scalebench/data/benchmarks.yaml),
their summaries (peak, n1/2), the layouts of two-rank and whole-node tests, the figures and problems of a
job. NetPIPE's, OSU's and hpcc's own parts are benchmarks: scalebench/benchmarks/netpipe, scalebench/benchmarks/osu,
scalebench/benchmarks/hpcc."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from scalebench.errors import InputError
from scalebench.interconnect import curves
from scalebench.site.partition import PartitionSpec
from scalebench.site.scales import PLACEMENTS, Scale, node_scale
from scalebench.validation import excerpt

Figures = dict[str, tuple[float, str]]  # name -> (value, unit)


def finite_float(value: object) -> float | None:
    """The value as a finite float; None when it is not a finite number (a printed nan, a refused null)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def sized(figure: str, curve: Mapping[int, float], unit: str) -> Figures:
    """{figure_<bytes>: (value, unit)} for every finite point of a curve."""
    return {f"{figure}_{size}": (value, unit) for size, value in sorted(curve.items())
            if finite_float(value) is not None}


def curve_summary(bandwidth: Mapping[int, float], latency: Mapping[int, float] | None = None) -> Figures:
    """Peak bandwidth, n1/2 (when the curve crosses half its peak) and the smallest latency."""
    out: Figures = {}
    if latency:
        out["min_latency"] = (min(latency.values()), "us")
    if len(bandwidth) >= 2:
        half = curves.half_power_point(sorted(bandwidth.items()))
        out["peak_bandwidth"] = (half.peak_bandwidth, "MB/s")
        if half.n_half is not None:
            out["n_half"] = (half.n_half, "B")
    return out


def n_half_figure(bandwidth: Mapping[int, float]) -> Figures:
    """n1/2 alone (a curve whose peak is already one of its sized figures)."""
    return {k: v for k, v in curve_summary(bandwidth).items() if k == "n_half"}


def whole_nodes_scale(max_nodes: int) -> Scale:
    """Every core of two nodes where the partition has them, else of one (rings, collectives)."""
    return node_scale(2 if max_nodes >= 2 else 1)


def two_rank_layout(placement: str, max_nodes: int, cores_per_node: int) -> tuple[Scale, int] | str:
    """(scale, ranks per node) of a two-process test, or why the placement cannot run."""
    if placement not in PLACEMENTS:
        raise InputError(f"placement: {excerpt(placement)} is not one of {', '.join(PLACEMENTS)}")
    if placement == "inter_node":
        return (node_scale(2), 1) if max_nodes >= 2 else "inter_node needs 2 nodes; the partition has 1"
    return (node_scale(1), 2) if cores_per_node >= 2 else "intra_node needs 2 cores per node"


def two_ranks(partition: PartitionSpec, params: Mapping[str, Any]) -> tuple[Scale, int] | str:
    """two_rank_layout of a variant's `placement` on a partition."""
    return two_rank_layout(params["placement"], partition.max_nodes, partition.cores_per_node)


def valid_two_ranks(partition: PartitionSpec, params: Mapping[str, Any], settings: Any = None) -> bool:
    """The `valid` of a two-rank check (scalebench.check.CheckSpec): the partition can place them."""
    return not isinstance(two_ranks(partition, params), str)


def valid_whole_nodes(partition: PartitionSpec, params: Mapping[str, Any], settings: Any = None) -> bool:
    """The `valid` of a whole-node check: at least two cores in all."""
    return whole_nodes_scale(partition.max_nodes).num_nodes * partition.cores_per_node >= 2


@dataclass(frozen=True)
class Measured:
    """A microbenchmark job's figures, and every reason its output is not a valid measurement."""

    figures: Figures
    problems: tuple[str, ...] = ()
    hosts: str = ""  # NetPIPE: its two ranks' hosts, in rank order
    placement: str = ""  # NetPIPE: where the two ranks really ran
