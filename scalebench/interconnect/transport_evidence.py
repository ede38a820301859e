"""Which transport carried a job's messages, from what its MPI printed, against what the stack declares.

A stack of a site file declares `transport:` (between nodes) and optionally `intra_node_transport:`;
scalebench/data/transports.yaml (read by scalebench.site.fabric) says what they may name, the
environment that makes the MPI print its choice, and which atoms a class stands for. A one-node job
must use only the intra-node transport (by default the declared one or its layer's shared memory); a
job across nodes must use the declared one between some ranks and nothing outside the two.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

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
