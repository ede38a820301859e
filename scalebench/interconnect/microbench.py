"""Interconnect microbenchmark figures for the checks in reframe_tests/microbench.py: curves per
message size as figures named <figure>_<bytes> (the "sized" figures of scalebench/data/benchmarks.yaml),
hpcc's ping-pong and ring figures, and the process-count checks that catch a wrong MPI launcher."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping

from scalebench.errors import InputError, ParseError
from scalebench.interconnect import curves
from scalebench.parse.hpcc import HpccOutput
from scalebench.parse.netpipe import NetpipeOutput
from scalebench.parse.osu import OsuTable
from scalebench.site.scales import PLACEMENTS, Scale, node_scale
from scalebench.validation import excerpt

Figures = dict[str, tuple[float, str]]  # name -> (value, unit)

# NetPIPE's "Mbps" is 2**20 bits/s; OSU and the reports use MB/s = 1e6 bytes/s.
NETPIPE_MBPS_TO_MB_PER_S = 2**20 / 8 / 1e6


# NetPIPE prints "<rank>: <hostname>" for each of its two processes before measuring; both write to
# one output unbuffered, so a rank's line may start in the middle of the other's ("...since small1: vm").
_NETPIPE_RANK_RE = re.compile(r"(?:^|\D)(\d{1,9}):[ \t]+(\S+)[ \t]*$", re.MULTILINE)


def _finite(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number == number and abs(number) != float("inf") else None


def sized(figure: str, curve: Mapping[int, float], unit: str) -> Figures:
    """{figure_<bytes>: (value, unit)} for every finite point of a curve."""
    return {f"{figure}_{size}": (value, unit) for size, value in sorted(curve.items())
            if _finite(value) is not None}


def netpipe_curves(output: NetpipeOutput) -> tuple[dict[int, float], dict[int, float]]:
    """(one-way latency in us, bandwidth in MB/s) by message size; a size measured twice keeps its
    last point."""
    latency: dict[int, float] = {}
    bandwidth: dict[int, float] = {}
    for row in output.rows:
        usec, mbps = _finite(row.usec), _finite(row.mbps)
        if usec is not None:
            latency[row.bytes] = usec
        if mbps is not None:
            bandwidth[row.bytes] = mbps * NETPIPE_MBPS_TO_MB_PER_S
    return latency, bandwidth


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


def netpipe_figures(output: NetpipeOutput) -> Figures:
    latency, bandwidth = netpipe_curves(output)
    if not latency or not bandwidth:
        raise ParseError("NetPIPE output has no finite latency or bandwidth point")
    return {**sized("latency", latency, "us"), **sized("bandwidth", bandwidth, "MB/s"),
            **curve_summary(bandwidth, latency)}


def netpipe_stream_figures(output: NetpipeOutput) -> Figures:
    """A one-direction stream (NetPIPE -s): message rate and bandwidth by size, and the rate of the
    smallest message (the small-message rate of the interconnect studies)."""
    _, bandwidth = netpipe_curves(output)
    rates = {size: curves.message_rate(size, mb_per_s) for size, mb_per_s in bandwidth.items() if size > 0}
    if not rates:
        raise ParseError("NetPIPE stream output has no finite point above 0 bytes")
    return {**sized("message_rate", rates, "msg/s"), **sized("bandwidth", bandwidth, "MB/s"),
            "small_message_rate": (rates[min(rates)], "msg/s")}


def netpipe_hosts(stdout: str) -> dict[int, str]:
    """{rank: hostname} as NetPIPE prints them; a binary under the wrong launcher runs two
    independent copies that both say they are rank 0."""
    return {int(rank): host for rank, host in _NETPIPE_RANK_RE.findall(stdout)}


def placement_of(hosts: Mapping[int, str]) -> str:
    return "inter_node" if len(set(hosts.values())) > 1 else "intra_node"


def osu_curve(table: OsuTable) -> dict[int, float]:
    """The primary column by message size (osu_barrier's size-less row is not a curve)."""
    curve = {size: float(value) for size, value in table.rows
             if size is not None and _finite(value) is not None}
    if not curve:
        raise ParseError(f"{table.benchmark or 'OSU'} output has no finite row with a message size")
    return curve


def osu_message_rate_curve(table: OsuTable) -> dict[int, float]:
    """osu_mbw_mr's Messages/s column by message size, as printed."""
    rates = table.other_columns.get("Messages/s") or []
    return {size: float(rate) for (size, _), rate in zip(table.rows, rates)
            if size is not None and _finite(rate) is not None}


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
        value = _finite(summary.get(key))
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


@dataclass(frozen=True)
class Measured:
    """A microbenchmark job's figures, and every reason its output is not a valid measurement."""

    figures: Figures
    problems: tuple[str, ...] = ()
    hosts: str = ""  # NetPIPE: its two ranks' hosts, in rank order
    placement: str = ""  # NetPIPE: where the two ranks really ran


def netpipe_measured(output: NetpipeOutput, stdout: str, max_bytes: int, stream: bool = False) -> Measured:
    """NetPIPE's curve, and its two ranks as it prints them: a binary under the wrong launcher runs
    two copies that both say they are rank 0. A whole curve ends at max_bytes (NetPIPE's -u)."""
    hosts = netpipe_hosts(stdout)
    figures = netpipe_stream_figures(output) if stream else netpipe_figures(output)
    problems = []
    if sorted(hosts) != [0, 1]:
        problems.append(f"NetPIPE reports ranks {sorted(hosts)}, expected [0, 1] (wrong MPI launcher?)")
    largest = max((row.bytes for row in output.rows), default=0)
    if largest < max_bytes:
        problems.append(f"NetPIPE's curve stops at {largest} bytes, before the {max_bytes} asked: the run ended early")
    return Measured(figures, tuple(problems), " ".join(hosts[rank] for rank in sorted(hosts)), placement_of(hosts))


def hpcc_network_measured(output: HpccOutput, tasks: int) -> Measured:
    procs = (output.last_summary or {}).get("CommWorldProcs")
    problems = () if procs == tasks else (f"hpcc reports {procs} processes, {tasks} requested (wrong MPI launcher?)",)
    return Measured(hpcc_network_figures(output), problems)


def osu_measured(table: OsuTable, figure: str, unit: str, extra: str = "") -> Measured:
    """The primary column per message size; extra: n_half (bandwidth programs) or pairs (osu_mbw_mr:
    message rate and n1/2 too)."""
    curve = osu_curve(table)
    figures = sized(figure, curve, unit)
    if extra in ("n_half", "pairs"):
        figures.update(n_half_figure(curve))
    if extra == "pairs":
        figures.update(sized("message_rate", osu_message_rate_curve(table), "msg/s"))
    return Measured(figures)


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
