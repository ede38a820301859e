"""What Slurm already knows about its partitions and nodes, read from its own outputs (Slurm 20.02 to
24.11) rather than typed into a site file: node counts, cores, memory, GPUs, features, time and memory
limits, node states.

The outputs, as these commands write them (`scalebench facts slurm --from DIR` reads DIR/<file>,
`live()` runs the commands):

    scontrol --all --oneliner show partition > scontrol-partition.txt
    scontrol --all --oneliner show node > scontrol-node.txt
    sinfo --all --noheader --Node --format='%N|%P|%T|%c|%m|%G|%f' > sinfo.txt    (optional: node states)

scontrol's default multi-line form (records separated by blank lines, continuation lines indented)
reads the same as `--oneliner` (one record a line). A record is `Key=value` words; a value runs to the
next ` Key=` (a key starts with a capital letter) or to its line's end, so `OS=Linux 5.14.0 #1 SMP`
and `Reason=bad dimm [root@...]` keep their spaces. sinfo's node-oriented lines are node, partition
(`*` after the default one), state, CPUs, memory (MiB), GRES and features.

Every host list goes through scalebench.site.hostlist (ClusterShell's NodeSet). Every input is bounded:
files are read through scalebench.textfile (regular files, at most the limits below), at most
MAX_NODES node records (10^5 nodes take about 5 s of CPU); a value that cannot be (0 sockets, 0 cores,
RealMemory 0, a count beyond any machine) is an InputError naming the file and line, and a garbled or
cut output too (a line that is no `Key=value`, a record without a key every Slurm prints, a last line
without its line end).

partition_facts() gives a partition's facts in the vocabulary of scalebench's site files (max_nodes,
cores_per_node, memory_per_node, max_time_limit_s, gpus) and Slurm's own beside them (sockets,
threads_per_core, max_mem_per_node, features, node_kinds, node_states); nodes that are not all alike
are grouped into NodeKinds, and a Slurm --constraint expression selects among them (constrain()).
"""
from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import time
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

from scalebench import lifetime, textfile
from scalebench.errors import InputError
from scalebench.site import hostlist
from scalebench.validation import did_you_mean, excerpt, excerpt_text

PARTITION_FILE = "scontrol-partition.txt"
NODE_FILE = "scontrol-node.txt"
SINFO_FILE = "sinfo.txt"
SINFO_FORMAT = "%N|%P|%T|%c|%m|%G|%f"
# The commands that write each file (scontrol's --all: hidden partitions too).
COMMANDS: dict[str, tuple[str, ...]] = {
    PARTITION_FILE: ("scontrol", "--all", "--oneliner", "show", "partition"),
    NODE_FILE: ("scontrol", "--all", "--oneliner", "show", "node"),
    SINFO_FILE: ("sinfo", "--all", "--noheader", "--Node", f"--format={SINFO_FORMAT}"),
}

MAX_NODES = 10**6
# scontrol prints about 1.2 KiB per node in either form, sinfo about 100 bytes per node and partition:
# the largest machines (~10^5 nodes) are far below these.
OUTPUT_LIMITS = {PARTITION_FILE: 64 * 2**20, NODE_FILE: 1024 * 2**20, SINFO_FILE: 512 * 2**20}
COMMAND_TIMEOUT_S = 120.0

# What a node can be, far beyond any machine: an SGI UV has 256 sockets, the largest CPUs 192 cores and
# SMT8 (POWER), the largest shared-memory nodes 48 TiB and 8 to 16 GPUs.
MAX_SOCKETS = 1024
MAX_CORES_PER_SOCKET = 4096
MAX_THREADS_PER_CORE = 16
MAX_MEMORY_MIB = 2**30  # 1 PiB
MAX_GPUS_PER_NODE = 1024
# RealMemory=1 is Slurm's default when slurm.conf gives a node none: no memory a compute node has.
MIN_MEMORY_MIB = 64

UNLIMITED = ("UNLIMITED", "INFINITE")
_KEY_START = re.compile(r"[A-Z][A-Za-z0-9_]*=")
_WORD_SPLIT = re.compile(r"\s+(?=[A-Z][A-Za-z0-9_]*=)")
# Keys whose values are free text: a later `Key=` inside one (Reason=NHC: Check=disk) is part of it.
_FREE_TEXT = ("OS", "Reason", "Comment", "Extra")
_INT = re.compile(r"\d{1,12}")
_FEATURE = re.compile(r"[A-Za-z0-9_.:+=/-]{1,128}")
_GRES_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_SLURM_TIME = re.compile(r"(?:(\d{1,5})-)?(?:(\d{1,5}):)?(\d{1,5}):(\d{1,2})")
_SINFO_FLAGS = "*~#%!$@^-+"
_SINFO_PARTITION = re.compile(r"[A-Za-z0-9_.:+=/-]{1,128}\*?")  # the default partition has a * after its name
_SINFO_STATE = re.compile(r"[A-Za-z_*~#%!$@^+-]{1,64}")


def _mib(value: int) -> str:
    return f"{value}MiB"


# --- records: Key=value words, one record a line or a block ---------------------------------------

