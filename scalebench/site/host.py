"""What this machine is: cores, memory, CPU model, nominal clock (pure /proc and /sys reads)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from scalebench import loaders, paths, textfile
from scalebench.errors import InputError

_MODEL_CLOCK = re.compile(r"@\s*([0-9.]+)\s*GHz", re.IGNORECASE)


@dataclass(frozen=True)
class Clock:
    ghz: float
    source: str


@dataclass(frozen=True)
class HostInfo:
    cpus: int  # logical CPUs this process may use
    cores: int  # physical cores among them
    sockets: int
    model_name: str
    microarch: str
    clock: Clock | None
    memory_bytes: int
    microarch_source: str = "archspec host detection"

    @property
    def cpus_per_core(self) -> int:
        return max(1, self.cpus // self.cores)


def _cpuinfo_blocks(text: str) -> list[dict[str, str]]:
    blocks = []
    for chunk in text.split("\n\n"):
        fields = {}
        for line in chunk.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        if "processor" in fields:
            blocks.append(fields)
    return blocks


def nominal_clock(cpuinfo: str, sysfs: Path = Path("/sys/devices/system/cpu/cpu0/cpufreq")) -> Clock | None:
    """Nominal (base) clock: model-name '@ X GHz', else cpufreq base_frequency, else cpuinfo 'cpu MHz'."""
    blocks = _cpuinfo_blocks(cpuinfo)
    model = blocks[0].get("model name", "") if blocks else ""
    match = _MODEL_CLOCK.search(model)
    if match:
        return Clock(float(match.group(1)), f"CPU model name ({model!r})")
    base = sysfs / "base_frequency"
    if base.is_file():
        return Clock(int(textfile.read_text(base, "cpufreq")) / 1e6, f"{base} (kHz)")
    if blocks and "cpu MHz" in blocks[0]:
        return Clock(float(blocks[0]["cpu MHz"]) / 1000,
                     "/proc/cpuinfo 'cpu MHz' (the current or virtualised clock: check it is the base clock)")
    return None


def physical_cores(cpuinfo: str, allowed: set[int]) -> tuple[int, int]:
    """(cores, sockets) among the allowed logical CPUs; each CPU its own core when ids are absent."""
    cores, sockets = set(), set()
    for block in _cpuinfo_blocks(cpuinfo):
        cpu = int(block["processor"])
        if cpu not in allowed:
            continue
        socket = block.get("physical id", "0")
        sockets.add(socket)
        cores.add((socket, block.get("core id", str(cpu))))
    return max(1, len(cores)), max(1, len(sockets))


def memory_bytes(meminfo: str) -> int:
    match = re.search(r"^MemTotal:\s+(\d+)\s*kB", meminfo, re.MULTILINE)
    if not match:
        raise InputError("/proc/meminfo: no MemTotal line")
    return int(match.group(1)) * 1024


def family_microarch(cpuinfo: str) -> str | None:
    """The archspec name data/cpu_families.yaml gives this CPU's vendor, family and model, if any."""
    blocks = _cpuinfo_blocks(cpuinfo)
    fields = blocks[0] if blocks else {}
    try:
        family, model = int(fields["cpu family"]), int(fields["model"])
    except (KeyError, ValueError):
        return None
    table = loaders.load_yaml(paths.PACKAGE_DATA / "cpu_families.yaml", "CPU families")
    names = (table.get(fields.get("vendor_id")) or {}).get(family) or {}
    return next((name for name, ranges in names.items() if any(low <= model <= high for low, high in ranges)), None)


def microarch(cpuinfo: str) -> tuple[str, str]:
    """(archspec name, where it came from). When archspec sees only a generic level (a hypervisor hid
    some flags), the CPU's family and model name it, if that name's own generic level is the one seen."""
    import archspec.cpu

    seen = archspec.cpu.host()
    named = archspec.cpu.TARGETS.get(family_microarch(cpuinfo) or "") if seen.vendor == "generic" else None
    if named is not None and next((a for a in named.ancestors if a.vendor == "generic"), None) == seen:
        return named.name, (f"CPU family and model in /proc/cpuinfo (scalebench/data/cpu_families.yaml); archspec "
                            f"saw only {seen.name}: flags are hidden")
    return seen.name, "archspec host detection"


def detect() -> HostInfo:
    cpuinfo = textfile.read_text("/proc/cpuinfo", "cpuinfo")
    allowed = os.sched_getaffinity(0)
    cores, sockets = physical_cores(cpuinfo, allowed)
    blocks = _cpuinfo_blocks(cpuinfo)
    name, source = microarch(cpuinfo)
    return HostInfo(
        cpus=len(allowed), cores=cores, sockets=sockets,
        model_name=blocks[0].get("model name", "unknown") if blocks else "unknown",
        microarch=name, clock=nominal_clock(cpuinfo),
        memory_bytes=memory_bytes(textfile.read_text("/proc/meminfo", "meminfo")), microarch_source=source,
    )
