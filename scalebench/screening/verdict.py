"""Which nodes and links of a screening are behind their peers, and the suspected cause.

Per figure, each value is compared with the median of its peers (the other nodes, or pairs, of the
same job: measured at the same time, so what the whole machine did in that minute cancels out), on
the worse side only: outside its bounds when it is more than max_deviation behind, or when its robust
z-score 0.6745 x (x - median) / MAD (Iglewicz and Hoaglin) is beyond z and it is at least
min_deviation behind. Thresholds: site_configs/report_flags.yaml (screen_* for nodes, screen_link_*
for links, screen_latency_* for latencies).

Screening confirms before it flags: a node or link outside its bounds over the whole job is flagged
only when it is outside them in every pass of the probe too (each pass against its peers of that
pass: a re-measurement in the same job), and when the foreign load or steal the node probe recorded
on it could not explain it (scalebench.screening.interference); else it is 'not confirmed' (a
transient: not flagged) or 'not decided: re-screen' with the interference named. A probe output of
version 1 has no passes: its flags rest on the figures over all passes, as they always did.

Nodes are judged on DGEMM (the sum of their ranks, and their slowest rank), STREAM triad, and their
links: the best bandwidth and the best latency among their pairs. A node whose best pair is behind has
all its pairs slow: its NIC (or its port). A pair is judged on its bandwidth (latency) over the best
that both its nodes reach with other partners: a slow link between two good nodes stands out, while
the pairs of a slow node do not (they are explained by the node). Cause of a node: compute (DGEMM)
before memory (STREAM) before NIC: a node with a slow CPU is slow at everything else too.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from scalebench.screening import interference
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
    per_rank: bool = True  # set by one rank (else summed over the node's): how much interference can take

    @property
    def latency(self) -> bool:
        """A round trip's time: set by when its ranks get a CPU, not by a rate (see explained)."""
        return self.unit == "us"


NODE_FIGURES = (
    Figure("dgemm_gflops", "DGEMM (all ranks)", "Gflop/s", "higher", "compute", per_rank=False),
    Figure("dgemm_min_rank_gflops", "DGEMM (slowest rank)", "Gflop/s", "higher", "compute"),
    Figure("stream_gbs", "STREAM triad (all ranks)", "GB/s", "higher", "memory", per_rank=False),
    Figure("link_bandwidth_mbs", "best pair bandwidth", "MB/s", "higher", "NIC"),
    Figure("link_latency_us", "best pair latency", "us", "lower", "NIC"),
)
PAIR_FIGURES = (
    Figure("bandwidth_mbs", "bandwidth / the best both nodes reach", "MB/s", "higher", "link"),
    Figure("latency_us", "latency / the best both nodes reach", "us", "lower", "link"),
)


def behind(score: Score, direction: str) -> float:
    """How far a value is worse than its median, as a share of the median (> 0: worse)."""
    return -score.deviation if direction == "higher" else score.deviation


def explained(score: Score, figure: Figure, share: float) -> bool:
    """Whether a figure's straggling is within what losing `share` of a rank's CPU can do: a rate falls
    by at most that share, a time grows by at most share / (1 - share); a latency by anything, since a
    round trip whose core another process holds waits for a time slice, many times the trip itself."""
    if share <= 0:
        return False
    if figure.latency:
        return True
    limit = share if figure.direction == "higher" else (math.inf if share >= 1 else share / (1 - share))
    return behind(score, figure.direction) <= limit


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
class Undecided:
    """A node or link outside its bounds in every pass, which interference recorded on it could explain:
    neither flagged nor cleared until it is screened again."""
    name: str  # a node, or a pair 'a-b'
    nodes: tuple[str, ...]  # the node, or the pair's two: what a re-screen takes
    why: str  # the interference, and what it could explain
    scores: tuple[tuple[Figure, Score], ...]  # the figures it is behind on