@dataclass(frozen=True)
class Record:
    """One record of scontrol's output: its values by key, the line each key is on."""

    values: dict[str, str]
    lines: dict[str, int]
    source: str
    first_line: int

    def where(self, key: str | None = None) -> str:
        return f"{self.source} line {self.lines.get(key or '', self.first_line)}"

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)

    def require(self, key: str) -> str:
        if key in self.values:
            return self.values[key]
        first = next(iter(self.values))
        raise InputError(f"{self.where()}: {first}={excerpt_text(self.values[first], 60)} has no {key}= (the output "
                         "is cut, or not scontrol's)")

    def integer(self, key: str, low: int, high: int, what: str = "") -> int:
        text = self.require(key)
        if not _INT.fullmatch(text) or not low <= int(text) <= high:
            raise InputError(f"{self.where(key)}: {key}={excerpt_text(text, 40)} {what or 'is'} not a whole number "
                             f"from {low} to {high}")
        return int(text)


def parse_records(text: str, first_key: str, source: str, limit: int = MAX_NODES) -> list[Record]:
    """The records of scontrol's output, either form: a record starts on a line beginning with
    `first_key=`; indented lines continue it; blank lines separate. InputError naming the source and
    line on anything else, on a last line without its line end (the output was cut) and beyond `limit`
    records."""
    if text and not text.endswith("\n"):
        raise InputError(f"{source} line {text.count(chr(10)) + 1}: the last line has no line end (the output was "
                         "cut while being saved)")
    records: list[Record] = []
    values: dict[str, str] = {}
    lines: dict[str, int] = {}

    def close() -> None:
        if values:
            records.append(Record(dict(values), dict(lines), source, min(lines.values())))
            if len(records) > limit:
                raise InputError(f"{source}: more than {limit} {first_key} records")
            values.clear()
            lines.clear()

    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            close()
            continue
        if not line[0].isspace():
            if not line.startswith(f"{first_key}="):
                raise InputError(f"{source} line {number}: {excerpt_text(line, 60)} is not a {first_key}= record "
                                 "(is this scontrol's output?)")
            close()
        elif not values:
            raise InputError(f"{source} line {number}: an indented line outside a {first_key}= record")
        _read_words(line, number, values, lines, source)
    close()
    if not records:
        raise InputError(f"{source}: no {first_key}= record (is this scontrol's output?)")
    return records


def _read_words(line: str, number: int, values: dict[str, str], lines: dict[str, int], source: str) -> None:
    """The Key=value words of one line into values and lines."""
    words = _WORD_SPLIT.split(line.strip())
    if not _KEY_START.match(words[0]):
        raise InputError(f"{source} line {number}: {excerpt_text(line, 60)} is not Key=value words (garbled or cut?)")
    free: str | None = None  # the free-text key being read on this line
    for word in words:
        key, _, value = word.partition("=")
        value = value.strip()
        if key in values and free is not None:  # `Reason=... State=x`: the text goes on
            values[free] += f" {key}={value}"
            continue
        if key in values and values[key] != value:
            raise InputError(f"{source} line {number}: {key}= twice in one record ({excerpt_text(values[key], 40)}, "
                             f"{excerpt_text(value, 40)})")
        values[key], lines[key] = value, number
        if key in _FREE_TEXT:
            free = key


# --- values ---------------------------------------------------------------------------------------

def parse_slurm_time(text: str, where: str) -> int | None:
    """Seconds of Slurm's [D-][HH:]MM:SS (1-00:00:00, 12:00:00, 30:00); None for UNLIMITED/INFINITE.
    A time of 0 (no job can run) or beyond ten years is an InputError naming `where`."""
    if text.upper() in UNLIMITED:
        return None
    match = _SLURM_TIME.fullmatch(text)
    if not match:
        raise InputError(f"{where}: {excerpt_text(text, 40)} is not a Slurm time (D-HH:MM:SS, HH:MM:SS, MM:SS or "
                         "UNLIMITED)")
    days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if not 0 < total <= 10 * 366 * 86400:
        raise InputError(f"{where}: {text} must be between 1 s and 10 years")
    return total


def _memory(record: Record, key: str) -> int | None:
    """Bytes of a partition's MiB limit, None when it is UNLIMITED or absent."""
    text = record.get(key)
    if text is None or text.upper() in UNLIMITED:
        return None
    return record.integer(key, 1, MAX_MEMORY_MIB, "(MiB) is") * 2**20


def parse_features(text: str, where: str) -> tuple[str, ...]:
    """The comma list of AvailableFeatures/ActiveFeatures (or sinfo's %f), sorted; () for (null)."""
    if text in ("", "(null)"):
        return ()
    features = [f.strip() for f in text.split(",")]
    for feature in features:
        if not _FEATURE.fullmatch(feature):
            raise InputError(f"{where}: {excerpt_text(feature, 40)} is not a node feature (letters, digits, "
                             "'_.:+=/-', in a comma list)")
    return tuple(sorted(set(features)))


