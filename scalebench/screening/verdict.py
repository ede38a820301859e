"""Which nodes and links of a screening are behind their peers, and the suspected cause.

Per figure, each value is compared with the median of its peers (the other nodes, or pairs, of the
same job: measured at the same time, so what the whole machine did in that minute cancels out), on
the worse side only: flagged when it is more than max_deviation behind, or when its robust z-score
0.6745 x (x - median) / MAD (Iglewicz and Hoaglin) is beyond z and it is at least min_deviation
behind. Thresholds: site_configs/report_flags.yaml (screen_* for nodes, screen_link_* for links).

Nodes are judged on DGEMM (the sum of their ranks, and their slowest rank), STREAM triad, and their
links: the best bandwidth and the best latency among their pairs. A node whose best pair is behind has
all its pairs slow: its NIC (or its port). A pair is judged on its bandwidth (latency) over the best
that both its nodes reach with other partners: a slow link between two good nodes stands out, while
the pairs of a slow node do not (they are explained by the node). Cause of a node: compute (DGEMM)
before memory (STREAM) before NIC: a node with a slow CPU is slow at everything else too.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Mapping, Sequence

from scalebench.screening.probe import PairFigures, ProbeResult
from scalebench.site.partition import SCREEN_MIN_NODES

MAD_Z = 0.6745  # the normal distribution's MAD in standard deviations
CAUSES = ("compute", "memory", "NIC")


@dataclass(frozen=True)
class Thresholds:
    z: float
    min_deviation: float
    max_deviation: float


def thresholds(flags: Mapping[str, float], figure: Figure | None = None) -> Thresholds:
    """A figure's bounds: every latency's (screen_latency_*), a link's bandwidth's, of a node's NIC or of
    a pair (screen_link_*), else (and without a figure) the node's (screen_*); z is shared."""
    prefix = "screen_" if figure is None else "screen_latency_" if figure.unit == "us" else \
        "screen_link_" if figure.cause in ("NIC", "link") else "screen_"
    return Thresholds(flags["screen_z"], flags[f"{prefix}min_deviation"], flags[f"{prefix}max_deviation"])


@dataclass(frozen=True)
class Score:
    name: str  # a node, or a pair 'a-b' (round r)
    value: float
    median: float
    deviation: float  # (value - median) / median, signed
    z: float | None  # None when the MAD is 0 (every other value equal)
    flagged: bool
    why: str


def score(values: Mapping[str, float], direction: str, limits: Thresholds) -> list[Score]:
    """Every value's standing among `values` (name -> value), worst first."""
    median = statistics.median(values.values())
    mad = statistics.median(abs(v - median) for v in values.values())
    worse = -1.0 if direction == "higher" else 1.0  # the sign of a straggler's deviation
    scores = []
    for name, value in values.items():
        deviation = (value - median) / median
        z = MAD_Z * (value - median) / mad if mad > 0 else None
        behind = worse * deviation  # > 0: worse than the median
        why = ""
        if behind > limits.max_deviation:
            why = f"{behind:.1%} worse than the median"
        elif z is not None and worse * z > limits.z and behind >= limits.min_deviation:
            why = f"robust z {z:+.1f}, {behind:.1%} worse than the median"
        scores.append(Score(name, value, median, deviation, z, bool(why), why))
    return sorted(scores, key=lambda s: (-worse * s.deviation, s.name))


@dataclass(frozen=True)
class Figure:
    name: str
    label: str
    unit: str
    direction: str
    cause: str  # what a node behind on it suggests


NODE_FIGURES = (
    Figure("dgemm_gflops", "DGEMM (all ranks)", "Gflop/s", "higher", "compute"),
    Figure("dgemm_min_rank_gflops", "DGEMM (slowest rank)", "Gflop/s", "higher", "compute"),
    Figure("stream_gbs", "STREAM triad (all ranks)", "GB/s", "higher", "memory"),
    Figure("link_bandwidth_mbs", "best pair bandwidth", "MB/s", "higher", "NIC"),
    Figure("link_latency_us", "best pair latency", "us", "lower", "NIC"),
)
PAIR_FIGURES = (
    Figure("bandwidth_mbs", "bandwidth / the best both nodes reach", "MB/s", "higher", "link"),
    Figure("latency_us", "latency / the best both nodes reach", "us", "lower", "link"),
)


@dataclass(frozen=True)
class NodeVerdict:
    node: str
    cause: str
    scores: tuple[tuple[Figure, Score], ...]  # the figures it is flagged on


@dataclass(frozen=True)
class LinkVerdict:
    pair: PairFigures
    figure: Figure
    score: Score  # of the pair's ratio to the best its nodes reach
    explained_by: str  # a flagged node of the pair ('n3 (compute)'), or '' for the link itself


@dataclass(frozen=True)
class Verdict:
    result: ProbeResult
    node_values: Mapping[str, Mapping[str, float]]  # figure -> node -> value
    node_scores: Mapping[str, tuple[Score, ...]]  # figure -> scores, worst first
    nodes: tuple[NodeVerdict, ...]  # flagged nodes, in job order
    links: tuple[LinkVerdict, ...]  # flagged pairs, worst first
    notes: tuple[str, ...]

    def flagged_nodes(self) -> list[str]:
        return [v.node for v in self.nodes]

    def flagged_links(self) -> list[LinkVerdict]:
        """The pairs flagged for the link itself (not explained by one of its nodes)."""
        return [v for v in self.links if not v.explained_by]