@dataclass(frozen=True)
class Verdict:
    result: ProbeResult
    node_values: Mapping[str, Mapping[str, float]]  # figure -> node -> value
    node_scores: Mapping[str, tuple[Score, ...]]  # figure -> scores, worst first
    nodes: tuple[NodeVerdict, ...]  # flagged nodes, in job order
    links: tuple[LinkVerdict, ...]  # flagged pairs, worst first
    notes: tuple[str, ...]
    undecided: tuple[Undecided, ...] = ()  # nodes, then links: 'not decided: re-screen'
    unconfirmed: tuple[str, ...] = ()  # outside over the job, inside in some pass: a transient, not flagged

    def flagged_nodes(self) -> list[str]:
        return [v.node for v in self.nodes]

    def flagged_links(self) -> list[LinkVerdict]:
        """The pairs flagged for the link itself (not explained by one of its nodes)."""
        return [v for v in self.links if not v.explained_by]

    def undecided_nodes(self) -> list[str]:
        return [u.name for u in self.undecided if u.nodes == (u.name,)]


def _best_links(result: ProbeResult) -> tuple[dict[str, float], dict[str, float]]:
    """Each node's best bandwidth and best latency over its pairs."""
    bandwidth: dict[str, float] = {}
    latency: dict[str, float] = {}
    for pair in result.pairs:
        for node in pair.nodes:
            bandwidth[node] = max(bandwidth.get(node, 0.0), pair.bandwidth_mbs)
            latency[node] = min(latency.get(node, pair.latency_us), pair.latency_us)
    return bandwidth, latency


def _judge_nodes(result: ProbeResult, flags: Mapping[str, float], notes: list[str]
                 ) -> tuple[dict[str, dict[str, float]], dict[str, tuple[Score, ...]], dict[str, list[tuple[Figure, Score]]]]:
    """(figure -> node -> value, figure -> scores, node -> the figures it is outside its bounds on)."""
    best_bandwidth, best_latency = _best_links(result)
    values: dict[str, dict[str, float]] = {
        "dgemm_gflops": {n.name: n.dgemm_gflops for n in result.nodes},
        "dgemm_min_rank_gflops": {n.name: n.dgemm_min_rank_gflops for n in result.nodes},
        "stream_gbs": {n.name: n.stream_gbs for n in result.nodes},
        "link_bandwidth_mbs": best_bandwidth,
        "link_latency_us": best_latency,
    }
    node_scores: dict[str, tuple[Score, ...]] = {}
    outside: dict[str, list[tuple[Figure, Score]]] = {}
    for figure in NODE_FIGURES:
        by_node = values[figure.name]
        if len(by_node) < SCREEN_MIN_NODES:
            notes.append(f"{figure.label}: {len(by_node)} node(s), fewer than {SCREEN_MIN_NODES} to compare")
            continue
        node_scores[figure.name] = tuple(score(by_node, figure.direction, thresholds(flags, figure)))
        for s in node_scores[figure.name]:
            if s.flagged:
                outside.setdefault(s.name, []).append((figure, s))
    return values, node_scores, outside


def _pair_label(pair: PairFigures) -> str:
    return f"{pair.a}-{pair.b} (round {pair.round})"


def _judge_pairs(result: ProbeResult, values: Mapping[str, Mapping[str, float]], flags: Mapping[str, float],
                 notes: list[str]) -> list[tuple[PairFigures, Figure, Score]]:
    """The pairs outside their bounds, each against the best both its nodes reach, worst first per figure."""
    if len(result.pairs) < SCREEN_MIN_NODES:
        if result.pairs:
            notes.append(f"links: {len(result.pairs)} pair(s), fewer than {SCREEN_MIN_NODES} to compare")
        return []
    best_bandwidth, best_latency = values["link_bandwidth_mbs"], values["link_latency_us"]
    labelled = {_pair_label(p): p for p in result.pairs}
    ratios = {
        "bandwidth_mbs": {label: p.bandwidth_mbs / min(best_bandwidth[p.a], best_bandwidth[p.b])
                          for label, p in labelled.items()},
        "latency_us": {label: p.latency_us / max(best_latency[p.a], best_latency[p.b])
                       for label, p in labelled.items()},
    }
    return [(labelled[s.name], figure, s) for figure in PAIR_FIGURES
            for s in score(ratios[figure.name], figure.direction, thresholds(flags, figure)) if s.flagged]