def _split_outside_parens(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    return parts + [text[start:]]


def parse_gres(text: str, where: str) -> tuple[tuple[str, int], ...]:
    """The GPUs of a Gres value (gpu:h100:4(S:0-1), gpu:4, gpu:a100:2,gpu:v100:2, (null)) as (type, count)
    pairs, type '' when untyped; other GRES (nvme:1, shard:8) are not GPUs."""
    if text in ("", "(null)", "N/A"):
        return ()
    gpus: dict[str, int] = {}
    for entry in _split_outside_parens(text):
        base = entry.split("(", 1)[0].strip()
        parts = base.split(":")
        if not all(_GRES_NAME.fullmatch(part) for part in parts):
            raise InputError(f"{where}: {excerpt_text(entry, 40)} is not a GRES (name[:type][:count])")
        if parts[0] != "gpu":
            continue
        count = 1
        if len(parts) > 1 and parts[-1].isdigit():
            count = int(parts.pop())
        kind = ":".join(parts[1:])
        if count > MAX_GPUS_PER_NODE:
            raise InputError(f"{where}: {excerpt_text(entry, 40)} has more than {MAX_GPUS_PER_NODE} GPUs")
        if count:
            gpus[kind] = gpus.get(kind, 0) + count
    return tuple(sorted(gpus.items()))


# The states of a node in which it runs no job: scontrol's words (IDLE+DRAIN, DOWN+NOT_RESPONDING) and
# sinfo's (drained, draining, down*).
_UNAVAILABLE = {"down", "drain", "drained", "draining", "drng", "fail", "failing", "future", "inval", "invalid",
                "maint", "not_responding", "no_respond", "unknown", "unk"}


def is_available(state: str) -> bool:
    """Whether a node in this state takes jobs: not down, drained, failed, not responding (`*`), ..."""
    words = state.lower().split("+")
    if any(word.endswith("*") for word in words):
        return False
    return not any(word.rstrip(_SINFO_FLAGS) in _UNAVAILABLE for word in words)


# --- the model ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SlurmNode:
    """One NodeName= record of `scontrol show node`."""

    name: str
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    memory_mib: int  # RealMemory
    gpus: tuple[tuple[str, int], ...] = ()  # Gres: (type or '', count)
    features: tuple[str, ...] = ()  # AvailableFeatures, sorted
    active_features: tuple[str, ...] = ()
    partitions: tuple[str, ...] = ()
    state: str = ""
    arch: str = ""
    cpus: int | None = None  # CPUTot
    boards: int = 1
    where: str = ""  # file and line of its record

    @property
    def cores(self) -> int:
        """Physical cores: Sockets x CoresPerSocket (Sockets counts the node's, over all its boards)."""
        return self.sockets * self.cores_per_socket

    @property
    def shape(self) -> tuple[Any, ...]:
        """What nodes of one kind share."""
        return (self.sockets, self.cores_per_socket, self.threads_per_core, self.memory_mib, self.gpus, self.features)


@dataclass(frozen=True)
class NodeKind:
    """Nodes alike: sockets, cores per socket, threads per core, RealMemory, GPUs (GRES type and count)
    and features; with their names."""

    sockets: int
    cores_per_socket: int
    threads_per_core: int
    memory_mib: int
    gpus: tuple[tuple[str, int], ...]
    features: tuple[str, ...]
    nodes: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.nodes)

    @cached_property
    def nodelist(self) -> str:
        return hostlist.fold(self.nodes)

    @property
    def cores_per_node(self) -> int:
        return self.sockets * self.cores_per_socket

    @property
    def memory_bytes(self) -> int:
        return self.memory_mib * 2**20

    @property
    def gpu_count(self) -> int:
        return sum(count for _, count in self.gpus)

    @property
    def gpu_type(self) -> str:
        """The GRES type of its GPUs when they have one, the same for all; else ''."""
        return self.gpus[0][0] if len(self.gpus) == 1 else ""

    def gpu_facts(self) -> dict[str, Any]:
        return {"count": self.gpu_count, **({"type": self.gpu_type} if self.gpu_type else {})}

    def to_facts(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"nodes": self.count, "nodelist": self.nodelist, "cores_per_node": self.cores_per_node,
                                 "memory_per_node": _mib(self.memory_mib), "sockets": self.sockets,
                                 "threads_per_core": self.threads_per_core, "features": list(self.features)}
        if self.gpus:
            facts["gpus"] = self.gpu_facts()
        return facts


