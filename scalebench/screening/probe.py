"""The screening probe (scripts/screen-probe.c): its settings (site_configs/screening.yaml), its
command line, how long it runs, and what its output says about every node and every pair of nodes.

The output is read as untrusted text: every line is one of the kinds the probe prints, every value a
finite number within physical sense, every node named once and every pair between two of them, and
the closing `end` line present (without it the job was cut short). Anything else is an InputError
naming the line.

Version 2 (the probe now) gives every figure for each pass too (`*_by_pass`, one value per pass), the
re-measurements a flag is confirmed by (scalebench.screening.verdict); version 1 (older run reports)
has the figures over all passes alone, and is read as it was.
"""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.units import parse_duration
from scalebench.validation import excerpt, excerpt_text

VERSION = 2
VERSIONS = (1, 2)  # what this scalebench reads
PASS_SUFFIX = "_by_pass"  # version 2: a figure's value in each pass, comma-separated
# Bounds of the probe's own option parser (scripts/screen-probe.c), so that a setting it would
# refuse is refused when the site is planned, not in the job.
_COUNTS = {"dgemm_n": (16, 16384), "stream_n": (1024, 2**30), "latency_bytes": (1, 65536),
           "message_bytes": (1024, 2**28), "in_flight": (1, 64), "passes": (1, 16), "random_rounds": (0, 64),
           "seed": (0, 2**31 - 1), "chunk_nodes": (3, 10**6)}
_SECONDS = ("dgemm_s", "stream_s", "window_s", "latency_s", "bandwidth_s")  # (0, 600]
_ALLOWANCES = ("slice_overhead_s", "launch_s")  # [0, 3600]
# Probe options: the settings the probe takes on its command line, in this order.
PROBE_OPTIONS = ("dgemm_n", "dgemm_s", "stream_n", "stream_s", "window_s", "latency_bytes", "latency_s",
                 "message_bytes", "in_flight", "bandwidth_s", "passes", "random_rounds", "seed")


@dataclass(frozen=True)
class ProbeSettings:
    dgemm_n: int
    dgemm_s: float
    stream_n: int
    stream_s: float
    window_s: float
    latency_bytes: int
    latency_s: float
    message_bytes: int
    in_flight: int
    bandwidth_s: float
    passes: int
    random_rounds: int
    seed: int
    slice_overhead_s: float
    launch_s: float
    time_limit_s: int
    chunk_nodes: int

    def args(self) -> list[str]:
        """The probe's command line."""
        return [word for name in PROBE_OPTIONS for word in (f"--{name.replace('_', '-')}", _option(getattr(self, name)))]

    def rounds(self, nodes: int) -> int:
        """Link rounds among `nodes` nodes, as the probe makes them: the ring's (none for one node,
        one for two, two for an even count, three for an odd one), then the random matchings."""
        if nodes < 2:
            return 0
        if nodes == 2:
            return 1
        return (2 if nodes % 2 == 0 else 3) + self.random_rounds

    def predicted_s(self, nodes: int) -> float:
        """Wall time of one probe over `nodes` nodes: set by the durations and the rounds (at most
        3 + random_rounds whatever the count), not by the count itself."""
        rounds = self.rounds(nodes)
        links = rounds * (self.latency_s + self.bandwidth_s + self.passes * self.slice_overhead_s)
        compute = self.dgemm_s + self.stream_s + 2 * self.passes * self.slice_overhead_s  # DGEMM, STREAM a pass
        return self.launch_s + compute + links

    def memory_per_rank(self) -> int:
        """Bytes a rank holds at most: DGEMM's three matrices, or STREAM's three arrays (one after the
        other), plus the link buffers of the first rank of a node."""
        compute = 8 * 3 * max(self.dgemm_n ** 2, self.stream_n)
        return compute + 2 * self.in_flight * self.message_bytes


def _option(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6g}"


def load_settings(path: Path | None = None) -> ProbeSettings:
    """site_configs/screening.yaml, every key present, known and in range; read once per process."""
    return _load_settings(path or paths.SITE_CONFIGS / "screening.yaml")


@functools.lru_cache(maxsize=4)
def _load_settings(path: Path) -> ProbeSettings:
    data = loaders.load_yaml(path, "screening settings") or {}
    keys = {f.name for f in fields(ProbeSettings)} - {"time_limit_s"} | {"time_limit"}
    if not isinstance(data, dict) or set(data) != keys:
        given = set(data) if isinstance(data, dict) else set()
        missing, unknown = sorted(keys - given), sorted(map(str, given - keys))
        raise InputError(f"{path}: expected exactly the keys {', '.join(sorted(keys))}"
                         + (f"; missing {', '.join(missing)}" if missing else "")
                         + (f"; unknown {', '.join(unknown)}" if unknown else ""))
    values: dict[str, Any] = {}
    for key, (low, high) in _COUNTS.items():
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise InputError(f"{path}: {key}: must be a whole number from {low} to {high}, got {excerpt(value)}")
        values[key] = value
    for key in (*_SECONDS, *_ALLOWANCES):
        value, high = data[key], 600 if key in _SECONDS else 3600
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not (0 < value <= high if key in _SECONDS else 0 <= value <= high):
            raise InputError(f"{path}: {key}: must be a number of seconds up to {high}, got {excerpt(value)}")
        values[key] = float(value)
    values["time_limit_s"] = parse_duration(data["time_limit"], f"{path}: time_limit")
    return ProbeSettings(**values)


