"""Records grouped into series: one curve (x -> value) per system, partition, stack, benchmark,
figure and remaining check parameters. Reports, acceptance verdicts and bake-offs all read these,
so they agree on what was measured.

Repeated runs of one point are summarised by their median: one noisy run moves it less than a mean,
and the count is kept so readers see how many runs stand behind a number. At one x, only the cases
using the most cores count: on one node, HPL's 1_core and 1_node scales both have num_nodes = 1,
and the whole node is the node-count point.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from scalebench.analysis import scaling
from scalebench.benchmarks import Benchmark, lookup
from scalebench.results.store import Record

AXIS_LABELS = {"nodes": "Nodes", "procs": "Processes", "cores": "Cores", "msg_size": "Message size (bytes)"}
AXIS_UNITS = {"nodes": "node(s)", "procs": "process(es)", "cores": "core(s)", "msg_size": "bytes"}


@dataclass(frozen=True)
class SeriesKey:
    system: str
    partition: str
    stack: str
    benchmark: str
    figure: str
    params: tuple[tuple[str, Any], ...]  # check parameters other than the x axis

    @property
    def where(self) -> str:
        return f"{self.system}:{self.partition}"

    @property
    def variant(self) -> str:
        """The parameters that tell series of one benchmark apart, e.g. 'workload=lj'."""
        return " ".join(f"{k}={v}" for k, v in self.params)


@dataclass(frozen=True)
class Series:
    key: SeriesKey
    bench: Benchmark
    axis: str  # nodes | procs | cores | a parameter name
    unit: str
    points: dict[int, float]  # x -> median value, x increasing
    runs: dict[int, int]  # x -> measurements behind the median
    values: dict[int, tuple[float, ...]] = field(default_factory=dict)  # x -> the measurements themselves

    @property
    def direction(self) -> str:
        return self.bench.figure(self.key.figure).direction

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def weak(self) -> bool:
        """A weak-scaling series (the registry's weak parameter): work per process fixed."""
        return self.bench.weak is not None and self.bench.weak in {(k, str(v)) for k, v in self.key.params}


def time_like(value: float, higher_is_better: bool) -> float:
    """A value where lower is better, so one division gives "> 1 is better" for every figure."""
    return 1 / value if higher_is_better else value


def efficiency(s: Series) -> dict[int, float]:
    """Parallel efficiency by x: S(p) p0/p under strong scaling; under weak scaling T(p0)/T(p) of the
    per-step figure of merit (a rate per step is inverted into a time per step first)."""
    if s.weak:
        times = {x: time_like(v, s.higher_is_better) for x, v in s.points.items()}
        return scaling.weak_scaling_efficiency(times, higher_is_better=False)
    return scaling.parallel_efficiency(s.points, higher_is_better=s.higher_is_better)


def axis_label(axis: str) -> str:
    return AXIS_LABELS.get(axis, axis)


def at_label(axis: str, x: int) -> str:
    """'4 node(s)', '16 process(es)', '1024 bytes'."""
    return f"{x} {AXIS_UNITS.get(axis, axis)}"


def _integral(value: Any) -> int | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() and number >= 0 else None


def x_of(record: Record, axis: str) -> int | None:
    if axis == "nodes":
        return record.num_nodes
    if axis == "procs":
        return record.num_tasks
    if axis == "cores":
        return record.cores
    return _integral(record.param(axis))


def build(rows: Iterable[Record], axis: str | None = None,
          benchmark_names: Sequence[str] | None = None) -> list[Series]:
    """Series of the usable records (optionally of some benchmarks), on the registry's x axis
    unless `axis` is given; sorted by system, partition, benchmark, figure, parameters, stack."""
    # Plain tuples as keys while grouping (100 000s of rows): SeriesKey objects only per series.
    grouped: dict[tuple[Any, ...], dict[int, list[tuple[int, float]]]] = {}
    units: dict[tuple[Any, ...], str] = {}
    benches: dict[str, Benchmark] = {}
    kept: dict[tuple[Any, ...], tuple[tuple[str, Any], ...]] = {}  # the parameters that name a series
    for r in rows:
        if not r.usable or (benchmark_names is not None and r.benchmark not in benchmark_names):
            continue
        bench = benches.get(r.benchmark) or benches.setdefault(r.benchmark, lookup(r.benchmark))
        along = axis or bench.x
        x = x_of(r, along)
        if x is None:
            continue
        params = kept.get((r.params, r.benchmark, along))
        if params is None:
            params = kept[(r.params, r.benchmark, along)] = tuple(
                p for p in r.params if p[0] != along and p[0] not in bench.series_params)
        key = (r.system, r.partition, r.stack, r.benchmark, r.figure, params)
        by_x = grouped.get(key)
        if by_x is None:
            by_x = grouped[key] = {}
            units[key] = r.unit
        by_x.setdefault(x, []).append((r.cores or 0, r.value))  # type: ignore[arg-type]
    out = []
    for key, by_x in grouped.items():
        points, runs, measured = {}, {}, {}
        for x in sorted(by_x):
            most = max(cores for cores, _ in by_x[x])
            values = [value for cores, value in by_x[x] if cores == most]
            points[x], runs[x], measured[x] = statistics.median(values), len(values), tuple(values)
        bench = benches[key[3]]
        out.append(Series(SeriesKey(*key), bench, axis or bench.x, units[key], points, runs, measured))
    return sorted(out, key=lambda s: (s.key.where, s.key.benchmark, s.key.figure, s.key.variant, s.key.stack))


def select(all_series: Iterable[Series], **wanted: Any) -> list[Series]:
    """The series whose key fields equal the given values (e.g. figure='rmax')."""
    return [s for s in all_series if all(getattr(s.key, k) == v for k, v in wanted.items())]