def group_kinds(nodes: Iterable[SlurmNode]) -> tuple[NodeKind, ...]:
    """The nodes grouped by kind, smallest memory first (then fewest cores, then by their names)."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for node in nodes:
        groups.setdefault(node.shape, []).append(node.name)
    kinds = [NodeKind(*shape, nodes=tuple(names)) for shape, names in groups.items()]
    return tuple(sorted(kinds, key=lambda k: (k.memory_mib, k.cores_per_node, k.gpu_count, k.features, k.nodes[0])))


@dataclass(frozen=True)
class SlurmPartition:
    """One PartitionName= record of `scontrol show partition`, with the kinds and states of its nodes."""

    name: str
    nodes: tuple[str, ...]
    kinds: tuple[NodeKind, ...]
    max_time_s: int | None  # None: UNLIMITED
    default_time_s: int | None = None
    max_mem_per_node: int | None = None  # bytes; None: UNLIMITED
    def_mem_per_node: int | None = None
    max_mem_per_cpu: int | None = None
    default: bool = False
    state: str = "UP"
    over_subscribe: str = ""
    max_nodes_per_job: int | None = None  # MaxNodes; None: UNLIMITED
    node_states: dict[str, str] = field(default_factory=dict)  # node -> state
    where: str = ""
    constraint: str = ""  # the --constraint that selected these nodes, if one did

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(sorted({f for kind in self.kinds for f in kind.features}))

    def unavailable(self) -> list[str]:
        """Its nodes that take no job (down, drained, ...), in its order."""
        return [name for name in self.nodes if not is_available(self.node_states.get(name, ""))]


@dataclass(frozen=True)
class SlurmCluster:
    """Everything read: partitions in Slurm's order, nodes by name, and where each came from."""

    partitions: dict[str, SlurmPartition]
    nodes: dict[str, SlurmNode]
    sources: dict[str, str]  # PARTITION_FILE / NODE_FILE / SINFO_FILE -> the file or command read
    states_from: str = NODE_FILE  # SINFO_FILE when sinfo's output gave the node states

    def partition(self, name: str) -> SlurmPartition:
        """The partition named so; InputError listing the known ones otherwise."""
        if name not in self.partitions:
            known = list(self.partitions)
            raise InputError(f"--partition: no partition {excerpt(name)} in {self.sources[PARTITION_FILE]} "
                             f"(partitions: {', '.join(known)}){did_you_mean(name, known)}")
        return self.partitions[name]


# --- scontrol show node ---------------------------------------------------------------------------

def node_from_record(record: Record) -> SlurmNode:
    name = record.require("NodeName")
    if not hostlist.NODE_NAME.fullmatch(name):
        raise InputError(f"{record.where('NodeName')}: NodeName={excerpt_text(name, 40)} is not a node name")
    where = record.where("NodeName")
    features = record.get("AvailableFeatures", record.get("Features", ""))
    partitions = record.get("Partitions", "") or ""
    cpus = record.get("CPUTot")
    return SlurmNode(
        name=name,
        sockets=record.integer("Sockets", 1, MAX_SOCKETS),
        cores_per_socket=record.integer("CoresPerSocket", 1, MAX_CORES_PER_SOCKET),
        threads_per_core=record.integer("ThreadsPerCore", 1, MAX_THREADS_PER_CORE),
        memory_mib=record.integer("RealMemory", 1, MAX_MEMORY_MIB, "(MiB) is"),
        gpus=parse_gres(record.get("Gres", "") or "", record.where("Gres")),
        features=parse_features(features or "", record.where("AvailableFeatures")),
        active_features=parse_features(record.get("ActiveFeatures", features) or "", record.where("ActiveFeatures")),
        partitions=tuple(p for p in partitions.split(",") if p),
        state=record.require("State"),
        arch=record.get("Arch", "") or "",
        cpus=record.integer("CPUTot", 1, MAX_SOCKETS * MAX_CORES_PER_SOCKET * MAX_THREADS_PER_CORE) if cpus else None,
        boards=record.integer("Boards", 1, MAX_SOCKETS) if record.get("Boards") else 1,
        where=where)


def parse_nodes(text: str, source: str = NODE_FILE) -> dict[str, SlurmNode]:
    """The nodes of `scontrol show node` (either form) by name; a name twice is an InputError."""
    nodes: dict[str, SlurmNode] = {}
    for record in parse_records(text, "NodeName", source):
        node = node_from_record(record)
        if node.name in nodes:
            raise InputError(f"{node.where}: node {node.name} twice (also {nodes[node.name].where})")
        nodes[node.name] = node
    return nodes


# --- scontrol show partition ----------------------------------------------------------------------

def _flag(record: Record, key: str) -> bool:
    value = (record.get(key) or "NO").upper()
    if value not in ("YES", "NO"):
        raise InputError(f"{record.where(key)}: {key}={excerpt_text(value, 40)} is neither YES nor NO")
    return value == "YES"


def _optional_count(record: Record, key: str) -> int | None:
    text = record.get(key)
    if text is None or text.upper() in UNLIMITED:
        return None
    return record.integer(key, 0, MAX_NODES)


