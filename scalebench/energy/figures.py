"""Energy, average power and Gflop/s per watt of one HPL case, as Green500 measures them.

Green500 Level 1 divides Rmax by the average power over the core phase: the solve HPL times, not the
set-up, the matrix generation or the DGEMM ceiling taken before it. scalebench measures it over the
window HPL itself dates (scalebench.parse.hpl_windows) of the solve that set Rmax, from per-node
counters sampled during the job (scalebench.energy.sample) or Slurm's profiled power samples
(sh5util). Slurm's accounting of the allocation (sacct -X) is reported beside it, separately, as
"job total, includes set-up". Each figure says its source, its sampling period and its coverage
(node, CPU packages, DRAM, GPUs: only the node is what Green500 asks); where nothing measured it the
case says why, and never reports a zero.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from scalebench.energy.counters import energy_between, power_energy_between
from scalebench.energy.registry import registry
from scalebench.energy.sample import NodeSamples
from scalebench.energy.slurm import JobEnergy, SlurmEnergyConfig
from scalebench.parse.hpl_windows import CORE_PHASE, SolveWindow

NO_SOURCE = "no energy source"
JOB_TOTAL = "job total, includes set-up"
CORE = "core phase"


@dataclass(frozen=True)
class Measurement:
    scope: str  # CORE (the window HPL dates) | JOB_TOTAL
    joules: float
    start: float  # seconds since the epoch
    end: float
    nodes: int
    source: str  # what measured it, with its sampling period
    coverage: tuple[str, ...]  # names of energy.yaml coverage
    window: str  # what the window is

    @property
    def seconds(self) -> float:
        return self.end - self.start

    @property
    def watts(self) -> float:
        return self.joules / self.seconds

    def gflops_per_watt(self, rmax_gflops: float) -> float:
        return rmax_gflops / self.watts

    def describe(self) -> str:
        return (f"{self.window}, {self.seconds:.0f} s on {self.nodes} node(s): {self.joules / 1e3:.4g} kJ, "
                f"{self.watts / 1e3:.4g} kW ({self.source}; {registry().label(self.coverage)})")

    def to_json(self) -> dict:
        return {"scope": self.scope, "joules": self.joules, "start": self.start, "end": self.end,
                "seconds": self.seconds, "watts": self.watts, "nodes": self.nodes, "source": self.source,
                "coverage": list(self.coverage), "window": self.window}


@dataclass(frozen=True)
class EnergyResult:
    core: Measurement | None
    job: Measurement | None
    notes: tuple[str, ...] = ()  # why a figure is missing, what was refused

    def figures(self, rmax_gflops: float | None) -> dict[str, tuple[float, str]]:
        """Perf figures {name: (value, unit)}; none for what was not measured."""
        out: dict[str, tuple[float, str]] = {}
        for prefix, measured in (("", self.core), ("job_", self.job)):
            if measured is None:
                continue
            out[f"{prefix}energy"] = (measured.joules / 1e3, "kJ")
            out[f"{prefix}power"] = (measured.watts / 1e3, "kW")
            if rmax_gflops:
                out[f"{prefix}gflops_per_watt"] = (measured.gflops_per_watt(rmax_gflops), "Gflop/s/W")
        return out

    def source(self) -> str:
        """One line for the report: where the figures came from, or why there are none."""
        parts = [f"{m.scope if m.scope == JOB_TOTAL else CORE}: {m.source}, {registry().label(m.coverage)}"
                 for m in (self.core, self.job) if m is not None]
        return "; ".join(parts) if parts else f"{NO_SOURCE}: {'; '.join(self.notes) or 'none declared'}"

    def to_json(self) -> dict:
        return {"core": self.core and self.core.to_json(), "job": self.job and self.job.to_json(),
                "notes": list(self.notes)}


def rmax_window(windows: Sequence[SolveWindow], rows: int, best_row: int | None) -> tuple[SolveWindow | None, str]:
    """The window of the solve that set Rmax: HPL 2.1+ dates each of its `rows` result rows (in order);
    hpcc dates only its whole HPL section. (window, '') or (None, why)."""
    core = [w for w in windows if w.kind == CORE_PHASE]
    if core:
        if best_row is None or len(core) != rows:
            return None, f"HPL dated {len(core)} solve(s) for {rows} result row(s): which one set Rmax is unknown"
        return core[best_row], ""
    section = [w for w in windows if w.kind != CORE_PHASE]
    if len(section) == 1:
        return section[0], ""
    return None, "the HPL output dates no solve (HPL 2.0 and older print no time of day)"


def _window_label(window: SolveWindow) -> str:
    return (f"{CORE} (HPL_pdgesv of the Rmax solve)" if window.kind == CORE_PHASE
            else "hpcc's HPL section (matrix generation and residual checks included)")


def core_from_samples(samples: Sequence[NodeSamples], window: SolveWindow, nodes: int) -> Measurement | str:
    """The core phase from every node's sampled counters, or why not. A node with a whole-node counter
    gives that alone (its parts are inside it); else its CPU package, DRAM and GPU counters add up."""
    measuring = [s for s in samples if s.counters]
    if not samples:
        return "no energy samples (no sampler ran)"
    if not measuring:
        return f"no readable energy counter on {', '.join(sorted(s.host for s in samples))}"
    if len(measuring) != nodes:
        return f"energy samples from {len(measuring)} of {nodes} node(s)"
    offsets = {s.utc_offset_s for s in measuring}
    if len(offsets) != 1:
        return f"the nodes' clocks are in different time zones ({sorted(offsets)} s from UTC)"
    start, end = window.epochs(offsets.pop())
    if end - start < registry().min_window_s:
        return f"the solve lasted {end - start:.0f} s, under the {registry().min_window_s:g} s HPL's stamps can time"
    total = 0.0
    coverage: set[tuple[str, ...]] = set()
    sources: set[str] = set()
    for node in measuring:
        chosen = [c for c in node.counters if c.coverage == "node"] or list(node.counters)
        for counter in chosen:
            joules = energy_between(node.segments.get(counter.key, []), start, end)
            if joules is None:
                return f"{node.host}: the readings of {counter.key} do not cover the solve (or reset during it)"
            total += joules
        coverage.add(tuple(sorted({c.coverage for c in chosen})))
        sources.add(", ".join(sorted({c.source for c in chosen})))
    if len(coverage) != 1:
        return f"the nodes measure different things: {sorted(coverage)}"
    interval = max(s.interval_s for s in measuring)
    return Measurement(CORE, total, start, end, nodes, f"node sampler ({'; '.join(sorted(sources))}) every "
                       f"{interval:g} s", coverage.pop(), _window_label(window))


def core_from_profile(series: dict[tuple[str, str], list[tuple[float, float]]], window: SolveWindow,
                      nodelist: Sequence[str], config: SlurmEnergyConfig, utc_offset_s: int) -> Measurement | str:
    """The core phase from Slurm's profiled power samples: per node, the step whose samples cover it."""
    start, end = window.epochs(utc_offset_s)
    period = config.task_energy_freq_s or config.node_freq_s or 1
    total = 0.0
    for node in nodelist:
        energies = [power_energy_between(samples, start, end, max_gap_s=3 * period)
                    for (step, host), samples in series.items() if host == node and step != "batch"]
        energies = [e for e in energies if e is not None]
        if not energies:
            return f"Slurm's energy profile of {node} does not cover the solve"
        total += energies[0]
    coverage = registry().plugins.get(config.plugin or "", ("node",))
    return Measurement(CORE, total, start, end, len(nodelist),
                       f"Slurm acct_gather_profile/{config.profile} of acct_gather_energy/{config.plugin}, "
                       f"every {period} s", coverage, _window_label(window))


def job_from_slurm(job: JobEnergy, config: SlurmEnergyConfig) -> Measurement | str:
    if job.joules is None or job.start is None or job.end is None or not job.nodes:
        return job.reason
    coverage = registry().plugins.get(config.plugin or "")
    if coverage is None:
        return f"unknown Slurm energy plugin {config.plugin!r} (scalebench/data/energy.yaml: plugins)"
    what = ("the allocation (extern step, PrologFlags=Contain)" if config.prolog_contain
            else "its steps (no PrologFlags=Contain: time between steps left out)")
    return Measurement(JOB_TOTAL, job.joules, job.start, job.start + (job.seconds or 0), job.nodes,
                       f"{config.describe()}; sacct -X over {what}", coverage, JOB_TOTAL)


def combine(core: Measurement | str | None, job: Measurement | str | None, notes: Sequence[str] = ()) -> EnergyResult:
    """One case's result: each measurement, or the reason it is missing among the notes."""
    reasons = [*notes, *(r for r in (core, job) if isinstance(r, str) and r)]
    return EnergyResult(core if isinstance(core, Measurement) else None,
                        job if isinstance(job, Measurement) else None, tuple(reasons))