def _best_links(result: ProbeResult) -> tuple[dict[str, float], dict[str, float]]:
    """Each node's best bandwidth and best latency over its pairs."""
    bandwidth: dict[str, float] = {}
    latency: dict[str, float] = {}
    for pair in result.pairs:
        for node in pair.nodes:
            bandwidth[node] = max(bandwidth.get(node, 0.0), pair.bandwidth_mbs)
            latency[node] = min(latency.get(node, pair.latency_us), pair.latency_us)
    return bandwidth, latency


def judge(result: ProbeResult, flags: Mapping[str, float]) -> Verdict:
    best_bandwidth, best_latency = _best_links(result)
    values: dict[str, dict[str, float]] = {
        "dgemm_gflops": {n.name: n.dgemm_gflops for n in result.nodes},
        "dgemm_min_rank_gflops": {n.name: n.dgemm_min_rank_gflops for n in result.nodes},
        "stream_gbs": {n.name: n.stream_gbs for n in result.nodes},
        "link_bandwidth_mbs": best_bandwidth,
        "link_latency_us": best_latency,
    }
    notes = []
    node_scores: dict[str, tuple[Score, ...]] = {}
    flagged: dict[str, list[tuple[Figure, Score]]] = {}
    for figure in NODE_FIGURES:
        by_node = values[figure.name]
        if len(by_node) < SCREEN_MIN_NODES:
            notes.append(f"{figure.label}: {len(by_node)} node(s), fewer than {SCREEN_MIN_NODES} to compare")
            continue
        node_scores[figure.name] = tuple(score(by_node, figure.direction, thresholds(flags, figure)))
        for s in node_scores[figure.name]:
            if s.flagged:
                flagged.setdefault(s.name, []).append((figure, s))
    order = {name: i for i, name in enumerate(result.node_names())}
    verdicts = tuple(NodeVerdict(node, next(c for c in CAUSES if any(f.cause == c for f, _ in found)), tuple(found))
                     for node, found in sorted(flagged.items(), key=lambda item: order[item[0]]))
    causes = {v.node: v.cause for v in verdicts}
    return Verdict(result, values, node_scores, verdicts, tuple(_judge_pairs(result, best_bandwidth, best_latency,
                                                                                 causes, flags, notes)),
                   tuple(notes))


def _judge_pairs(result: ProbeResult, best_bandwidth: Mapping[str, float], best_latency: Mapping[str, float],
                 causes: Mapping[str, str], flags: Mapping[str, float], notes: list[str]) -> list[LinkVerdict]:
    if len(result.pairs) < SCREEN_MIN_NODES:
        if result.pairs:
            notes.append(f"links: {len(result.pairs)} pair(s), fewer than {SCREEN_MIN_NODES} to compare")
        return []
    labelled = {f"{p.a}-{p.b} (round {p.round})": p for p in result.pairs}
    ratios = {
        "bandwidth_mbs": {label: p.bandwidth_mbs / min(best_bandwidth[p.a], best_bandwidth[p.b])
                          for label, p in labelled.items()},
        "latency_us": {label: p.latency_us / max(best_latency[p.a], best_latency[p.b])
                       for label, p in labelled.items()},
    }
    found = []
    for figure in PAIR_FIGURES:
        for s in score(ratios[figure.name], figure.direction, thresholds(flags, figure)):
            if s.flagged:
                pair = labelled[s.name]
                by = ", ".join(f"{node} ({causes[node]})" for node in pair.nodes if node in causes)
                found.append(LinkVerdict(pair, figure, s, by))
    return found


def worst_figures(verdict: NodeVerdict) -> str:
    """'DGEMM (all ranks) -62%, best pair bandwidth -90%': what a flagged node is behind on."""
    return ", ".join(f"{figure.label} {s.deviation:+.0%}" for figure, s in verdict.scores)


def nodes_of(verdicts: Sequence[Verdict]) -> list[str]:
    return [node for v in verdicts for node in v.flagged_nodes()]


def summary(verdict: Verdict) -> dict[str, tuple[float, str]]:
    """The job's figures (ScreeningCheck's perf variables): counts and medians."""
    result = verdict.result
    figures = {"nodes": (float(len(result.nodes)), "nodes"),
               "flagged_nodes": (float(len(verdict.nodes)), "nodes"),
               "flagged_links": (float(len(verdict.flagged_links())), "pairs"),
               "dgemm_median_gflops": (statistics.median(n.dgemm_gflops for n in result.nodes), "Gflop/s"),
               "stream_median_gbs": (statistics.median(n.stream_gbs for n in result.nodes), "GB/s")}
    if result.pairs:
        figures["bandwidth_median_mbs"] = (statistics.median(p.bandwidth_mbs for p in result.pairs), "MB/s")
        figures["latency_median_us"] = (statistics.median(p.latency_us for p in result.pairs), "us")
    figures["probe_time"] = (result.compute_s + result.links_s, "s")
    return figures