def partition_from_record(record: Record, nodes: Mapping[str, SlurmNode], states: Mapping[str, str],
                          node_source: str) -> SlurmPartition:
    """A partition with its nodes from `nodes` (scontrol show node) and their states from `states`."""
    name = record.require("PartitionName")
    if not _FEATURE.fullmatch(name):
        raise InputError(f"{record.where('PartitionName')}: PartitionName={excerpt_text(name, 40)} is not a "
                         "partition name")
    listed = record.require("Nodes")
    names = () if listed in ("", "(null)") else tuple(hostlist.expand(listed, f"{record.where('Nodes')}: Nodes",
                                                                      MAX_NODES))
    total = _optional_count(record, "TotalNodes")
    if total is not None and total != len(names):
        raise InputError(f"{record.where('TotalNodes')}: partition {name} has TotalNodes={total} but Nodes= names "
                         f"{len(names)}")
    missing = [n for n in names if n not in nodes]
    if missing:
        raise InputError(f"{record.where('Nodes')}: partition {name} has node {missing[0]}"
                         f"{f' and {len(missing) - 1} more' if len(missing) > 1 else ''} that {node_source} does not "
                         "describe (were both saved at the same time, on the same cluster?)")
    max_time = record.require("MaxTime")
    default_time = record.get("DefaultTime") or "NONE"
    return SlurmPartition(
        name=name, nodes=names, kinds=group_kinds(nodes[n] for n in names),
        max_time_s=parse_slurm_time(max_time, f"{record.where('MaxTime')}: MaxTime"),
        default_time_s=None if default_time.upper() == "NONE" else parse_slurm_time(
            default_time, f"{record.where('DefaultTime')}: DefaultTime"),
        max_mem_per_node=_memory(record, "MaxMemPerNode"), def_mem_per_node=_memory(record, "DefMemPerNode"),
        max_mem_per_cpu=_memory(record, "MaxMemPerCPU"), default=_flag(record, "Default"),
        state=record.require("State"), over_subscribe=record.get("OverSubscribe", "") or "",
        max_nodes_per_job=_optional_count(record, "MaxNodes"),
        node_states={n: states.get(n, nodes[n].state) for n in names}, where=record.where("PartitionName"))


# --- sinfo ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SinfoLine:
    """One line of `sinfo --noheader --Node --format='%N|%P|%T|%c|%m|%G|%f'`."""

    nodes: tuple[str, ...]
    partition: str
    default: bool
    state: str
    cpus: int
    memory_mib: int
    gpus: tuple[tuple[str, int], ...]
    features: tuple[str, ...]
    where: str


def parse_sinfo(text: str, source: str = SINFO_FILE) -> list[SinfoLine]:
    """sinfo's lines in SINFO_FORMAT; InputError naming the line of one that is not."""
    if text and not text.endswith("\n"):
        raise InputError(f"{source} line {text.count(chr(10)) + 1}: the last line has no line end (the output was "
                         "cut while being saved)")
    found: list[SinfoLine] = []
    listed = 0
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        fields = line.strip().split("|")
        if len(fields) != 7:
            raise InputError(f"{where}: {excerpt_text(line, 60)} is not sinfo's --format='{SINFO_FORMAT}' "
                             f"({len(fields)} fields, not 7)")
        node, partition, state, cpus, memory, gres, features = (f.strip() for f in fields)
        if not _SINFO_PARTITION.fullmatch(partition) or not _SINFO_STATE.fullmatch(state):
            raise InputError(f"{where}: {excerpt_text(line, 60)} is not sinfo's --format='{SINFO_FORMAT}'")
        names = tuple(hostlist.expand(node, f"{where}: node", MAX_NODES - listed))
        listed += len(names)
        for value, what in ((cpus, "CPUs (%c)"), (memory, "memory (%m, MiB)")):
            if not _INT.fullmatch(value) or int(value) < 1:
                raise InputError(f"{where}: {excerpt_text(value, 20)} is not a number of {what}")
        found.append(SinfoLine(names, partition.rstrip("*"), partition.endswith("*"), state, int(cpus), int(memory),
                               parse_gres(gres, where), parse_features(features, where), where))
    if not found:
        raise InputError(f"{source}: no line of sinfo's --format='{SINFO_FORMAT}'")
    return found


def sinfo_states(lines: Sequence[SinfoLine], nodes: Mapping[str, SlurmNode], node_source: str) -> dict[str, str]:
    """Each node's state by sinfo; InputError where sinfo and scontrol disagree about a node (saved at
    different times, or from different clusters)."""
    states: dict[str, str] = {}
    for line in lines:
        for name in line.nodes:
            node = nodes.get(name)
            if node is None:
                raise InputError(f"{line.where}: node {name} is not in {node_source} (were both saved at the same "
                                 "time, on the same cluster?)")
            if line.memory_mib != node.memory_mib:
                raise InputError(f"{line.where}: node {name} has {line.memory_mib} MiB here and RealMemory="
                                 f"{node.memory_mib} in {node_source} (were both saved at the same time?)")
            states[name] = line.state
    return states


# --- reading: saved outputs, or the commands run now ----------------------------------------------

def cluster_from_outputs(partition_text: str, node_text: str, sinfo_text: str | None = None,
                         sources: Mapping[str, str] | None = None) -> SlurmCluster:
    """The cluster of scontrol's partition and node outputs, with sinfo's node states when given.
    `sources` names each output in messages (default: its file name)."""
    named = {key: key for key in COMMANDS} | dict(sources or {})
    nodes = parse_nodes(node_text, named[NODE_FILE])
    states: dict[str, str] = {}
    if sinfo_text is not None:
        states = sinfo_states(parse_sinfo(sinfo_text, named[SINFO_FILE]), nodes, named[NODE_FILE])
    partitions: dict[str, SlurmPartition] = {}
    for record in parse_records(partition_text, "PartitionName", named[PARTITION_FILE]):
        partition = partition_from_record(record, nodes, states, named[NODE_FILE])
        if partition.name in partitions:
            raise InputError(f"{partition.where}: partition {partition.name} twice")
        partitions[partition.name] = partition
    if sinfo_text is None:
        named.pop(SINFO_FILE, None)
    return SlurmCluster(partitions, nodes, named, SINFO_FILE if sinfo_text is not None else NODE_FILE)


