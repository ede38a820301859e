"""What the interconnect microbenchmarks share (the checks in reframe_tests/microbench.py): curves per
message size as figures named <figure>_<bytes> (the "sized" figures of scalebench/data/benchmarks.yaml),
their summaries (peak, n1/2), the layouts of two-rank and whole-node tests, the figures and problems of a
job; and hpcc's ping-pong and ring figures (HPCCNetworkCheck). NetPIPE's and OSU's own parts are rooms:
scalebench/rooms/netpipe, scalebench/rooms/osu."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from scalebench.errors import InputError, ParseError
from scalebench.interconnect import curves
from scalebench.hpl.hpcc_output import HpccOutput
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


# hpcc Summary key -> (figure, unit); latencies in us, bandwidths in GB/s as hpcc prints them.
HPCC_NETWORK_KEYS = {
    "MinPingPongLatency_usec": ("pingpong_latency_min", "us"),
    "AvgPingPongLatency_usec": ("pingpong_latency_avg", "us"),
    "MaxPingPongLatency_usec": ("pingpong_latency_max", "us"),
    "MinPingPongBandwidth_GBytes": ("pingpong_bandwidth_min", "GB/s"),
    "AvgPingPongBandwidth_GBytes": ("pingpong_bandwidth_avg", "GB/s"),
    "MaxPingPongBandwidth_GBytes": ("pingpong_bandwidth_max", "GB/s"),
    "NaturallyOrderedRingLatency_usec": ("natural_ring_latency", "us"),
    "RandomlyOrderedRingLatency_usec": ("random_ring_latency", "us"),
    "NaturallyOrderedRingBandwidth_GBytes": ("natural_ring_bandwidth", "GB/s"),
    "RandomlyOrderedRingBandwidth_GBytes": ("random_ring_bandwidth", "GB/s"),
}


def hpcc_network_figures(output: HpccOutput) -> Figures:
    """hpcc's latency/bandwidth section from its last complete Summary, with the random-ring /
    ping-pong latency ratio; ParseError naming the first key missing or not finite."""
    summary = output.last_summary or {}
    out: Figures = {}
    for key, (figure, unit) in HPCC_NETWORK_KEYS.items():
        value = finite_float(summary.get(key))
        if value is None:
            raise ParseError(f"hpcc Summary: {key} is missing or not finite ({excerpt(summary.get(key))})")
        out[figure] = (value, unit)
    try:
        ratio = curves.ring_vs_pingpong_ratio(out["random_ring_latency"][0], out["pingpong_latency_avg"][0])
    except InputError:
        ratio = None  # a zero ping-pong latency cannot be a denominator
    if ratio is not None:
        out["random_ring_over_pingpong"] = (ratio, "ratio")
    return out


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
    """The `valid` of a two-rank check (scalebench.site_plan.CheckSpec): the partition can place them."""
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


def hpcc_network_measured(output: HpccOutput, tasks: int) -> Measured:
    procs = (output.last_summary or {}).get("CommWorldProcs")
    problems = () if procs == tasks else (f"hpcc reports {procs} processes, {tasks} requested (wrong MPI launcher?)",)
    return Measured(hpcc_network_figures(output), problems)


def hpcc_network_input(nodes: int, ranks_per_node: int, memory_per_node: int, hpl_n: int) -> str:
    """hpccinf.txt for hpcc's network section: HPL at about `hpl_n` (hpcc sizes its other kernels
    from it), so the run takes seconds; at least one small block per process column on many ranks."""
    from scalebench.hpl import deck
    from scalebench.hpl.grid import process_grid

    nb = HPCC_NETWORK_NB
    _, q = process_grid(nodes * ranks_per_node)
    request = deck.DeckRequest(nodes=nodes, ranks_per_node=ranks_per_node, memory_per_node=memory_per_node,
                               nb=nb, max_n=max(hpl_n, nb * q), max_n_reason="hpcc network check: HPL kept small")
    return deck.hpccinf_txt(deck.make_deck(request))


# A small block keeps the tiny HPL of the network check valid on hundreds of ranks.
HPCC_NETWORK_NB = 64
