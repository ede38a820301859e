"""The sections of a report: HPL (table, Rmax and efficiency vs node count), applications (speedup,
efficiency, the study's stack improvement), microbenchmarks (curves, n1/2, latency surprise, stack
summaries) and other checks. Every number shown for a point is the median over the runs that
measured it (scalebench.results.series).
"""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from scalebench.analysis import comparison, scaling
from scalebench.benchmarks import lookup
from scalebench.interconnect import curves
from scalebench.results import compare, series
from scalebench.results.document import (Block, Chart, Figure, Heading, Line, Mark, Panel, Text, bullets, table,
                                         text_table)
from scalebench.errors import InputError
from scalebench.results.series import Series, at_label, axis_label
from scalebench.results.store import Case, Record, Session
from scalebench.units import format_size

LIST_LIMIT = 4  # distinct values shown per cell before "(+N more)"


def fmt(value: float | int | None, spec: str = "") -> str:
    return "-" if value is None else format(value, spec)


def _median(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _slug(*parts: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", "-".join(parts)).strip("-").lower()


def some(values: Iterable[Any]) -> str:
    distinct = sorted({str(v) for v in values if v not in (None, "")})
    shown = ", ".join(distinct[:LIST_LIMIT]) or "-"
    return shown + (f" (+{len(distinct) - LIST_LIMIT} more)" if len(distinct) > LIST_LIMIT else "")


# --- HPL table (terminal and report) ----------------------------------------------------------------

@dataclass(frozen=True)
class HplLine:
    """One HPL configuration (scale, geometry, deck) on one system and stack; repeated runs of it
    are summarised by their medians."""

    where: str  # system:partition
    stack: str
    scale: str
    nodes: int | None
    ranks: int | None
    n: int | None
    nb: int | None
    grid: str
    rmax: float | None
    rpeak: float | None
    efficiency: float | None
    dgemm: float | None
    result: str  # PASS, FAIL or "<passed>/<runs> PASS"
    case: Case  # the latest run, for its provenance
    runs: int = 1


def _hpl_key(case: Case) -> tuple[Any, ...]:
    deck = case.provenance.get("hpl_deck") or {}
    n = deck.get("n") or case.figure("n")
    grid = f"{deck['p']} x {deck['q']}" if deck else ""
    return (f"{case.system}:{case.partition}", case.stack, str(case.params.get("scale", "")), case.num_nodes,
            case.num_tasks, int(n) if n else None, deck.get("nb"), grid)


def _result(cases: Sequence[Case]) -> str:
    passed = sum(c.result == "pass" for c in cases)
    return "PASS" if passed == len(cases) else "FAIL" if passed == 0 else f"{passed}/{len(cases)} PASS"


def hpl_lines(sessions: Iterable[Session]) -> list[HplLine]:
    grouped: dict[tuple[Any, ...], list[Case]] = {}
    for session in sessions:
        for case in session.cases:
            if case.result != "skip" and lookup(case.benchmark).section == "hpl":
                grouped.setdefault(_hpl_key(case), []).append(case)
    lines = []
    for key, cases in grouped.items():
        cases.sort(key=lambda c: c.session_start)
        measured = [c for c in cases if c.measured]

        def median(name: str) -> float | None:
            return _median(c.figure(name) for c in measured)

        where, stack, scale, nodes, ranks, n, nb, grid = key
        lines.append(HplLine(where, stack, scale, nodes, ranks, n, nb, grid, rmax=median("rmax"),
                             rpeak=median("rpeak_gflops"), efficiency=median("efficiency"),
                             dgemm=median("dgemm_ceiling"), result=_result(cases), case=cases[-1], runs=len(cases)))
    return sorted(lines, key=lambda l: (l.where, l.stack, l.nodes or 0, l.ranks or 0, l.scale))


HPL_HEADER = ("System", "Stack", "Scale", "Nodes", "Ranks", "N", "NB", "P x Q",
              "Rmax (Gflop/s)", "Rpeak (Gflop/s)", "Efficiency", "DGEMM (Gflop/s)", "Rmax/DGEMM", "Result", "Runs")


def _hpl_cells(line: HplLine) -> tuple[str, ...]:
    efficiency = "-" if line.efficiency is None else f"{line.efficiency:.1f}%"
    of_dgemm = f"{100 * line.rmax / line.dgemm:.1f}%" if line.rmax and line.dgemm else "-"
    return (line.where, line.stack, line.scale, fmt(line.nodes), fmt(line.ranks), fmt(line.n),
            fmt(line.nb), line.grid or "-", fmt(line.rmax, ".2f"), fmt(line.rpeak, ".1f"),
            efficiency, fmt(line.dgemm, ".1f"), of_dgemm, line.result, str(line.runs))


def hpl_terminal_table(sessions: Iterable[Session]) -> str:
    return text_table(HPL_HEADER, [_hpl_cells(line) for line in hpl_lines(sessions)])


# --- charts -----------------------------------------------------------------------------------------

def _measured(s: Series, values: dict[int, float] | None = None) -> Line:
    values = s.points if values is None else values
    return Line(s.key.stack, tuple(values), tuple(values.values()), s.key.stack)


def _linear(s: Series, label: str) -> Line:
    """Perfect scaling from the series' smallest point: value(x0) * x / x0."""
    x0 = min(s.points)
    return Line(label, tuple(s.points), tuple(s.points[x0] * x / x0 for x in s.points), s.key.stack, style="ideal")


def _ylabel(s: Series) -> str:
    label = s.bench.figure(s.key.figure).label
    return f"{label} ({s.unit})" if s.unit and s.unit.lower() != label.lower() else label


# --- HPL section ------------------------------------------------------------------------------------

def _hpl_axis_series(rows: Sequence[Record], where_series: Sequence[Series]) -> list[Series]:
    """On one node (a workstation), scaling is over cores: plot against cores there."""
    if len({x for s in where_series for x in s.points}) > 1:
        return list(where_series)
    system, partition = where_series[0].key.system, where_series[0].key.partition
    names = sorted({s.key.benchmark for s in where_series})
    return [s for s in series.build(rows, "cores", names) if (s.key.system, s.key.partition) == (system, partition)]


def _hpl_where(where: str, hpl: Sequence[Series]) -> list[Block]:
    rmax = series.select(hpl, figure="rmax")
    efficiency = series.select(hpl, figure="efficiency")
    if not rmax:
        return []
    axis = rmax[0].axis
    chart = Chart(_slug("hpl", where), f"HPL on {where}: Rmax and efficiency vs {axis_label(axis).lower()}, per stack", (
        Panel(f"Rmax ({where})", axis_label(axis), _ylabel(rmax[0]),
              tuple(line for s in rmax for line in (_measured(s), _linear(s, "linear scaling"))), y_from_zero=True),
        Panel(f"Efficiency Rmax/Rpeak ({where})", axis_label(axis), "Efficiency (%)",
              tuple(_measured(s) for s in efficiency), y_from_zero=True),
    ))
    rows = []
    for s in rmax:
        eff = next((e.points for e in efficiency if e.key.stack == s.key.stack), {})
        speedups = scaling.speedup(s.points, higher_is_better=s.higher_is_better)
        parallel = series.efficiency(s)
        x0 = min(s.points)
        for x, value in s.points.items():
            rows.append((s.key.stack, x, f"{value:.2f}", f"{s.points[x0] * x / x0:.2f}", f"{speedups[x]:.2f}",
                         f"{parallel[x]:.1%}", fmt(eff.get(x), ".1f"), s.runs[x]))
    return [Heading(3, f"Scaling on {where}"), Figure(chart),
            table(("Stack", axis_label(axis), "Rmax (Gflop/s)", "Linear scaling", "Speedup",
                   "Parallel efficiency", "Rmax/Rpeak (%)", "Runs"), rows)]


def _hpl_notes(lines: Sequence[HplLine]) -> list[Block]:
    out: list[Block] = [
        Text("Efficiency = Rmax / nominal Rpeak of the cores used (TOP500 convention). Rmax counts only runs whose "
             "residual check PASSED. DGEMM is the ceiling measured in the same job (StarDGEMM x ranks, all ranks "
             "busy: hpcc's, or the embedded xhpl's before it solves), Rmax/DGEMM the share of it HPL reaches. The "
             "clock under load can exceed the nominal one, so DGEMM may exceed Rpeak. Repeated runs of one "
             "configuration are summarised by their median (Runs)."),
        Heading(3, "How N was chosen"),
        bullets(sorted({f"{l.where} {l.stack} {l.scale}: {l.case.provenance.get('n_policy', 'unknown')}; "
                        f"deck from {l.case.provenance.get('deck_source', 'unknown')}" for l in lines})),
        Heading(3, "BLAS kernel and Rpeak inputs"),
        bullets(sorted({f"{l.where} {l.stack}: BLAS kernel {l.case.provenance.get('blas_kernel', 'unknown')}; "
                        f"OpenBLAS reported: {l.case.provenance.get('blas_kernel_used', 'unknown')}" for l in lines})
                + sorted({f"{l.where}: Rpeak from {l.case.provenance.get('rpeak_derivation', 'unknown')}"
                          for l in lines})),
    ]
    trials = sorted({f"{l.where} {l.stack} {l.scale}: {l.case.provenance['trial_gflops']} Gflop/s"
                     for l in lines if len(str(l.case.provenance.get("trial_gflops") or "").split()) > 1})
    if trials:
        out += [Heading(3, "Solves per run (Rmax is the best PASSED one)"), bullets(trials)]
    ceiling = sorted({f"{l.case.name} on {l.where} ({l.stack}): {l.case.provenance['ceiling_warnings']}"
                      for l in lines if l.case.provenance.get("ceiling_warnings")})
    if ceiling:
        out += [Heading(3, "DGEMM ceiling warnings"), bullets(ceiling)]
    return out


def hpl_section(sessions: Sequence[Session], rows: Sequence[Record], all_series: Sequence[Series]) -> list[Block]:
    lines = hpl_lines(sessions)
    out: list[Block] = [Heading(2, "HPL")]
    if not lines:
        return out + [Text("No HPL results.")]
    out.append(table(HPL_HEADER, [_hpl_cells(line) for line in lines]))
    hpl = [s for s in all_series if s.bench.section == "hpl"]
    for where in sorted({s.key.where for s in hpl}):
        out += _hpl_where(where, _hpl_axis_series(rows, [s for s in hpl if s.key.where == where]))
    return out + _hpl_notes(lines)


# --- applications -----------------------------------------------------------------------------------

def _strong_rows(s: Series) -> list[tuple[Any, ...]]:
    """Per process count: value, speedup, parallel efficiency, Karp-Flatt serial fraction, runs."""
    efficiency = series.efficiency(s)
    speedups = scaling.speedup(s.points, higher_is_better=s.higher_is_better)
    p0 = min(s.points)
    return [(s.key.stack, p, f"{v:.4g}", f"{speedups[p]:.2f}", f"{efficiency[p]:.1%}",
             fmt(scaling.karp_flatt(speedups[p], p, p0), ".3f"), s.runs[p]) for p, v in s.points.items()]


def _improvement(base: Series, other: Series) -> tuple[str, str, str]:
    try:
        result = scaling.stack_improvement(base.points, other.points, higher_is_better=base.higher_is_better)
    except InputError as err:
        return "-", "-", str(err)
    note = f"not measured by {other.key.stack} at {result.missing}" if result.missing else ""
    return f"{result.at_peak:+.1%}", f"{result.mean_to_peak:+.1%}", note


def _fom_panel(title: str, members: Sequence[Series]) -> Panel:
    base = members[0]
    return Panel(f"{base.bench.figure(base.key.figure).label} ({title})", axis_label(base.axis), _ylabel(base),
                 tuple(_measured(s) for s in members), xlog=True)


def _strong_group(title: str, members: Sequence[Series]) -> list[Block]:
    base = members[0]
    speedups = {s.key.stack: scaling.speedup(s.points, higher_is_better=s.higher_is_better) for s in members}
    peaks = {stack: scaling.speedup_peak(values) for stack, values in speedups.items()}
    p0 = min(x for s in members for x in s.points)
    xs = sorted({x for s in members for x in s.points})
    chart = Chart(_slug("app", title), f"{title}: speedup vs processes per stack (ideal dashed, peaks starred); "
                                       f"{base.bench.figure(base.key.figure).label} vs processes", (
        Panel(f"Speedup ({title})", axis_label(base.axis), f"Speedup over {p0} process(es)",
              (*(_measured(s, speedups[s.key.stack]) for s in members),
               Line("ideal", tuple(xs), tuple(x / p0 for x in xs), "ideal", style="ideal")),
              tuple(Mark(p, sp, f"peak {sp:.1f}x at {p}", stack) for stack, (p, sp) in peaks.items()),
              xlog=True, ylog=True),  # log-log: ideal scaling is the diagonal
        _fom_panel(title, members)))
    base_peak = peaks[base.key.stack][0]
    stacks = [(s.key.stack, f"{peaks[s.key.stack][1]:.2f}", at_label(s.axis, peaks[s.key.stack][0]),
               *(_improvement(base, s) if s is not base else ("baseline", "baseline", "")),
               _interconnect_value(speedups[base.key.stack], speedups[s.key.stack], base_peak)
               if s is not base else "baseline") for s in members]
    return [Heading(3, title), Figure(chart),
            table(("Stack", axis_label(base.axis), _ylabel(base), "Speedup", "Parallel efficiency", "Karp-Flatt",
                   "Runs"), [row for s in members for row in _strong_rows(s)]),
            table(("Stack", "Peak speedup", "At", f"Improvement over {base.key.stack} at its peak",
                   "Mean improvement up to that peak", "Note",
                   f"Interconnect value: processes saved for {base.key.stack}'s peak speedup"), stacks)]


def _interconnect_value(base: Mapping[int, float], other: Mapping[int, float], p: int) -> str:
    """How many fewer processes the other stack needs for the baseline's speedup at its peak."""
    try:
        value = scaling.interconnect_value(base, other, p)
    except InputError as err:
        return str(err)
    if value is None:
        return "never reaches it"
    bound = "at least " if value.upper_bound else ""
    return f"{bound}{value.fewer_procs:g} ({value.p_other:.3g} instead of {p})"


def _weak_group(title: str, members: Sequence[Series]) -> list[Block]:
    """Weak scaling: the work per process is fixed, so the ideal is a flat efficiency of 1."""
    base = members[0]
    efficiency = {s.key.stack: series.efficiency(s) for s in members}
    xs = sorted({x for s in members for x in s.points})
    chart = Chart(_slug("app", title), f"{title}: weak-scaling efficiency vs processes per stack (ideal dashed); "
                                       f"{base.bench.figure(base.key.figure).label} vs processes", (
        Panel(f"Weak-scaling efficiency ({title})", axis_label(base.axis), "Efficiency T(p0)/T(p)",
              (*(_measured(s, efficiency[s.key.stack]) for s in members),
               Line("ideal", tuple(xs), tuple(1.0 for _ in xs), "ideal", style="ideal")), xlog=True, y_from_zero=True),
        _fom_panel(title, members)))
    largest = [(s.key.stack, at_label(s.axis, max(s.points)), f"{efficiency[s.key.stack][max(s.points)]:.1%}")
               for s in members]
    rows = [(s.key.stack, p, f"{v:.4g}", f"{efficiency[s.key.stack][p]:.1%}", s.runs[p])
            for s in members for p, v in s.points.items()]
    return [Heading(3, title), Figure(chart),
            table(("Stack", axis_label(base.axis), _ylabel(base), "Weak-scaling efficiency", "Runs"), rows),
            table(("Stack", "Largest count", "Weak-scaling efficiency there"), largest)]


def _by_group(all_series: Iterable[Series]) -> dict[tuple[str, str, str, str], list[Series]]:
    """Figure-of-merit series grouped by (system:partition, benchmark, variant, figure); stacks inside."""
    grouped: dict[tuple[str, str, str, str], list[Series]] = {}
    for s in all_series:
        if s.key.figure == s.bench.fom:
            grouped.setdefault((s.key.where, s.key.benchmark, s.key.variant, s.key.figure), []).append(s)
    return grouped


def application_section(all_series: Sequence[Series]) -> list[Block]:
    out: list[Block] = [Heading(2, "Applications")]
    groups = _by_group(s for s in all_series if s.bench.section == "application")
    if not groups:
        return out + [Text("No application results.")]
    out.append(Text("Speedup S(p) = T(p0)/T(p) for times and R(p)/R(p0) for rates, p0 the smallest process count "
                    "measured; parallel efficiency S(p) p0/p; Karp-Flatt e is the serial fraction that explains "
                    "the speedup (growing with p: overhead, not a serial part). A stack's improvement is measured "
                    "against the first stack at the first stack's speedup peak, and averaged (geometric mean) up "
                    "to it. Weak-scaling runs (work per process fixed) show the efficiency T(p0)/T(p) instead."))
    for (where, _, variant, _), members in sorted(groups.items()):
        title = f"{members[0].bench.title}{' ' + variant if variant else ''} on {where}"
        out += (_weak_group if members[0].weak else _strong_group)(title, members)
    return out


# --- microbenchmarks --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Interconnect:
    """One stack's bandwidth and latency curves on one system, with what follows from them."""

    stack: str
    bandwidth: Series | None
    latency: Series | None
    half: curves.HalfPower | None = None
    surprise: list[tuple[float, float]] = field(default_factory=list)
    area: float | None = None


def _interconnect(stack: str, bandwidth: Series | None, latency: Series | None) -> _Interconnect:
    half = curves.half_power_point(sorted(bandwidth.points.items())) if bandwidth else None
    if not (half and latency):
        return _Interconnect(stack, bandwidth, latency, half)
    curve = sorted(latency.points.items())
    t0 = curve[0][1]  # the smallest message: Hockney's startup latency
    surprise = curves.latency_surprise(curve, t0, half.peak_bandwidth)
    try:
        area: float | None = curves.surprise_area(curve, t0, half.peak_bandwidth)
    except InputError:
        area = None  # fewer than two sizes above 0 bytes
    return _Interconnect(stack, bandwidth, latency, half, surprise, area)


def _hockney_line(stack: str, latency: Series, half: curves.HalfPower) -> Line:
    t0 = latency.points[min(latency.points)]
    return Line("Hockney model t0 + size/B", tuple(latency.points),
                tuple(curves.ideal_latency(t0, half.peak_bandwidth, x) for x in latency.points), stack, style="ideal")


def _micro_chart(where: str, suite: str, found: Sequence[_Interconnect]) -> Chart:
    panels = []
    bandwidths = [(i, i.bandwidth) for i in found if i.bandwidth]
    if bandwidths:
        # n1/2 is starred on each curve and given in the legend, where labels cannot collide.
        marks = tuple(Mark(i.half.n_half, i.half.peak_bandwidth / 2, "", i.stack, vertical=True)
                      for i, _ in bandwidths if i.half and i.half.n_half)
        lines = tuple(Line(f"{i.stack} (n1/2 {format_size(int(i.half.n_half))})" if i.half and i.half.n_half
                           else i.stack, tuple(s.points), tuple(s.points.values()), i.stack) for i, s in bandwidths)
        panels.append(Panel(f"Bandwidth ({where})", axis_label("msg_size"), _ylabel(bandwidths[0][1]), lines, marks,
                            xlog=True))
    latencies = [(i, i.latency) for i in found if i.latency]
    if latencies:
        ideal = tuple(_hockney_line(i.stack, s, i.half) for i, s in latencies if i.half)
        panels.append(Panel(f"Latency ({where})", axis_label("msg_size"), _ylabel(latencies[0][1]),
                            (*(_measured(s) for _, s in latencies), *ideal), xlog=True, ylog=True))
    return Chart(_slug("micro", where, suite), f"{suite} on {where}: bandwidth (n1/2 marked) and latency "
                 "(Hockney model t0 + size/B dashed) vs message size, per stack", tuple(panels))


def _micro_rows(found: Sequence[_Interconnect]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for i in found:
        half, worst = i.half, max(i.surprise, key=lambda p: p[1], default=None)
        n_half = ("<= smallest size" if half and half.at_or_below_smallest
                  else f"{format_size(int(half.n_half))} ({half.method})" if half and half.n_half else "-")
        rows.append((i.stack, fmt(half.peak_bandwidth if half else None, ".1f"),
                     format_size(int(half.peak_size)) if half else "-", n_half,
                     fmt(i.latency.points[min(i.latency.points)] if i.latency else None, ".3g"),
                     f"{worst[1]:.2f}x at {format_size(int(worst[0]))}" if worst else "-", fmt(i.area, ".2f")))
    return rows


def _summaries(group: Sequence[Series], baseline: str | None) -> list[Block]:
    """Min / geomean / max of each stack's ratio to the baseline stack (else the first), and health
    warnings."""
    curves = {s.key.stack: s.points for s in group}
    if len(curves) < 2:
        return []
    first = next((s for s in group if s.key.stack == baseline), group[0])
    ratios = compare.ratios_to_baseline(curves, first.key.stack, first.higher_is_better, first.axis)
    summary = comparison.summarise({stack: r for stack, r in ratios.items() if r})
    warnings = comparison.health_warnings(compare.time_like_curves(curves, first.higher_is_better))
    title = f"{first.bench.title} on {first.key.where}"
    out: list[Block] = [
        Heading(4, f"{title}: stacks against {first.key.stack}"),
        table(("Stack", "Sizes", "Min ratio", "Geomean ratio", "Max ratio"),
              [(stack, s.count, f"{s.minimum:.3f}", f"{s.geomean:.3f}", f"{s.maximum:.3f}")
               for stack, s in summary.items()])]
    if warnings:
        out.append(bullets(_health_lines(warnings)))
    return out


def _health_lines(warnings: Sequence[comparison.HealthWarning]) -> list[str]:
    """One line per (stack, best stack): a slow protocol range flags many sizes at once."""
    grouped: dict[tuple[str, str], list[comparison.HealthWarning]] = {}
    for w in warnings:
        grouped.setdefault((str(w.config), str(w.best_config)), []).append(w)
    lines = []
    for (config, best), ws in grouped.items():
        low, high = min(w.times_best for w in ws), max(w.times_best for w in ws)
        sizes = (format_size(ws[0].size) if len(ws) == 1
                 else f"{len(ws)} sizes from {format_size(ws[0].size)} to {format_size(ws[-1].size)}")
        factor = f"{low:.1f}x" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f}x to {high:.1f}x"
        lines.append(f"health: {config} is {factor} worse than {best} at {sizes}")
    return lines


def _curve_blocks(where: str, suite: str, curves: Sequence[Series]) -> list[Block]:
    """Bandwidth and latency curves of one suite (NetPIPE, OSU point-to-point) per stack."""
    found = []
    for stack in sorted({s.key.stack for s in curves}):
        mine = [s for s in curves if s.key.stack == stack]
        bandwidth = next((s for s in mine if s.bench.figure(s.key.figure).kind == "bandwidth"), None)
        latency = next((s for s in mine if s.bench.figure(s.key.figure).kind == "latency"), None)
        found.append(_interconnect(stack, bandwidth, latency))
    return [Heading(3, f"{suite} on {where}"), Figure(_micro_chart(where, suite, found)),
            table(("Stack", "Peak bandwidth (MB/s)", "At", "n1/2", "Latency t0 (us)", "Worst latency surprise",
                   "Surprise area"), _micro_rows(found))]


def _sized_blocks(members: Sequence[Series]) -> list[Block]:
    """Any other figure of merit per message size (streams, multi-pair bandwidth, collectives): a curve
    per stack and variant (e.g. pairs=2), and each curve's best value; n1/2 for bandwidths."""
    first = members[0]
    label = first.bench.figure(first.key.figure).label
    title = f"{first.bench.title} on {first.key.where}"

    def name(s: Series) -> str:
        return f"{s.key.stack} {s.key.variant}".strip()

    lines = tuple(Line(name(s), tuple(s.points), tuple(s.points.values()), s.key.stack) for s in members)
    chart = Chart(_slug("micro", first.key.where, first.key.benchmark, first.key.figure),
                  f"{title}: {label} vs message size, per stack", (
                      Panel(title, axis_label(first.axis), _ylabel(first), lines, xlog=True,
                            ylog=first.direction == "lower"),))
    rows = []
    for s in members:
        pick = min if first.direction == "lower" else max
        at, best = pick(s.points.items(), key=lambda p: p[1])
        half = (curves.half_power_point(sorted(s.points.items())) if s.unit == "MB/s" and len(s.points) >= 2
                else None)
        n_half = (format_size(int(half.n_half)) if half and half.n_half else
                  "<= smallest size" if half else "-")
        rows.append((s.key.stack, s.key.variant or "-", f"{best:.4g}", format_size(at), n_half, s.runs[at]))
    return [Heading(3, title), Figure(chart),
            table(("Stack", "Variant", f"{'Lowest' if first.direction == 'lower' else 'Highest'} {label} ({first.unit})",
                   "At", "n1/2", "Runs"), rows)]


def _single_tables(where: str, single: Sequence[Series]) -> list[Block]:
    """Figures without a size axis (hpcc's ping-pong and rings): one row per figure, a column per stack."""
    out: list[Block] = []
    groups: dict[tuple[str, str], list[Series]] = {}
    for s in single:
        groups.setdefault((s.bench.title, s.key.variant), []).append(s)
    for (title, variant), members in groups.items():
        stacks = sorted({s.key.stack for s in members})
        order = {s.bench.figure(s.key.figure).label: list(s.bench.figures).index(s.key.figure)
                 if s.key.figure in s.bench.figures else len(s.bench.figures) for s in members}
        cells: dict[tuple[str, str, str], dict[str, str]] = {}
        for s in members:
            for x, v in s.points.items():
                row = (s.bench.figure(s.key.figure).label, at_label(s.axis, x), s.unit)
                cells.setdefault(row, {})[s.key.stack] = f"{v:.4g}"
        rows = [(label, at, *(by_stack.get(stack, "-") for stack in stacks), unit)
                for (label, at, unit), by_stack in sorted(cells.items(), key=lambda item: order[item[0][0]])]
        out += [Heading(3, f"{title} on {where}" + (f" ({variant})" if variant else "")),
                table(("Figure", "At", *stacks, "Unit"), rows)]
    return out


def micro_section(all_series: Sequence[Series]) -> list[Block]:
    out: list[Block] = [Heading(2, "Microbenchmarks")]
    micro = [s for s in all_series if s.bench.section == "microbenchmark"]
    if not micro:
        return out + [Text("No microbenchmark results.")]
    baseline = compare.default_baseline(all_series)
    out.append(Text("n1/2 is the message size reaching half the peak bandwidth. Latency surprise = measured latency "
                    "/ Hockney's model t0 + size/B (t0 the smallest message's latency, B the peak bandwidth of the "
                    "same stack): 1 is the model, 2 twice as slow; the area sums the excess over log2(size). Ratios "
                    "to the baseline stack are > 1 when better (sizes from 4 bytes); a health warning marks a size "
                    "more than 10x worse than the best stack there."))
    for where in sorted({s.key.where for s in micro}):
        here = [s for s in micro if s.key.where == where]
        curves = [s for s in here if s.bench.figure(s.key.figure).kind]
        for suite in sorted({s.bench.suite for s in curves}):
            out += _curve_blocks(where, suite, [s for s in curves if s.bench.suite == suite])
        sized: dict[tuple[str, str], list[Series]] = {}
        for s in here:
            if s.axis == "msg_size" and s not in curves and s.key.figure == s.bench.fom:
                sized.setdefault((s.key.benchmark, s.key.figure), []).append(s)
        for members in sized.values():
            out += _sized_blocks(members)
        for members in _by_group(s for s in here if s.axis == "msg_size").values():
            out += _summaries(members, baseline)
        out += _single_tables(where, [s for s in here if s.axis != "msg_size"])
    return out


# --- other checks, failures, runs, provenance --------------------------------------------------------

def other_section(all_series: Sequence[Series]) -> list[Block]:
    other = [s for s in all_series if s.bench.section == "other"]
    if not other:
        return []
    rows = [(s.key.where, s.key.benchmark, s.key.variant or "-", s.key.stack, s.key.figure, x, f"{v:.4g}", s.unit,
             s.runs[x]) for s in other for x, v in s.points.items()]
    return [Heading(2, "Other results"),
            Text("Checks not in scalebench/data/benchmarks.yaml: their figures, without plots or comparisons."),
            table(("System", "Benchmark", "Variant", "Stack", "Figure", "Processes", "Value", "Unit", "Runs"), rows)]