def read_dir(directory: str | Path) -> SlurmCluster:
    """The outputs saved in `directory` (PARTITION_FILE, NODE_FILE and optionally SINFO_FILE, as
    COMMANDS write them)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InputError(f"--from: {directory} is not a directory")
    texts: dict[str, str | None] = {}
    for name, command in COMMANDS.items():
        path = folder / name
        if not path.exists() and name == SINFO_FILE:
            texts[name] = None
            continue
        if not path.exists():
            raise InputError(f"--from: no {path}; save it with `{_shell(command)} > {path}`")
        texts[name] = textfile.read_text(path, "--from", OUTPUT_LIMITS[name])
    partition_text, node_text = texts[PARTITION_FILE], texts[NODE_FILE]
    assert partition_text is not None and node_text is not None
    return cluster_from_outputs(partition_text, node_text, texts[SINFO_FILE],
                                {name: str(folder / name) for name in COMMANDS})


def _shell(command: Sequence[str]) -> str:
    return " ".join(f"'{word}'" if "%" in word or "|" in word else word for word in command)


def run_command(argv: Sequence[str], environ: Mapping[str, str], timeout_s: float, limit: int) -> str:
    """The stdout of a Slurm client, at most `limit` bytes within `timeout_s`; InputError in one line
    naming a missing command, a timeout, a larger output or a failure (with its last line of stderr)."""
    shown = _shell(argv)
    program = shutil.which(argv[0], path=environ.get("PATH", os.defpath))
    if program is None:
        raise InputError(f"{argv[0]}: not found on PATH (run this where Slurm's clients are, or save their "
                         "outputs there and read them with --from DIR)")
    try:
        proc = lifetime.spawn([program, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=dict(environ))
    except OSError as err:
        raise InputError(f"cannot run {argv[0]}: {err.strerror}") from None
    out, err = bytearray(), bytearray()
    with proc:
        try:
            problem = _read_within(proc, shown, out, err, time.monotonic() + timeout_s, timeout_s, limit)
        except BaseException:  # interrupted: the client is ended, not waited for
            proc.kill()
            raise
        if problem:
            proc.kill()
    if problem:
        raise InputError(problem)
    if proc.returncode != 0:
        last = (err.decode(errors="replace").strip() or out.decode(errors="replace").strip()).splitlines()
        raise InputError(f"`{shown}` exited {proc.returncode}: {excerpt_text(last[-1] if last else '', 200)}")
    return textfile.decode(bytes(out), shown)


def _read_within(proc: subprocess.Popen, shown: str, out: bytearray, err: bytearray, deadline: float,
                 timeout_s: float, limit: int) -> str:
    """Read the client's stdout and stderr into `out` and `err` until it ends; what went wrong, or ''."""
    problem = ""
    with selectors.DefaultSelector() as selector:
        assert proc.stdout is not None and proc.stderr is not None
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        while selector.get_map() and not problem:
            left = deadline - time.monotonic()
            if left <= 0:
                problem = f"`{shown}` did not answer within {timeout_s:g} s (is slurmctld up?)"
                break
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if len(err) > 1 << 16:
                    del err[:-(1 << 16)]
                if len(out) > limit:
                    problem = f"`{shown}` printed more than {limit // 2**20} MiB"
    if not problem:
        try:
            proc.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            problem = f"`{shown}` did not end within {timeout_s:g} s"
    return problem


def live(environ: Mapping[str, str] | None = None, timeout_s: float = COMMAND_TIMEOUT_S) -> SlurmCluster:
    """The cluster as Slurm's clients on PATH say now (COMMANDS, each within `timeout_s`), against the
    slurm.conf that SLURM_CONF names when set."""
    env = dict(os.environ if environ is None else environ)
    conf = env.get("SLURM_CONF")
    texts = {name: run_command(command, env, timeout_s, OUTPUT_LIMITS[name]) for name, command in COMMANDS.items()}
    suffix = f" (SLURM_CONF={conf})" if conf else ""
    return cluster_from_outputs(texts[PARTITION_FILE], texts[NODE_FILE], texts[SINFO_FILE],
                                {name: f"`{_shell(command)}`{suffix}" for name, command in COMMANDS.items()})


# --- --constraint ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Constraint:
    """A Slurm --constraint of features: `a`, `a&b`, `a|b`, `[a|b]` (matching OR: every node of a job
    has the same one), and these joined by one operator (`[a|b]&c`). Each term is a tuple of features
    of which a node needs one."""

    text: str
    terms: tuple[tuple[str, ...], ...]
    any_term: bool  # terms joined by | (a node needs one term), else by & (every term)

    def matches(self, features: Iterable[str]) -> bool:
        have = set(features)
        found = (any(f in have for f in term) for term in self.terms)
        return any(found) if self.any_term else all(found)

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(f for term in self.terms for f in term)


MAX_CONSTRAINT_CHARS = 1024
_UNSUPPORTED = ((re.compile(r"\*"), "node counts (feature*N)"), (re.compile(r"[()]"), "parentheses"),
                (re.compile(r"!"), "negation (!feature)"), (re.compile(r","), "commas"),
                (re.compile(r"\s"), "spaces"))


