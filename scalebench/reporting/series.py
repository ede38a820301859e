"""Records grouped into series: one curve (x -> value) per system, partition, stack, benchmark,
figure and remaining check parameters. Reports, acceptance verdicts and bake-offs all read these,
so they agree on what was measured.

Repeated runs of one point are summarised by their median: one noisy run moves it less than a mean,
and the count is kept so readers see how many runs stand behind a number. At one x, only the cases
using the most cores count: on one node, HPL's 1_core and 1_node scales both have num_nodes = 1,
and the whole node is the node-count point.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import polars as pl

from scalebench.analysis import scaling
from scalebench.registry import Entry, lookup
from scalebench.reporting.table import Table, exact_median, hashable

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
        return variant_of(self.params)


def variant_of(params: tuple[tuple[str, Any], ...]) -> str:
    return " ".join(f"{k}={v}" for k, v in params)


@dataclass(frozen=True)
class Series:
    key: SeriesKey
    bench: Entry
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


_CASE_AXES = {"nodes": "num_nodes", "procs": "num_tasks", "cores": "cores"}


def record_params(params: dict[str, Any], msg_size: int | None) -> tuple[tuple[str, Any], ...]:
    """A figure's parameters: its case's, sorted, with the message size of a sized figure."""
    pairs = tuple(sorted((k, hashable(v)) for k, v in params.items()))
    return pairs if msg_size is None else tuple(sorted((*pairs, ("msg_size", msg_size))))


KEY = ["system", "partition", "stack", "benchmark", "figure", "named"]  # a series; named: its parameters' id


@dataclass(frozen=True)
class Points:
    """The usable figures as points of series: KEY columns, x, value, unit, cores and case; only the
    cases using the most cores at each x (see the module's docstring)."""

    rows: pl.DataFrame
    named: dict[int, tuple[tuple[str, Any], ...]]  # the parameters each `named` id stands for
    benches: dict[str, Entry]


def points(table: Table, axis: str | None = None, benchmark_names: Sequence[str] | None = None) -> Points:
    rows = table.records.filter(pl.col("usable")).select("case", "figure", "msg_size", "value", "unit").join(
        table.cases.select("case", "system", "partition", "stack", "benchmark", "params", *_CASE_AXES.values()),
        on="case", how="left", maintain_order="left")
    if benchmark_names is not None:
        rows = rows.filter(pl.col("benchmark").is_in(list(benchmark_names)))
    # Per distinct parameter combination (a few hundred), in Python: the x axis, a parameter x, and
    # the parameters that name the series.
    benches: dict[str, Entry] = {}
    named: dict[tuple[tuple[str, Any], ...], int] = {}
    combos: dict[str, list[Any]] = {"benchmark": [], "params": [], "msg_size": [], "along": [], "x_param": [],
                                    "named": []}
    distinct = rows.select("benchmark", "params", "msg_size").unique(maintain_order=True)
    for bench_name, params, size in distinct.iter_rows():
        bench = benches.get(bench_name) or benches.setdefault(bench_name, lookup(bench_name))
        along = axis or bench.x
        pairs = record_params(json.loads(params), size)
        kept = tuple(p for p in pairs if p[0] != along and p[0] not in bench.series_params)
        x_param = None if along in _CASE_AXES else next((_integral(v) for k, v in pairs if k == along), None)
        for name, value in (("benchmark", bench_name), ("params", params), ("msg_size", size), ("along", along),
                            ("x_param", x_param), ("named", named.setdefault(kept, len(named)))):
            combos[name].append(value)
    combo_frame = pl.DataFrame(combos, schema={"benchmark": pl.Utf8, "params": pl.Utf8, "msg_size": pl.Int64,
                                               "along": pl.Utf8, "x_param": pl.Int64, "named": pl.UInt32})
    rows = rows.join(combo_frame, on=["benchmark", "params", "msg_size"], how="left", nulls_equal=True,
                     maintain_order="left")
    x = pl.col("x_param")
    for along, column in _CASE_AXES.items():
        x = pl.when(pl.col("along") == along).then(pl.col(column)).otherwise(x)
    rows = rows.with_columns(x=x).filter(pl.col("x").is_not_null()).with_columns(
        unit=pl.col("unit").first().over(KEY), cores=pl.col("cores").fill_null(0))
    rows = rows.filter(pl.col("cores") == pl.col("cores").max().over([*KEY, "x"]))
    return Points(rows.select(*KEY, "x", "value", "unit", "cores", "case"), {i: k for k, i in named.items()}, benches)


def build(table: Table, axis: str | None = None, benchmark_names: Sequence[str] | None = None) -> list[Series]:
    """Series of the usable records (optionally of some benchmarks), on the registry's x axis
    unless `axis` is given; sorted by system, partition, benchmark, figure, parameters, stack."""
    found = points(table, axis, benchmark_names)
    medians = found.rows.group_by([*KEY, "x"], maintain_order=True).agg(
        pl.col("unit").first(), median=exact_median("value"), runs=pl.len(), measured=pl.col("value"))
    grouped: dict[tuple[Any, ...], tuple[str, dict[int, float], dict[int, int], dict[int, tuple[float, ...]]]] = {}
    for system, partition, stack, bench_name, figure, kept_id, x_value, unit, median, runs, measured \
            in medians.iter_rows():
        entry = grouped.setdefault((system, partition, stack, bench_name, figure, found.named[kept_id]),
                                   (unit, {}, {}, {}))
        entry[1][x_value], entry[2][x_value], entry[3][x_value] = median, runs, tuple(measured)
    out = []
    for key_values, (unit, values, runs, measured) in grouped.items():
        bench = found.benches[key_values[3]]
        order = sorted(values)
        out.append(Series(SeriesKey(*key_values), bench, axis or bench.x, unit, {x: values[x] for x in order},
                          {x: runs[x] for x in order}, {x: measured[x] for x in order}))
    return sorted(out, key=lambda s: (s.key.where, s.key.benchmark, s.key.figure, s.key.variant, s.key.stack))


def select(all_series: Iterable[Series], **wanted: Any) -> list[Series]:
    """The series whose key fields equal the given values (e.g. figure='rmax')."""
    return [s for s in all_series if all(getattr(s.key, k) == v for k, v in wanted.items())]
