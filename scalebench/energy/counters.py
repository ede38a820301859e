"""The energy counters a node exposes without Slurm, their wrap-around, and energy over a window.

Readers (each returns nothing when its counters are absent or unreadable, never a zero):
- HPE Cray pm_counters, /sys/cray/pm_counters/energy: the node, in joules, with the meter's own
  timestamp ("<J> J <us> us"); accel<N>_energy: each accelerator (already inside the node's);
- Linux powercap RAPL, /sys/class/powercap/intel-rapl:<p>[:<d>]/energy_uj: each CPU package and its
  DRAM domain, in microjoules, wrapping at max_energy_range_uj (often root-only to read);
- NVML through nvidia-smi: total_energy_consumption of each GPU in millijoules since the driver loaded;
- ROCm SMI through rocm-smi: each GPU's accumulated energy in microjoules.

A counter that goes down wrapped when its range is known (RAPL) and was reset otherwise (a driver
reload): the interval across a reset is a gap, never a negative or a made-up energy.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from scalebench.energy.registry import registry

PM_COUNTERS = Path("/sys/cray/pm_counters")
POWERCAP = Path("/sys/class/powercap")
TOOL_TIMEOUT_S = 10.0
# The meter's own timestamp (10 Hz on HPE Cray EX) places a reading better than the time it was read,
# when it is the wall clock: one further off than this is some other clock, and the read time is used.
STAMP_TRUST_S = 60.0
_PM_RE = re.compile(r"(\d{1,20})[ \t]+J(?:[ \t]+(\d{1,20})[ \t]+us)?[ \t]*")
_ACCEL_RE = re.compile(r"accel(\d{1,3})_energy")
_RAPL_ZONE_RE = re.compile(r"intel-rapl:(\d{1,4})(?::(\d{1,4}))?")


@dataclass(frozen=True)
class Counter:
    """One energy counter of a node: what it covers and where it wraps (None: it does not)."""

    source: str  # pm_counters | rapl | nvml | rocm_smi
    domain: str  # node, accel0, package-0, dram-0, gpu0 ...
    coverage: str  # a name of scalebench/data/energy.yaml coverage
    wrap_j: float | None = None

    @property
    def key(self) -> str:
        return f"{self.source}:{self.domain}"

    def to_json(self) -> dict:
        return {"key": self.key, "source": self.source, "domain": self.domain, "coverage": self.coverage,
                "wrap_j": self.wrap_j}

    @classmethod
    def from_json(cls, data: dict) -> Counter:
        wrap = data.get("wrap_j")
        return cls(str(data["source"]), str(data["domain"]), str(data["coverage"]),
                   float(wrap) if isinstance(wrap, (int, float)) and not isinstance(wrap, bool) else None)


@dataclass(frozen=True)
class Reading:
    key: str
    t: float  # seconds since the epoch the value belongs to (the meter's own stamp when it has one)
    joules: float  # the raw counter, in joules


# --- parsers: text -> values --------------------------------------------------------------------

def parse_pm_counter(text: str) -> tuple[int, float | None] | None:
    """('<J> J <us> us') -> (joules, seconds since the epoch or None); None for anything else."""
    match = _PM_RE.fullmatch(text.strip())
    if not match:
        return None
    return int(match[1]), (int(match[2]) / 1e6 if match[2] else None)


def parse_nvidia_smi(text: str) -> dict[str, float]:
    """`nvidia-smi --query-gpu=index,total_energy_consumption --format=csv,noheader,nounits`:
    {gpu<index>: joules}; GPUs that report [N/A] or [Not Supported] are left out."""
    found = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) == 2 and cells[0].isdigit() and re.fullmatch(r"\d{1,20}(?:\.\d{1,6})?", cells[1]):
            found[f"gpu{int(cells[0])}"] = float(cells[1]) / 1e3
    return found


def parse_rocm_smi(text: str) -> dict[str, float]:
    """`rocm-smi --showenergycounter --json`: {gpu<N>: joules} from each card's "Accumulated Energy (uJ)"."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    found = {}
    for card, values in (data.items() if isinstance(data, dict) else ()):
        match = re.fullmatch(r"card(\d{1,3})", str(card))
        value = values.get("Accumulated Energy (uJ)") if isinstance(values, dict) else None
        if match and isinstance(value, str) and re.fullmatch(r"\d{1,24}(?:\.\d{1,6})?", value):
            found[f"gpu{int(match[1])}"] = float(value) / 1e6
    return found


