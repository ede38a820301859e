"""What hpcc's network section says: its ping-pong and ring figures from its last complete Summary
(HPCCNetworkCheck)."""
from __future__ import annotations

from scalebench.errors import InputError, ParseError
from scalebench.hpl.hpcc_output import HpccOutput
from scalebench.interconnect import curves
from scalebench.interconnect.microbench import Figures, Measured, finite_float
from scalebench.validation import excerpt

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


def hpcc_network_measured(output: HpccOutput, tasks: int) -> Measured:
    procs = (output.last_summary or {}).get("CommWorldProcs")
    problems = () if procs == tasks else (f"hpcc reports {procs} processes, {tasks} requested (wrong MPI launcher?)",)
    return Measured(hpcc_network_figures(output), problems)