def parse_constraint(text: str, where: str = "--constraint") -> Constraint:
    """A Constraint; InputError naming what scalebench does not select by (node counts a*N, parentheses,
    !, mixed & and | outside brackets, nested brackets) or what is no feature."""
    if len(text) > MAX_CONSTRAINT_CHARS:
        raise InputError(f"{where}: {excerpt(text)} is longer than {MAX_CONSTRAINT_CHARS} characters")
    for pattern, what in _UNSUPPORTED:
        if pattern.search(text):
            raise InputError(f"{where}: {excerpt(text)} has {what}, which scalebench does not select nodes by; "
                             "write features joined by & or |, or [a|b]")
    terms: list[tuple[str, ...]] = []
    operators: set[str] = set()
    for match in re.finditer(r"\[([^\[\]]*)\]|([^&|\[\]]+)|([&|])|(.)", text):
        bracket, word, operator, other = match.groups()
        if other is not None:
            raise InputError(f"{where}: {excerpt(text)} has an unbalanced or nested bracket, which scalebench does not "
                             "read")
        if operator:
            operators.add(operator)
            continue
        members = tuple(bracket.split("|")) if bracket is not None else (word,)
        if bracket is not None and "&" in bracket:
            raise InputError(f"{where}: {excerpt(text)} has & inside brackets (counts of several features), which "
                             "scalebench does not select nodes by")
        for member in members:
            if not _FEATURE.fullmatch(member):
                raise InputError(f"{where}: {excerpt(member)} in {excerpt(text)} is not a feature name")
        terms.append(members)
    if not terms or len(operators) > 1:
        raise InputError(f"{where}: {excerpt(text)} " + ("mixes & and | outside brackets, which scalebench does not "
                                                          "read; write one of them, or [a|b]&c"
                                                          if len(operators) > 1 else "names no feature"))
    bare = re.sub(r"\[[^\[\]]*\]", "x", text)
    if not re.fullmatch(r"[^&|]+(?:[&|][^&|]+)*", bare):
        raise InputError(f"{where}: {excerpt(text)} has an operator without a feature on each side")
    return Constraint(text, tuple(terms), operators == {"|"})


def constrain(partition: SlurmPartition, constraint: str | Constraint) -> SlurmPartition:
    """The partition narrowed to its nodes whose features satisfy `constraint` (a matching OR, [a|b],
    keeps the nodes of each alternative: node_kinds tell them apart); InputError when none does, naming
    the features its nodes lack."""
    rule = parse_constraint(constraint) if isinstance(constraint, str) else constraint
    kinds = tuple(kind for kind in partition.kinds if rule.matches(kind.features))
    if not kinds:
        known = partition.features
        unknown = [f for f in rule.features if f not in known]
        lacking = "".join(f"; none has {f!r}{did_you_mean(f, known)}" for f in unknown)
        raise InputError(f"--constraint: no node of partition {partition.name} satisfies {rule.text!r}{lacking} "
                         f"(its features: {', '.join(known) or 'none'})")
    chosen = {name for kind in kinds for name in kind.nodes}
    names = tuple(name for name in partition.nodes if name in chosen)
    return replace(partition, nodes=names, kinds=kinds, constraint=rule.text,
                   node_states={name: partition.node_states[name] for name in names})


# --- facts ----------------------------------------------------------------------------------------

def _check_kind(partition: SlurmPartition, kind: NodeKind) -> None:
    """What a node of an HPL partition must have: memory beyond Slurm's default of 1 MiB."""
    if kind.memory_mib < MIN_MEMORY_MIB:
        raise InputError(f"partition {partition.name}: nodes {kind.nodelist} have RealMemory={kind.memory_mib} MiB, "
                         f"less than any compute node has ({MIN_MEMORY_MIB} MiB; Slurm's default is 1 when "
                         "slurm.conf gives none): set RealMemory in slurm.conf, or write memory_per_node yourself")