# --- readers: this node -------------------------------------------------------------------------

Reader = Callable[[], list[Reading]]


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read(256)
    except OSError:
        return None


def pm_counters(root: Path = PM_COUNTERS) -> tuple[list[Counter], Reader | None]:
    files = {"node": root / "energy"}
    files.update({f"accel{m[1]}": root / m[0] for m in
                  (_ACCEL_RE.fullmatch(p.name) for p in sorted(root.glob("accel*_energy"))) if m})
    counters = [Counter("pm_counters", domain, "node" if domain == "node" else "gpu") for domain in files
                if (parsed := parse_pm_counter(_read(files[domain]) or "")) is not None and parsed[0] > 0]
    if not counters:
        return [], None

    def read() -> list[Reading]:
        out = []
        for counter in counters:
            parsed = parse_pm_counter(_read(files[counter.domain]) or "")
            if parsed is not None:
                now = time.time()
                stamp = parsed[1] if parsed[1] and abs(parsed[1] - now) < STAMP_TRUST_S else now
                out.append(Reading(counter.key, stamp, float(parsed[0])))
        return out
    return counters, read


def rapl(root: Path = POWERCAP) -> tuple[list[Counter], Reader | None]:
    """Package zones (intel-rapl:<p>) and their DRAM subzones; core, uncore and psys are left out
    (inside a package, or the platform's own view)."""
    zones: dict[str, tuple[Path, Counter]] = {}
    for zone in sorted(root.glob("intel-rapl:*")) if root.is_dir() else []:
        match = _RAPL_ZONE_RE.fullmatch(zone.name)
        name = (_read(zone / "name") or "").strip()
        if not match:
            continue
        if match[2] is None and name.startswith("package-"):
            domain, coverage = name, "cpu_package"
        elif match[2] is not None and name == "dram":
            domain, coverage = f"dram-{match[1]}", "dram"
        else:
            continue
        energy, top = _read(zone / "energy_uj"), _read(zone / "max_energy_range_uj")
        if energy is None or not energy.strip().isdigit():
            continue  # root-only on many kernels since CVE-2020-8694
        wrap = int(top) / 1e6 if top and top.strip().isdigit() and int(top) > 0 else None
        zones[domain] = (zone / "energy_uj", Counter("rapl", domain, coverage, wrap))
    if not zones:
        return [], None

    def read() -> list[Reading]:
        out = []
        for path, counter in zones.values():
            text = (_read(path) or "").strip()
            if text.isdigit():
                out.append(Reading(counter.key, time.time(), int(text) / 1e6))
        return out
    return [c for _, c in zones.values()], read


def _tool(argv: Sequence[str]) -> str | None:
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=TOOL_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout[:1 << 20] if proc.returncode == 0 else None


NVIDIA_SMI = ("nvidia-smi", "--query-gpu=index,total_energy_consumption", "--format=csv,noheader,nounits")
ROCM_SMI = ("rocm-smi", "--showenergycounter", "--json")


def gpu_tool(source: str, argv: Sequence[str], parse: Callable[[str], dict[str, float]]
             ) -> tuple[list[Counter], Reader | None]:
    if shutil.which(argv[0]) is None:
        return [], None
    first = parse(_tool(argv) or "")
    if not first:
        return [], None
    counters = [Counter(source, gpu, "gpu") for gpu in sorted(first)]

    def read() -> list[Reading]:
        now = time.time()
        return [Reading(f"{source}:{gpu}", now, joules) for gpu, joules in parse(_tool(argv) or "").items()]
    return counters, read


