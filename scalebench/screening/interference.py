"""Whether what else ran on a node could explain why screening found it behind: then the verdict is
'not decided: re-screen' with that cause, never a flag, since a site drains what screening flags and
a transient is no reason to drain a healthy node.

The evidence is the node probe's record of the job (scalebench.nodeprobe.samples): each node's foreign
load (CPU time of processes not the job's, beyond the cores the job left idle) and CPU steal. For a
rate (DGEMM, STREAM, bandwidth: medians over windows of many scheduler periods) only the load a node
had beyond that of the peers it is compared with counts: peers measured in the same job
(ScreeningCheck) ran in the same minute, and whatever slowed them all slowed them alike and cancels
out in the comparison (on the lab's one-machine cluster a CPU hog shows on every node alike); peers
measured in jobs of their own (NodeHealthCheck), each at its own time, are compared with the median
of the loads recorded beside them: the median peer ran beside that much. A
latency (the low decile of round trips) counts the whole load always: which pair's ranks wait for a
CPU that another process holds is chance, not alike for all. Below noisy_foreign_cores and noisy_steal
(site_configs/report_flags.yaml, as for an HPL case's noise) a node counts as quiet.

How much a load can explain: L cores taken from a node (foreign cores, plus steal x ranks: steal is a
share of all the node's CPUs) cost one rank at most min(1, L) of its work, and so a figure set by one
rank (the slowest rank, a node's link, a bulk-synchronous HPL); a figure summed over the node's ranks
at most L / ranks of it; a latency, anything (scalebench.screening.verdict.explained). A deviation
beyond that is the node's own, and is flagged whatever ran beside.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from scalebench.validation import excerpt_text


@dataclass(frozen=True)
class NodeLoad:
    foreign_cores: float  # beyond the cores the job left idle
    steal: float  # share of the node's CPU time
    top: str = ""  # the foreign processes that used the most CPU, as the record names them
    bound: bool = False  # not recorded for this node: at most this (the record details its worst nodes only)


QUIET = NodeLoad(0.0, 0.0)


def _number(value: Any) -> float | None:
    return float(value) if type(value) in (int, float) and math.isfinite(value) and value >= 0 else None


def node_loads(record: Mapping[str, Any] | None, nodes: Sequence[str]) -> dict[str, NodeLoad]:
    """Each of `nodes`' load from a job's interference record: its own where the record details it, else
    (the record details only its worst nodes) a bound: the least foreign load of those, the highest steal
    of all. Nodes without samples, and a job without a record, get nothing: no interference recorded."""
    if not isinstance(record, Mapping) or not isinstance(record.get("per_node"), Mapping):
        return {}
    detailed = {str(name): entry for name, entry in record["per_node"].items() if isinstance(entry, Mapping)}
    loads = {}
    for name, entry in detailed.items():
        foreign, steal = _number(entry.get("foreign_cores")), _number(entry.get("steal_pct"))
        if foreign is not None and steal is not None:
            loads[name] = NodeLoad(foreign, steal / 100, excerpt_text(str(entry.get("foreign_top") or ""), 200))
    sampled = _number(record.get("nodes")) or 0
    if sampled > len(detailed) and loads:
        bound = NodeLoad(min(load.foreign_cores for load in loads.values()),
                         (_number(record.get("steal_pct")) or 0.0) / 100, bound=True)
        loads.update({name: bound for name in nodes if name not in loads})
    return {name: loads[name] for name in nodes if name in loads}


def peer_level(loads: Mapping[str, NodeLoad], nodes: Sequence[str]) -> NodeLoad:
    """What the peers measured in the same job had: the median over `nodes` of their foreign load and
    steal, a node known only by a bound counting as quiet (so that the level errs low, and a node's own
    load high: towards 'not decided', never towards a drain)."""
    known = [loads[n] if n in loads and not loads[n].bound else QUIET for n in nodes]
    if not known:
        return QUIET
    return NodeLoad(statistics.median(load.foreign_cores for load in known),
                    statistics.median(load.steal for load in known))


def explicable(load: NodeLoad, peers: NodeLoad, ranks: int, per_rank: bool, flags: Mapping[str, float]) -> float:
    """The largest share of a figure the load beyond the peers' could have taken (see the module); 0 when
    that extra load is below both noisy thresholds."""
    foreign, steal = max(0.0, load.foreign_cores - peers.foreign_cores), max(0.0, load.steal - peers.steal)
    if foreign <= flags["noisy_foreign_cores"] and steal <= flags["noisy_steal"]:
        return 0.0
    cores = foreign + steal * max(1, ranks)
    return min(1.0, cores if per_rank else cores / max(1, ranks))


def cause(node: str, load: NodeLoad, peers: NodeLoad) -> str:
    """'foreign load 0.62 cores on n2 (its peers 0.05; reframe[10926] 0.40), steal 0.0%': what a verdict
    rests on."""
    bound = "up to " if load.bound else ""
    named = f"; {load.top}" if load.top else ""
    return (f"foreign load {bound}{load.foreign_cores:.2f} cores on {node} (its peers {peers.foreign_cores:.2f}"
            f"{named}), steal {bound}{load.steal:.1%} (its peers {peers.steal:.1%})")