# --- the output ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeFigures:
    name: str
    ranks: int
    dgemm_gflops: float  # the sum over its ranks
    dgemm_min_rank_gflops: float  # its slowest rank
    stream_gbs: float  # the sum over its ranks
    windows: int  # the fewest windows any of its ranks' rates came from
    by_pass: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # figure -> one value a pass (v2)

    def in_pass(self, index: int) -> NodeFigures:
        """The node as pass `index` alone measured it."""
        return replace(self, **{name: values[index] for name, values in self.by_pass.items()}, by_pass={})


@dataclass(frozen=True)
class PairFigures:
    round: int
    kind: str  # ring | random
    a: str
    b: str
    latency_us: float
    bandwidth_mbs: float  # bytes sent plus received per second
    by_pass: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # figure -> one value a pass (v2)

    @property
    def nodes(self) -> tuple[str, str]:
        return self.a, self.b

    def in_pass(self, index: int) -> PairFigures:
        return replace(self, **{name: values[index] for name, values in self.by_pass.items()}, by_pass={})


@dataclass(frozen=True)
class ProbeResult:
    settings: Mapping[str, float]  # what the probe says it ran with
    nodes: tuple[NodeFigures, ...]  # in job order
    pairs: tuple[PairFigures, ...]  # by round
    compute_s: float
    links_s: float

    def node_names(self) -> list[str]:
        return [n.name for n in self.nodes]

    @property
    def passes(self) -> int:
        """How many passes the output gives figures for, each alone: 0 for version 1."""
        return int(self.settings["passes"]) if self.settings["version"] >= 2 else 0

    def in_pass(self, index: int) -> ProbeResult:
        """What pass `index` alone measured: every node and pair by its figures of that pass."""
        return replace(self, nodes=tuple(n.in_pass(index) for n in self.nodes),
                       pairs=tuple(p.in_pass(index) for p in self.pairs))


_KINDS = ("screen-probe", "node", "pair", "end")
_TOKEN = re.compile(r"([a-z_]+)=(\S+)")
_NODE_NAME = re.compile(r"[A-Za-z0-9._-]{1,63}")
_HEADER_KEYS = {"version", "nodes", "ranks", *PROBE_OPTIONS, "rounds"}
# What each figure may be: a screened node with no DGEMM or no bandwidth is no measurement; the
# bounds keep a garbled number (1e300 Gflop/s) out of medians.
_FIGURE_BOUNDS = {"dgemm_gflops": 1e7, "dgemm_min_rank_gflops": 1e6, "stream_gbs": 1e5, "latency_us": 1e7,
                  "bandwidth_mbs": 1e8}
NODE_FIGURES = ("dgemm_gflops", "dgemm_min_rank_gflops", "stream_gbs")
PAIR_FIGURES = ("latency_us", "bandwidth_mbs")


def _fields(line: str, number: int, kind: str, expected: set[str]) -> dict[str, str]:
    words = line.split()[1:]
    found = {}
    for word in words:
        match = _TOKEN.fullmatch(word)
        if not match or match.group(1) in found:
            raise InputError(f"line {number}: {excerpt_text(word)} is not one key=value of a {kind} line")
        found[match.group(1)] = match.group(2)
    if set(found) != expected:
        missing, unknown = sorted(expected - set(found)), sorted(set(found) - expected)
        raise InputError(f"line {number}: {kind} line" + (f" without {', '.join(missing)}" if missing else "")
                         + (f" with unknown {', '.join(unknown)}" if unknown else ""))
    return found


def _number(text: str, number: int, key: str, low: float, high: float, positive: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"line {number}: {key}={excerpt_text(text)} is not a number") from None
    if not math.isfinite(value) or value < low or value > high or (positive and value <= 0):
        bound = f"above {low:g}" if positive else f"from {low:g}"
        raise InputError(f"line {number}: {key}={excerpt_text(text)} is not {bound} to {high:g}")
    return value


def _by_pass(found: Mapping[str, str], names: Sequence[str], passes: int, number: int) -> dict[str, tuple[float, ...]]:
    """Each figure's values of a version 2 line, one per pass, each within the figure's bounds."""
    out = {}
    for name in names:
        key = name + PASS_SUFFIX
        words = found[key].split(",")
        if len(words) != passes:
            raise InputError(f"line {number}: {key} has {len(words)} value(s), the probe ran {passes} pass(es)")
        out[name] = tuple(_number(word, number, key, 0, _FIGURE_BOUNDS[name], positive=True) for word in words)
    return out