def discover() -> tuple[list[Counter], list[Reader]]:
    """Every counter readable on this node, and how to read them."""
    counters: list[Counter] = []
    readers: list[Reader] = []
    for found, reader in (pm_counters(), rapl(), gpu_tool("nvml", NVIDIA_SMI, parse_nvidia_smi),
                          gpu_tool("rocm_smi", ROCM_SMI, parse_rocm_smi)):
        if reader is not None:
            counters += found
            readers.append(reader)
    return counters, readers


# --- arithmetic: readings -> energy -------------------------------------------------------------

@dataclass(frozen=True)
class Segment:
    """Readings of one counter with no reset between them: (time, joules since the first)."""

    times: tuple[float, ...]
    joules: tuple[float, ...]

    def at(self, t: float) -> float | None:
        """The accumulated energy at t, linear between readings; None outside them."""
        if not self.times or t < self.times[0] or t > self.times[-1]:
            return None
        i = bisect_right(self.times, t)
        if i >= len(self.times):
            return self.joules[-1]
        t0, t1 = self.times[i - 1], self.times[i]
        e0, e1 = self.joules[i - 1], self.joules[i]
        return e0 if t1 == t0 else e0 + (e1 - e0) * (t - t0) / (t1 - t0)


def unwrap(readings: Iterable[tuple[float, float]], wrap_j: float | None,
           max_power_w: float | None = None) -> tuple[list[Segment], list[str]]:
    """Continuous segments of one counter's (time, raw joules) readings, in time order.

    A decrease is a wrap when the range is known (the range is added), else a reset; an interval whose
    energy implies more than max_power_w (default: energy.yaml's node bound) is a glitch: both end a
    segment, with a note."""
    bound = registry().max_node_power_w if max_power_w is None else max_power_w
    segments: list[Segment] = []
    notes: list[str] = []
    times: list[float] = []
    accumulated: list[float] = []
    last_raw = 0.0
    for t, raw in sorted(readings):
        if times and t <= times[-1]:
            continue  # the same reading again (a meter updates at its own pace)
        if times:
            delta = raw - last_raw
            if delta < 0 and wrap_j:
                delta += wrap_j
            dt = t - times[-1]
            if delta < 0 or delta > bound * dt + 1:
                notes.append(f"counter {'reset' if delta < 0 else 'jumped'} at {t:.3f} "
                             f"({last_raw:.0f} J -> {raw:.0f} J in {dt:.3g} s)")
                segments.append(Segment(tuple(times), tuple(accumulated)))
                times, accumulated = [], []
            else:
                times.append(t)
                accumulated.append(accumulated[-1] + delta)
                last_raw = raw
                continue
        times.append(t)
        accumulated.append(0.0)
        last_raw = raw
    if times:
        segments.append(Segment(tuple(times), tuple(accumulated)))
    return segments, notes


def energy_between(segments: Sequence[Segment], start: float, end: float) -> float | None:
    """Joules between start and end, from the segment holding both; None when no segment does (the
    readings do not cover the window, or a reset falls inside it)."""
    for segment in segments:
        first, last = segment.at(start), segment.at(end)
        if first is not None and last is not None:
            return last - first
    return None


def power_energy_between(samples: Sequence[tuple[float, float]], start: float, end: float,
                         max_gap_s: float) -> float | None:
    """Joules between start and end from instantaneous power samples (time, watts): the trapezoid
    rule, linear at the window's edges. None when the samples do not cover the window or leave a gap
    longer than max_gap_s inside it."""
    points = sorted({t: w for t, w in samples}.items())
    if len(points) < 2 or points[0][0] > start or points[-1][0] < end:
        return None

    def watts(t: float) -> float:
        i = bisect_right([p[0] for p in points], t)
        if i >= len(points):
            return points[-1][1]
        (t0, w0), (t1, w1) = points[i - 1], points[i]
        return w0 + (w1 - w0) * (t - t0) / (t1 - t0)

    inner = [(t, w) for t, w in points if start < t < end]
    edges = [(start, watts(start)), *inner, (end, watts(end))]
    if any(b[0] - a[0] > max_gap_s for a, b in zip(edges, edges[1:])):
        return None
    return sum((b[0] - a[0]) * (a[1] + b[1]) / 2 for a, b in zip(edges, edges[1:]))
