"""Screening probe outputs (scripts/screen-probe.c's format) for tests: a healthy machine with a little
noise, and faults put in by name."""
from __future__ import annotations

import random
import statistics
from typing import Mapping, Sequence, Union

HEADER = ("screen-probe version={version} nodes={nodes} ranks={ranks} dgemm_n=1024 dgemm_s=3 stream_n=2097152 "
          "stream_s=2 window_s=0.25 latency_bytes=8 latency_s=0.3 message_bytes=1048576 in_flight=8 bandwidth_s=1.5 "
          "passes={passes} rounds={rounds} random_rounds={random_rounds} seed=1")

# A fault's factor: one for every pass, or one per pass (a transient: 1.0 in the passes it spared).
Factor = Union[float, Sequence[float]]


def rounds_of(names: Sequence[str], random_rounds: int = 2, seed: int = 1) -> list[list[tuple[str, str]]]:
    """The ring's rounds (two, three for an odd count), then random perfect matchings, as the probe pairs."""
    n = len(names)
    ring = [[(names[i], names[i + 1]) for i in range(0, n - 1, 2)],
            [(names[i], names[i + 1]) for i in range(1, n - 1, 2)]]
    if n % 2 == 0:
        ring[1].append((names[0], names[-1]))
    else:
        ring.append([(names[0], names[-1])])
    chooser = random.Random(seed)
    matchings = []
    for _ in range(random_rounds):
        order = list(names)
        chooser.shuffle(order)
        matchings.append([tuple(sorted((order[i], order[i + 1]), key=names.index)) for i in range(0, n - 1, 2)])
    return ring + matchings  # type: ignore[return-value]


def _per_pass(factor: Factor, passes: int) -> list[float]:
    return [float(factor)] * passes if isinstance(factor, (int, float)) else [float(f) for f in factor]


def probe_text(names: Sequence[str], *, ranks: int = 64, dgemm: Mapping[str, Factor] | None = None,
               stream: Mapping[str, Factor] | None = None, nic: Mapping[str, Factor] | None = None,
               links: Mapping[frozenset[str], Factor] | None = None, latency: Mapping[frozenset[str], Factor] | None = None,
               noise: float = 0.02, seed: int = 7, random_rounds: int = 2, end: bool = True, version: int = 2,
               passes: int = 3) -> str:
    """A probe's output: every node at 3000 Gflop/s and 300 GB/s, every pair at 2 us and 40000 MB/s, each
    value of each pass moved by up to `noise` (a fraction), then scaled by the factors given (one for every
    pass, or one per pass): dgemm, stream per node, nic per node (every pair's bandwidth of the node, the
    slower end counting), links per pair's bandwidth, latency per pair's latency. A figure over all passes
    is the median of its passes'; version 1 gives only those."""
    jitter = random.Random(seed)

    def noisy(value: float) -> float:
        return value * (1 + noise * (2 * jitter.random() - 1))

    def figures(key: str, base: float, factors: Sequence[float], fmt=lambda v: f"{v:.6g}") -> str:
        values = [noisy(base) * f for f in factors]
        text = f"{key}={fmt(statistics.median(values))}"
        return text + (f" {key}_by_pass={','.join(fmt(v) for v in values)}" if version >= 2 else "")

    dgemm, stream, nic, links, latency = dgemm or {}, stream or {}, nic or {}, links or {}, latency or {}
    schedule = rounds_of(names, random_rounds)
    lines = [HEADER.format(version=version, nodes=len(names), ranks=ranks * len(names), passes=passes,
                           rounds=len(schedule), random_rounds=random_rounds)]
    for name in names:
        rate = [noisy(3000.0) * f for f in _per_pass(dgemm.get(name, 1.0), passes)]
        lines.append(" ".join([
            f"node name={name} ranks={ranks}",
            f"dgemm_gflops={statistics.median(rate):.6g}",
            f"dgemm_min_rank_gflops={statistics.median(rate) / ranks:.6g}",
            figures("stream_gbs", 300.0, _per_pass(stream.get(name, 1.0), passes)), "windows=11",
            *([f"dgemm_gflops_by_pass={','.join(f'{v:.6g}' for v in rate)}",
               f"dgemm_min_rank_gflops_by_pass={','.join(f'{v / ranks:.6g}' for v in rate)}"] if version >= 2 else [])]))
    for number, pairs in enumerate(schedule, start=1):
        kind = "ring" if number <= len(schedule) - random_rounds else "random"
        for a, b in pairs:
            pair = frozenset((a, b))
            factor = [min(x, y) * z for x, y, z in zip(_per_pass(nic.get(a, 1.0), passes),
                                                      _per_pass(nic.get(b, 1.0), passes),
                                                      _per_pass(links.get(pair, 1.0), passes))]
            lines.append(f"pair round={number} kind={kind} a={a} b={b} "
                         f"{figures('latency_us', 2.0, _per_pass(latency.get(pair, 1.0), passes))} "
                         f"{figures('bandwidth_mbs', 40000.0, factor)}")
    if end:
        lines.append("end compute_s=5.4 links_s=8.1")
    return "\n".join(lines) + "\n"


def interference_record(names: Sequence[str], foreign: Mapping[str, float] | None = None, *, everywhere: float = 0.0,
                        steal_pct: Mapping[str, float] | None = None, detailed: int | None = None) -> dict:
    """A job's node probe record (scalebench.nodeprobe.samples.interference_record's layout): every node
    with `everywhere` foreign cores (a load all nodes share), plus `foreign` per node; the `detailed`
    worst nodes in per_node (all by default)."""
    foreign, steal_pct = foreign or {}, steal_pct or {}
    load = {name: everywhere + foreign.get(name, 0.0) for name in names}
    worst = sorted(names, key=lambda n: load[n], reverse=True)[:detailed or len(names)]
    return {"nodes": len(names), "expected_nodes": len(names), "steal_pct": max([0.0, *steal_pct.values()]),
            "foreign_cores": max(load.values()),
            "per_node": {name: {"steal_pct": steal_pct.get(name, 0.0), "foreign_cores": load[name],
                                "foreign_top": "stress[4242] 0.90" if load[name] else "", "job_cores": 1.0}
                         for name in worst}}
