"""Node screening: one-node figures of every node (NodeHealthCheck, run with ReFrame's --distribute)
ranked against their peers, and the stragglers to drain or exclude before a multi-node HPL.

Per system, partition, stack and figure, each node's value is compared with the median of all nodes:
its relative deviation, and its robust z-score 0.6745 x (x - median) / MAD (Iglewicz and Hoaglin).
Only the worse side counts (a node faster than its peers is no straggler). Thresholds are in
site_configs/report_flags.yaml (screen_*).
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from scalebench import benchmarks
from scalebench.results.document import Block, Heading, Text, table
from scalebench.results.records import Session
from scalebench.site.thresholds import SCREEN_MIN_NODES, report_flags
from scalebench.validation import is_number

SCREENING_CHECK = "NodeHealthCheck"
MAD_Z = 0.6745  # the normal distribution's MAD in standard deviations


@dataclass(frozen=True)
class NodeScore:
    node: str
    value: float
    median: float
    deviation: float  # (value - median) / median, signed
    z: float | None  # None when the MAD is 0 (every other node equal)
    flagged: bool
    why: str


@dataclass(frozen=True)
class Screen:
    where: tuple[str, str, str]  # system, partition, stack
    figure: str
    unit: str
    direction: str
    scores: tuple[NodeScore, ...]  # worst first


def score(values: Mapping[str, float], direction: str, flags: Mapping[str, float]) -> list[NodeScore]:
    """Every node's standing among `values` (node -> value), worst first."""
    median = statistics.median(values.values())
    mad = statistics.median(abs(v - median) for v in values.values())
    worse = -1.0 if direction == "higher" else 1.0  # the sign of a straggler's deviation
    scores = []
    for node, value in values.items():
        deviation = (value - median) / median
        z = MAD_Z * (value - median) / mad if mad > 0 else None
        behind = worse * deviation  # > 0: worse than the median
        why = ""
        if behind > flags["screen_max_deviation"]:
            why = f"{behind:.1%} worse than the median"
        elif z is not None and worse * z > flags["screen_z"] and behind >= flags["screen_min_deviation"]:
            why = f"robust z {z:+.1f}, {behind:.1%} worse than the median"
        scores.append(NodeScore(node, value, median, deviation, z, bool(why), why))
    return sorted(scores, key=lambda s: (-worse * s.deviation, s.node))


def screens(sessions: Iterable[Session], check: str = SCREENING_CHECK) -> tuple[list[Screen], list[str]]:
    """The screens of every figure with a direction of the one-node cases of `check`; notes on cases
    left out. A node measured several times counts with its median."""
    bench = benchmarks.lookup(check)
    found: dict[tuple[tuple[str, str, str], str], dict[str, list[float]]] = {}
    units: dict[str, str] = {}
    notes = []
    for session in sessions:
        for case in session.cases:
            if case.benchmark != check or not case.measured:
                continue
            nodes = [n for n in case.nodelist.split(",") if n]
            if len(nodes) != 1:
                notes.append(f"{case.name} in {case.report}: ran on {len(nodes)} nodes, not one")
                continue
            for figure, (value, unit) in case.figures.items():
                if is_number(value) and bench.figure(figure).direction != "none":
                    key = ((case.system, case.partition, case.stack), figure)
                    found.setdefault(key, {}).setdefault(nodes[0], []).append(float(value))
                    units[figure] = unit
    flags = report_flags()
    out = []
    for (where, figure), by_node in sorted(found.items()):
        values = {node: statistics.median(v) for node, v in by_node.items()}
        if len(values) < SCREEN_MIN_NODES:
            notes.append(f"{':'.join(where[:2])} {where[2]} {figure}: {len(values)} node(s), fewer than "
                         f"{SCREEN_MIN_NODES} to compare")
            continue
        if statistics.median(values.values()) <= 0:
            continue
        direction = bench.figure(figure).direction
        out.append(Screen(where, figure, units[figure], direction, tuple(score(values, direction, flags))))
    return out, notes


def flagged_nodes(found: Sequence[Screen]) -> list[str]:
    return sorted({s.node for screen in found for s in screen.scores if s.flagged}, key=_natural)


def _natural(name: str) -> tuple[object, ...]:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name))


def hostlist(nodes: Sequence[str]) -> str:
    """Slurm's compressed form: n[1-3,7],gpu01. Numbers keep their zero padding."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain = []
    for node in nodes:
        match = re.fullmatch(r"(.*?)(\d+)", node)
        if match:
            groups.setdefault((match.group(1), len(match.group(2))), []).append(int(match.group(2)))
        else:
            plain.append(node)
    parts = list(plain)
    for (prefix, width), numbers in groups.items():
        ranges = _ranges(sorted(set(numbers)), width)
        one_node = len(ranges) == 1 and "-" not in ranges[0]
        parts.append(f"{prefix}{ranges[0]}" if one_node else f"{prefix}[{','.join(ranges)}]")
    return ",".join(sorted(parts, key=_natural))


def _ranges(numbers: list[int], width: int) -> list[str]:
    """[1, 2, 3, 7] -> ["1-3", "7"], zero-padded to `width`."""
    out: list[str] = []
    start = previous = numbers[0]
    for number in numbers[1:] + [None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        out.append(f"{start:0{width}d}" + (f"-{previous:0{width}d}" if previous != start else ""))
        if number is not None:
            start = previous = number
    return out


def screen_table(found: Sequence[Screen]) -> Block:
    rows = []
    for screen in found:
        for s in screen.scores:
            rows.append([f"{screen.where[0]}:{screen.where[1]}", screen.where[2], screen.figure, s.node,
                         f"{s.value:.4g} {screen.unit}", f"{s.median:.4g}", f"{s.deviation:+.1%}",
                         "-" if s.z is None else f"{s.z:+.1f}", "FLAGGED: " + s.why if s.flagged else ""])
    return table(["where", "stack", "figure", "node", "value", "median", "vs median", "robust z", ""], rows)


def blocks(sessions: Sequence[Session], level: int = 2) -> list[Block]:
    """The report's section; nothing when no node was screened."""
    found, notes = screens(sessions)
    if not found and not notes:
        return []
    out: list[Block] = [Heading(level, "Node screening")]
    nodes = flagged_nodes(found)
    out.append(Text(f"{SCREENING_CHECK} on every node (`--distribute`), each node against the median of its "
                    f"peers. Flagged: {hostlist(nodes) if nodes else 'none'}."))
    if found:
        out.append(screen_table(found))
    if notes:
        out.append(Text("Left out: " + "; ".join(notes)))
    return out
