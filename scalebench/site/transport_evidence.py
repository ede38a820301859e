"""Which transport carried a job's messages, from what its MPI printed, against what the stack declares.

A stack of a site file declares `transport:` (between nodes) and optionally `intra_node_transport:`;
scalebench/data/transports.yaml (read by scalebench.site.fabric) says what they may name, the
environment that makes the MPI print its choice, and which atoms a class stands for. A one-node job
must use only the intra-node transport (by default the declared one or its layer's shared memory); a
job across nodes must use the declared one between some ranks and nothing outside the two.

Only a job whose stack declares a transport prints evidence, and only from its first and last rank
(EvidencePlan): what it writes stays a few KB whatever the job's rank count.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping

from scalebench.site.fabric import transports

# [host:pid] (Open MPI), [time] [host:pid:thread] (UCX, which pads a short pid with spaces: [vm:388  :0]).
_LINE_PREFIX = r"\[(?:[\d.]+\]\s*\[)?(?P<host>[^\s:\]]+):(?P<pid>\d+)\s*[:\d]*\]"
# Open MPI ob1: one line per peer a rank sends to; its OFI MTL: the provider; UCX: each endpoint's lanes.
_BML_RE = re.compile(_LINE_PREFIX + r".*?mca: bml: Using (?P<name>[\w-]+) btl for send to")
_MTL_OFI_RE = re.compile(_LINE_PREFIX + r".*?mtl:ofi:prov: (?P<name>[\w-]+)")
_UCX_EP_RE = re.compile(_LINE_PREFIX + r".*?UCX\s+INFO\s+ep_cfg\[\d+\]: (?P<lanes>.*)$")
_UCX_LANE_RE = re.compile(r"(\w+)\(([^)]*)\)")


@dataclass(frozen=True)
class Evidence:
    hosts: dict[str, frozenset[str]]  # atom -> hosts whose ranks selected it (loopback left out)
    ranks: int  # processes that printed evidence

    def summary(self) -> str:
        """One line for perflogs and reports, e.g. 'ucx:cma, ucx:sysv (2 processes on vm)'."""
        if not self.hosts:
            return "none printed"
        hosts = sorted(set().union(*self.hosts.values()))
        where = hosts[0] if len(hosts) == 1 else f"{len(hosts)} hosts"
        return f"{', '.join(sorted(self.hosts))} ({self.ranks} processes on {where})"


def evidence(text: str) -> Evidence:
    """The transports an MPI job's stderr says its processes selected (transports.yaml's evidence_env)."""
    table = transports()
    hosts: dict[str, set[str]] = defaultdict(set)
    processes = set()

    def seen(atom: str, match: re.Match) -> None:
        processes.add((match["host"], match["pid"]))
        if atom not in table.loopback:
            hosts[atom].add(match["host"])

    for line in text.splitlines():
        if (match := _BML_RE.search(line)):
            seen(f"btl:{match['name']}", match)
        elif (match := _MTL_OFI_RE.search(line)):
            seen(f"ofi:{match['name']}", match)  # the core provider: tcp of "tcp;ofi_rxm"
        elif (match := _UCX_EP_RE.search(line)):
            lanes = dict(_UCX_LANE_RE.findall(match["lanes"]))
            for lane in (lanes.get("tag") or lanes.get("am") or "").split():  # MPI messages: tag matching
                seen(f"ucx:{lane.split('/', 1)[0]}", match)
    return Evidence({atom: frozenset(h) for atom, h in hosts.items()}, len(processes))


def verdict(stack: str, declared: str, intra_node: str | None, found: Evidence, across_nodes: bool) -> str | None:
    """None when the job used what the stack declares; otherwise the one line sanity fails with."""
    table = transports()
    between = table.atoms(declared)
    within = table.atoms(intra_node) if intra_node else between | table.atoms(
        table.shared_memory.get(table.layer(declared), ""))
    if not found.hosts:
        return (f"stack {stack} declared {declared} but its MPI printed no transport evidence (Open MPI's BTLs "
                f"or OFI MTL, or UCX, with {', '.join(table.evidence_env)} set)")
    allowed = between | within if across_nodes else within
    wrong = sorted(set(found.hosts) - allowed)
    if wrong:
        def selected(atom: str) -> str:
            layer, name = atom.split(":", 1)
            on = ", ".join(sorted(found.hosts[atom])[:3]) + (" ..." if len(found.hosts[atom]) > 3 else "")
            return f"{table.layers.get(layer, layer)} selected {name} (on {on})"
        expected = declared if across_nodes or not intra_node else intra_node
        own = "" if ":" in expected else " (the MPI's own)"
        return f"stack {stack} declared {expected}{own} but {'; '.join(selected(atom) for atom in wrong)}"
    if across_nodes and not between & set(found.hosts):
        return f"stack {stack} declared {declared} but no ranks used it between nodes ({found.summary()})"
    return None


@dataclass(frozen=True)
class EvidencePlan:
    """How a job proves the transport its stack declares: the variables that make its MPI print what it
    selected (those the stack does not set itself), set in the first rank (on the first node) and the
    last (on the last node) only, whose peers span the job's nodes (transports.yaml says why)."""

    declared: str
    variables: Mapping[str, str] = field(default_factory=dict)
    stack_sets: tuple[str, ...] = ()  # evidence variables the stack sets itself, in every rank

    def ranks(self, tasks: int) -> tuple[int, ...]:
        """The ranks that get the variables; none in a one-rank job, which sends to no other."""
        return tuple(sorted({0, tasks - 1})) if tasks > 1 else ()

    def estimated_bytes(self, tasks: int) -> int:
        """What the job's ranks print, from transports.yaml's measured volumes of the declared layer: each
        printing rank its own lines and one per peer (all others, at most)."""
        table = transports()
        volume = table.volumes[table.layer(self.declared)]
        printing = tasks if self.stack_sets else len(self.ranks(tasks))
        return printing * (volume.per_rank_bytes + volume.per_peer_bytes * (tasks - 1))

    def to_json(self, tasks: int) -> dict[str, Any]:
        return {"transport": self.declared, "ranks": list(self.ranks(tasks)), "variables": dict(self.variables),
                "stack_sets": list(self.stack_sets), "estimated_bytes": self.estimated_bytes(tasks)}


def evidence_plan(declared: str, stack_env: Mapping[str, str]) -> EvidencePlan | None:
    """The evidence of a job of a stack declaring `declared` ('' : none, and nothing printed)."""
    if not declared:
        return None
    env = transports().evidence_env
    return EvidencePlan(declared, {name: value for name, value in env.items() if name not in stack_env},
                        tuple(name for name in env if name in stack_env))
