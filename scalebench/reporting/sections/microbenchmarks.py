"""The report's microbenchmark section: bandwidth and latency curves with n1/2 and the latency surprise,
other per-size figures, each stack against the baseline with health warnings, and hpcc's single
figures."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from scalebench.analysis import comparison
from scalebench.errors import InputError
from scalebench.interconnect import curves
from scalebench.reporting import bakeoff
from scalebench.reporting.document import Block, Chart, Figure, Heading, Line, Mark, Panel, Text, bullets, table
from scalebench.reporting.sections.common import fmt, fom_groups, measured_line, slug, ylabel
from scalebench.reporting.series import Series, at_label, axis_label
from scalebench.units import format_size


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
        panels.append(Panel(f"Bandwidth ({where})", axis_label("msg_size"), ylabel(bandwidths[0][1]), lines, marks,
                            xlog=True))
    latencies = [(i, i.latency) for i in found if i.latency]
    if latencies:
        ideal = tuple(_hockney_line(i.stack, s, i.half) for i, s in latencies if i.half)
        panels.append(Panel(f"Latency ({where})", axis_label("msg_size"), ylabel(latencies[0][1]),
                            (*(measured_line(s) for _, s in latencies), *ideal), xlog=True, ylog=True))
    return Chart(slug("micro", where, suite), f"{suite} on {where}: bandwidth (n1/2 marked) and latency "
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
    ratios = bakeoff.ratios_to_baseline(curves, first.key.stack, first.higher_is_better, first.axis)
    summary = comparison.summarise({stack: r for stack, r in ratios.items() if r})
    warnings = comparison.health_warnings(bakeoff.time_like_curves(curves, first.higher_is_better))
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
    chart = Chart(slug("micro", first.key.where, first.key.benchmark, first.key.figure),
                  f"{title}: {label} vs message size, per stack", (
                      Panel(title, axis_label(first.axis), ylabel(first), lines, xlog=True,
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
    baseline = bakeoff.default_baseline(all_series)
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
        for members in fom_groups(s for s in here if s.axis == "msg_size").values():
            out += _summaries(members, baseline)
        out += _single_tables(where, [s for s in here if s.axis != "msg_size"])
    return out