def partition_facts(partition: SlurmPartition, constraint: str | Constraint | None = None) -> dict[str, Any]:
    """The facts of a partition (of its nodes that satisfy `constraint`, when given) in the vocabulary
    of scalebench's site files: max_nodes (its node count), cores_per_node (Sockets x CoresPerSocket),
    memory_per_node (RealMemory, in MiB), max_time_limit_s (MaxTime; absent when UNLIMITED), gpus
    ({count, type} from Gres) when its nodes have GPUs, max_mem_per_node (MaxMemPerNode) when limited; and
    under `slurm`, for the record, Slurm's beside them: sockets, threads_per_core, def_mem_per_node and
    max_mem_per_cpu when limited, features, nodelist, node_states (how many nodes in each state) and
    unavailable_nodes (down, drained, ...).

    Nodes that are not all alike are listed as node_kinds (smallest memory first) and the top level
    says what every node has at least, as HPL is sized for the smallest: the fewest cores, the least
    memory, the features all share, GPUs only when every node has some (the fewest; their type when
    one); sockets and threads_per_core only when all kinds agree. InputError for a partition with no
    nodes, and for nodes without their memory (RealMemory below MIN_MEMORY_MIB)."""
    chosen = constrain(partition, constraint) if constraint else partition
    if not chosen.nodes:
        raise InputError(f"partition {partition.name}: no nodes ({partition.where}: Nodes=(null))")
    kinds = chosen.kinds
    for kind in kinds:
        _check_kind(chosen, kind)
    facts: dict[str, Any] = {"max_nodes": len(chosen.nodes),
                             "cores_per_node": min(kind.cores_per_node for kind in kinds),
                             "memory_per_node": _mib(min(kind.memory_mib for kind in kinds))}
    if chosen.max_time_s is not None:
        facts["max_time_limit_s"] = chosen.max_time_s
    if all(kind.gpus for kind in kinds):
        types = {kind.gpu_type for kind in kinds}
        facts["gpus"] = {"count": min(kind.gpu_count for kind in kinds),
                         **({"type": types.pop()} if len(types) == 1 and "" not in types else {})}
    record: dict[str, Any] = {}  # Slurm's own facts, for the record (the site key `slurm`)
    for key in ("sockets", "threads_per_core"):
        values = {getattr(kind, key) for kind in kinds}
        if len(values) == 1:
            record[key] = values.pop()
    if chosen.max_mem_per_node is not None:
        facts["max_mem_per_node"] = _mib(chosen.max_mem_per_node // 2**20)
    for key, value in (("def_mem_per_node", chosen.def_mem_per_node), ("max_mem_per_cpu", chosen.max_mem_per_cpu)):
        if value is not None:
            record[key] = _mib(value // 2**20)
    if chosen.max_nodes_per_job is not None and chosen.max_nodes_per_job < len(chosen.nodes):
        record["max_nodes_per_job"] = chosen.max_nodes_per_job
    record["features"] = sorted(set.intersection(*(set(kind.features) for kind in kinds)))
    record["nodelist"] = hostlist.fold(chosen.nodes)
    if len(kinds) > 1:
        facts["node_kinds"] = [kind.to_facts() for kind in kinds]
    counts: dict[str, int] = {}
    for name in chosen.nodes:
        state = chosen.node_states.get(name, "").lower() or "unknown"
        counts[state] = counts.get(state, 0) + 1
    record["node_states"] = dict(sorted(counts.items()))
    unavailable = chosen.unavailable()
    if unavailable:
        record["unavailable_nodes"] = hostlist.fold(unavailable)
    facts["slurm"] = record
    return facts


def _label(cluster: SlurmCluster, key: str) -> str:
    """A source as a comment names it: the file's name, or the command run."""
    source = cluster.sources.get(key, key)
    return f"`{' '.join(COMMANDS[key][:1] + COMMANDS[key][3:5])}`" if source.startswith("`") else Path(source).name


def facts_sources(cluster: SlurmCluster, partition: SlurmPartition, facts: Mapping[str, Any],
                  constraint: str | Constraint | None = None) -> str:
    """One line: where each fact of `partition` came from, and what its reader must know of them."""
    gres = ", Gres" if "gpus" in facts or any("gpus" in kind for kind in facts.get("node_kinds", ())) else ""
    parts = [f"{partition.name}{' (the default partition)' if partition.default else ''}"
             + (f", its nodes with --constraint={getattr(constraint, 'text', constraint)}" if constraint else "")
             + f": Nodes, MaxTime{', MaxMemPerNode' if 'max_mem_per_node' in facts else ''} from "
             + _label(cluster, PARTITION_FILE),
             f"Sockets x CoresPerSocket, RealMemory, ThreadsPerCore, AvailableFeatures{gres} from "
             + _label(cluster, NODE_FILE),
             f"states from {_label(cluster, cluster.states_from)}"]
    if "max_time_limit_s" not in facts:
        parts.append("MaxTime=UNLIMITED, so no max_time_limit_s")
    if "node_kinds" in facts:
        parts.append(f"{len(facts['node_kinds'])} kinds of node: the top level is what every node has at least")
    record = facts.get("slurm", {})
    if "max_nodes_per_job" in record:
        parts.append(f"MaxNodes={record['max_nodes_per_job']} holds a job to fewer than max_nodes")
    if "unavailable_nodes" in record:
        parts.append(f"max_nodes counts {record['unavailable_nodes']}, which take no job now")
    return "; ".join(parts)


class FactsDumper(yaml.SafeDumper):
    """Lists and mappings of plain values in flow style (features: [a, b], gpus: {count: 4}), the rest
    as blocks; no aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def facts_yaml(entries: Sequence[tuple[str, Mapping[str, Any], str]], header: Sequence[str] = ()) -> str:
    """A YAML document `partitions: {NAME: facts}` from (name, facts, comment) entries, each partition
    after its comment line, to paste into a facts file; `header` lines are comments at its top."""
    lines = [f"# {line}" for line in header] + ["partitions:"]
    for name, facts, comment in entries:
        lines.append(f"  # {comment}")
        block = yaml.dump({name: dict(facts)}, Dumper=FactsDumper, sort_keys=False, default_flow_style=None,
                          width=2**16, allow_unicode=False)
        lines += [f"  {line}" for line in block.splitlines()]
    return "\n".join(lines) + "\n"