def _outside_in(result: ProbeResult, flags: Mapping[str, float]) -> set[tuple[str, str]]:
    """(node or pair label, figure) of every value outside its bounds in `result` (one pass of it)."""
    values, _, outside = _judge_nodes(result, flags, [])
    return ({(node, figure.name) for node, found in outside.items() for figure, _ in found}
            | {(_pair_label(pair), figure.name) for pair, figure, _ in _judge_pairs(result, values, flags, [])})


def judge(result: ProbeResult, flags: Mapping[str, float], interference_record: Mapping[str, Any] | None = None
          ) -> Verdict:
    """Every node and pair of a job judged against its peers, confirmed pass by pass, and weighed against
    the interference the job's node probe recorded (its `interference` record; None: none recorded)."""
    notes: list[str] = []
    values, node_scores, outside = _judge_nodes(result, flags, notes)
    pairs = _judge_pairs(result, values, flags, notes)
    passes = [_outside_in(result.in_pass(i), flags) for i in range(result.passes)]
    if not result.passes and (outside or pairs):
        notes.append("probe output version 1 (no figures per pass): its flags are not confirmed by a re-measurement")
    unconfirmed: list[str] = []

    def confirmed(name: str, figure: Figure, s: Score, note: bool = True) -> bool:
        count = sum((name, figure.name) in found for found in passes)
        if count < len(passes) and note:
            unconfirmed.append(f"{name.split(' ')[0]} {figure.label} {s.deviation:+.0%}: outside its bounds in "
                               f"{count} of {len(passes)} passes")
        return count == len(passes)

    names = result.node_names()
    loads = interference.node_loads(interference_record, names)
    peers = interference.peer_level(loads, names)
    ranks = {n.name: n.ranks for n in result.nodes}

    def undecided_why(node: str, found: Sequence[tuple[Figure, Score]]) -> str:
        """The interference on `node` when it could explain every figure found, else ''."""
        load = loads.get(node)
        if load is None:
            return ""
        # a latency's low decile is which pair's ranks waited for a CPU: a load all nodes shared does not
        # hit every pair alike, and counts whole; a rate over many windows is slowed alike, and cancels
        if not all(explained(s, f, interference.explicable(load, interference.QUIET if f.latency else peers,
                                                           ranks[node], f.per_rank, flags)) for f, s in found):
            return ""
        return (f"{interference.cause(node, load, peers)} could explain "
                + ", ".join(f"{f.label} {s.deviation:+.0%}" for f, s in found))

    flagged, undecided = [], []
    order = {name: i for i, name in enumerate(names)}
    for node, candidates in sorted(outside.items(), key=lambda item: order[item[0]]):
        found = tuple((f, s) for f, s in candidates if confirmed(node, f, s))
        if not found:
            continue
        why = undecided_why(node, found)
        if why:
            undecided.append(Undecided(node, (node,), why, found))
        else:
            flagged.append(NodeVerdict(node, next(c for c in CAUSES if any(f.cause == c for f, _ in found)), found))
    causes = {v.node: v.cause for v in flagged}
    links = []
    for pair, figure, s in pairs:
        by = ", ".join(f"{node} ({causes[node]})" for node in pair.nodes if node in causes)
        if not confirmed(_pair_label(pair), figure, s, note=not by):  # a flagged node's pairs: no transient
            continue
        why = "" if by else next(filter(None, (undecided_why(node, ((figure, s),)) for node in pair.nodes)), "")
        if why:
            undecided.append(Undecided(f"{pair.a}-{pair.b}", pair.nodes, why, ((figure, s),)))
        else:
            links.append(LinkVerdict(pair, figure, s, by))
    return Verdict(result, values, node_scores, tuple(flagged), tuple(links), tuple(notes), tuple(undecided),
                   tuple(unconfirmed))


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
