"""Theoretical peak (Rpeak) = nodes x cores x nominal clock x DP flop/cycle (TOP500 convention)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from scalebench import loaders, paths
from scalebench.errors import PeakError
from scalebench.site.host import HostInfo
from scalebench.validation import C_INT_MAX, excerpt, is_number

RPEAK_INPUTS = ("cores_per_node", "clock_ghz", "flops_per_cycle")
# What a CPU can be: outside these an input is a typo (a clock in MHz or Hz, flops per node), and
# Rpeak would be 0 or overflow to infinity.
LIMITS = {"cores_per_node": (1, C_INT_MAX), "clock_ghz": (0.01, 100.0), "flops_per_cycle": (1, 1024)}


@dataclass(frozen=True)
class PeakInputs:
    cores_per_node: int
    clock_ghz: float
    flops_per_cycle: int
    microarch: str
    derivation: tuple[str, ...]  # one line per input: where its value came from

    def rpeak_gflops(self, nodes: int = 1, cores_per_node: int | None = None) -> float:
        """Rpeak of `nodes` nodes using `cores_per_node` cores each (default: all)."""
        cores = self.cores_per_node if cores_per_node is None else cores_per_node
        return nodes * cores * self.clock_ghz * self.flops_per_cycle

    def to_json(self) -> dict[str, Any]:
        return {"cores_per_node": self.cores_per_node, "clock_ghz": self.clock_ghz,
                "flops_per_cycle": self.flops_per_cycle, "microarch": self.microarch,
                "rpeak_gflops_per_node": self.rpeak_gflops(), "derivation": list(self.derivation)}


def load_flops_table() -> dict[str, int]:
    return loaders.load_yaml(paths.PACKAGE_DATA / "flops_per_cycle.yaml", "flops table")


def flops_per_cycle(microarch: str, table: Mapping[str, int] | None = None) -> tuple[int, str]:
    """DP flop/cycle/core for an archspec name, walking its ancestors to the nearest table entry."""
    import archspec.cpu

    table = load_flops_table() if table is None else table
    if microarch in table:
        return table[microarch], f"table entry {microarch!r}"
    target = archspec.cpu.TARGETS.get(microarch)
    if target is None:
        raise PeakError(f"microarch: {excerpt(microarch)} is not an archspec name; set flops_per_cycle in the "
                        "site config")
    for ancestor in target.ancestors:
        if ancestor.name in table:
            return table[ancestor.name], f"table entry {ancestor.name!r} (nearest ancestor of {microarch!r})"
    raise PeakError(f"microarch: no flops_per_cycle entry for {excerpt(microarch)} or its ancestors; "
                    "set flops_per_cycle in the site config")


def peak_inputs(overrides: Mapping[str, Any] | None = None, host: HostInfo | None = None,
                source: str = "site config") -> PeakInputs:
    """Rpeak inputs from overrides first (`source` says whose: the site config, the command line), then
    (for the local machine) host detection. PeakError for an input outside LIMITS."""
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    derivation = [f"{k} = {excerpt(given[k])} ({source})" for k in (*RPEAK_INPUTS, "microarch") if k in given]
    microarch = given.get("microarch") or (host.microarch if host else None)
    if "microarch" not in given and host:
        derivation.append(f"microarch = {microarch} ({host.microarch_source})")

    cores = given["cores_per_node"] if "cores_per_node" in given else (host.cores if host else None)
    if "cores_per_node" not in given and host:
        derivation.append(f"cores_per_node = {cores} (physical cores in /proc/cpuinfo and CPU affinity)")
    clock = given["clock_ghz"] if "clock_ghz" in given else (host.clock.ghz if host and host.clock else None)
    if "clock_ghz" not in given and clock is not None:
        derivation.append(f"clock_ghz = {clock:g} ({host.clock.source})")  # type: ignore[union-attr]
    fpc = given.get("flops_per_cycle")
    if fpc is None and microarch:
        fpc, source = flops_per_cycle(microarch)
        derivation.append(f"flops_per_cycle = {fpc} (scalebench/data/flops_per_cycle.yaml, {source})")

    missing = [name for name, value in zip(RPEAK_INPUTS, (cores, clock, fpc)) if value is None]
    if missing:
        raise PeakError(f"Rpeak inputs missing: {', '.join(missing)} (set them in the site config)")
    for name, value in zip(RPEAK_INPUTS, (cores, clock, fpc)):
        if not is_number(value) or not value > 0:
            raise PeakError(f"{name}: must be a positive number, got {excerpt(value)}")
        low, high = LIMITS[name]
        if not low <= value <= high or (isinstance(high, int) and value != int(value)):
            kind = "a whole number" if isinstance(high, int) else "a number"
            raise PeakError(f"{name}: {excerpt(value)} is not {kind} from {low} to {high}")
    return PeakInputs(int(cores), float(clock), int(fpc), microarch or "unknown", tuple(derivation))
