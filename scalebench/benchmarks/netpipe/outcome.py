"""What a NetPIPE job measured (NetPIPECheck, NetPIPEStreamCheck in reframe_tests/microbench.py): one-way
latency and bandwidth curves by message size, or a one-direction stream's message rates, and the two
ranks it reports, which tell a job of two ranks from two copies under the wrong MPI launcher."""
from __future__ import annotations

import re
from typing import Mapping

from scalebench.errors import ParseError
from scalebench.interconnect import curves
from scalebench.interconnect.microbench import Figures, Measured, curve_summary, finite_float, sized
from scalebench.benchmarks.netpipe.output import NetpipeOutput


# NetPIPE's "Mbps" is 2**20 bits/s; OSU and the reports use MB/s = 1e6 bytes/s.
NETPIPE_MBPS_TO_MB_PER_S = 2**20 / 8 / 1e6


# NetPIPE prints "<rank>: <hostname>" for each of its two processes before measuring; both write to
# one output unbuffered, so a rank's line may start in the middle of the other's ("...since small1: vm").
_NETPIPE_RANK_RE = re.compile(r"(?:^|\D)(\d{1,9}):[ \t]+(\S+)[ \t]*$", re.MULTILINE)


def netpipe_curves(output: NetpipeOutput) -> tuple[dict[int, float], dict[int, float]]:
    """(one-way latency in us, bandwidth in MB/s) by message size; a size measured twice keeps its
    last point."""
    latency: dict[int, float] = {}
    bandwidth: dict[int, float] = {}
    for row in output.rows:
        usec, mbps = finite_float(row.usec), finite_float(row.mbps)
        if usec is not None:
            latency[row.bytes] = usec
        if mbps is not None:
            bandwidth[row.bytes] = mbps * NETPIPE_MBPS_TO_MB_PER_S
    return latency, bandwidth


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