def _count(text: str, number: int, key: str, low: int, high: int) -> int:
    if not re.fullmatch(r"\d{1,10}", text) or not low <= int(text) <= high:
        raise InputError(f"line {number}: {key}={excerpt_text(text)} is not a whole number from {low} to {high}")
    return int(text)


def _name(text: str, number: int, key: str) -> str:
    if not _NODE_NAME.fullmatch(text):
        raise InputError(f"line {number}: {key}={excerpt_text(text)} is not a node name")
    return text


def probe_lines(text: str) -> str:
    """The probe's own lines of an output (the MPI's and the shell's left out)."""
    return "\n".join(line for line in text.splitlines() if line.split(" ", 1)[0] in _KINDS)


def parse_probe(text: str) -> ProbeResult:
    """The probe's output (other lines, e.g. the MPI's, are skipped); InputError when it is not whole."""
    header: dict[str, float] | None = None
    passes = 0  # version 2: each figure's values per pass
    nodes: dict[str, NodeFigures] = {}
    pairs: list[PairFigures] = []
    end: tuple[float, float] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        kind = line.split(" ", 1)[0]
        if kind not in _KINDS:
            continue
        if end is not None:
            raise InputError(f"line {number}: a {kind} line after the end line")
        if kind == "screen-probe":
            if header is not None:
                raise InputError(f"line {number}: a second screen-probe line (two probes in one output)")
            found = _fields(line, number, "screen-probe", _HEADER_KEYS)
            header = {key: _number(value, number, key, 0, 2**40) for key, value in found.items()}
            if header["version"] not in VERSIONS:
                raise InputError(f"line {number}: probe output version {header['version']:g}, this scalebench "
                                 f"reads versions {' and '.join(map(str, VERSIONS))}")
            passes = int(header["passes"]) if header["version"] >= 2 else 0
            low, high = _COUNTS["passes"]
            if header["version"] >= 2 and not (low <= passes == header["passes"] <= high):
                raise InputError(f"line {number}: passes={header['passes']:g} is not a whole number from {low} to {high}")
            continue
        if header is None:
            raise InputError(f"line {number}: a {kind} line before the screen-probe line")
        if kind == "node":
            found = _fields(line, number, "node", {"name", "ranks", "windows", *NODE_FIGURES,
                                                   *(name + PASS_SUFFIX for name in NODE_FIGURES if passes)})
            name = _name(found["name"], number, "name")
            if name in nodes:
                raise InputError(f"line {number}: node {name} twice")
            nodes[name] = NodeFigures(
                name, _count(found["ranks"], number, "ranks", 1, 2**20),
                *(_number(found[key], number, key, 0, _FIGURE_BOUNDS[key], positive=True)
                  for key in NODE_FIGURES),
                windows=_count(found["windows"], number, "windows", 1, 10**9),
                by_pass=_by_pass(found, NODE_FIGURES, passes, number) if passes else {})
        elif kind == "pair":
            found = _fields(line, number, "pair", {"round", "kind", "a", "b", *PAIR_FIGURES,
                                                   *(name + PASS_SUFFIX for name in PAIR_FIGURES if passes)})
            a, b = _name(found["a"], number, "a"), _name(found["b"], number, "b")
            for node in (a, b):
                if node not in nodes:
                    raise InputError(f"line {number}: pair with {node}, which is no node of the probe")
            if a == b:
                raise InputError(f"line {number}: a pair of {a} with itself")
            if found["kind"] not in ("ring", "random"):
                raise InputError(f"line {number}: kind={excerpt_text(found['kind'])} is neither ring nor random")
            pairs.append(PairFigures(
                _count(found["round"], number, "round", 1, int(header["rounds"])), found["kind"], a, b,
                *(_number(found[key], number, key, 0, _FIGURE_BOUNDS[key], positive=True)
                  for key in PAIR_FIGURES),
                by_pass=_by_pass(found, PAIR_FIGURES, passes, number) if passes else {}))
        else:
            found = _fields(line, number, "end", {"compute_s", "links_s"})
            end = tuple(_number(found[key], number, key, 0, 1e6) for key in ("compute_s", "links_s"))  # type: ignore[assignment]
    if header is None:
        raise InputError("no screen-probe line: the probe did not start, or this is not its output")
    if end is None:
        raise InputError("no end line: the probe was cut short (time limit, a node lost)")
    if len(nodes) != header["nodes"]:
        raise InputError(f"the probe screened {header['nodes']:g} node(s) but reported {len(nodes)}")
    if sum(n.ranks for n in nodes.values()) != header["ranks"]:
        raise InputError(f"the probe ran {header['ranks']:g} ranks but its nodes report "
                         f"{sum(n.ranks for n in nodes.values())}")
    return ProbeResult(header, tuple(nodes.values()), tuple(pairs), end[0], end[1])
