"""Screening probe outputs (scripts/screen-probe.c's format) for tests: a healthy machine with a little
noise, and faults put in by name."""
from __future__ import annotations

import random
from typing import Mapping, Sequence

HEADER = ("screen-probe version=1 nodes={nodes} ranks={ranks} dgemm_n=1024 dgemm_s=3 stream_n=2097152 stream_s=2 "
          "window_s=0.25 latency_bytes=8 latency_s=0.3 message_bytes=1048576 in_flight=8 bandwidth_s=1.5 passes=3 "
          "rounds={rounds} random_rounds={random_rounds} seed=1")


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


def probe_text(names: Sequence[str], *, ranks: int = 64, dgemm: Mapping[str, float] | None = None,
               stream: Mapping[str, float] | None = None, nic: Mapping[str, float] | None = None,
               links: Mapping[frozenset[str], float] | None = None, noise: float = 0.02, seed: int = 7,
               random_rounds: int = 2, end: bool = True) -> str:
    """A probe's output: every node at 3000 Gflop/s and 300 GB/s, every pair at 2 us and 40000 MB/s, each
    value moved by up to `noise` (a fraction), then scaled by the factors given: dgemm, stream per node,
    nic per node (every pair of the node, the slower end counting), links per pair."""
    jitter = random.Random(seed)

    def noisy(value: float) -> float:
        return value * (1 + noise * (2 * jitter.random() - 1))

    dgemm, stream, nic, links = dgemm or {}, stream or {}, nic or {}, links or {}
    schedule = rounds_of(names, random_rounds)
    lines = [HEADER.format(nodes=len(names), ranks=ranks * len(names), rounds=len(schedule),
                           random_rounds=random_rounds)]
    for name in names:
        rate = noisy(3000.0) * dgemm.get(name, 1.0)
        lines.append(f"node name={name} ranks={ranks} dgemm_gflops={rate:.6g} dgemm_min_rank_gflops={rate / ranks:.6g} "
                     f"stream_gbs={noisy(300.0) * stream.get(name, 1.0):.6g} windows=11")
    for number, pairs in enumerate(schedule, start=1):
        kind = "ring" if number <= len(schedule) - random_rounds else "random"
        for a, b in pairs:
            factor = min(nic.get(a, 1.0), nic.get(b, 1.0)) * links.get(frozenset((a, b)), 1.0)
            lines.append(f"pair round={number} kind={kind} a={a} b={b} latency_us={noisy(2.0):.6g} "
                         f"bandwidth_mbs={noisy(40000.0) * factor:.6g}")
    if end:
        lines.append("end compute_s=5.4 links_s=8.1")
    return "\n".join(lines) + "\n"
