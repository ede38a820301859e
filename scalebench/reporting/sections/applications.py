"""The report's applications section: speedup, parallel and weak-scaling efficiency, Karp-Flatt, and each
stack's improvement and interconnect value at the first stack's speedup peak."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from scalebench.analysis import scaling
from scalebench.errors import InputError
from scalebench.reporting import noise, series
from scalebench.reporting.document import Block, Chart, Figure, Heading, Line, Mark, Panel, Text, table
from scalebench.reporting.sections.common import fmt, fom_groups, measured_line, slug, ylabel
from scalebench.reporting.series import Series, at_label, axis_label
from scalebench.site.thresholds import report_flags


def _strong_rows(s: Series, flags: Mapping[str, float]) -> list[tuple[tuple[Any, ...], str]]:
    """Per process count: (value, speedup, parallel efficiency, Karp-Flatt serial fraction, runs (NOISY
    where they disagree); why they disagree)."""
    efficiency = series.efficiency(s)
    speedups = scaling.speedup(s.points, higher_is_better=s.higher_is_better)
    p0 = min(s.points)
    out = []
    for p, v in s.points.items():
        runs, note = noise.runs_cell(s.runs[p], s.values.get(p, ()), flags)
        out.append(((s.key.stack, p, f"{v:.4g}", f"{speedups[p]:.2f}", f"{efficiency[p]:.1%}",
                     fmt(scaling.karp_flatt(speedups[p], p, p0), ".3f"), runs), note))
    return out


def _improvement(base: Series, other: Series) -> tuple[str, str, str, str]:
    try:
        result = scaling.stack_improvement(base.points, other.points, higher_is_better=base.higher_is_better)
    except InputError as err:
        return "-", "-", "-", str(err)
    note = f"not measured by {other.key.stack} at {result.missing}" if result.missing else ""
    return f"{result.at_peak:+.1%}", f"{result.mean_to_peak:+.1%}", f"{result.average_to_peak:+.1%}", note


def _fom_panel(title: str, members: Sequence[Series]) -> Panel:
    base = members[0]
    return Panel(f"{base.bench.figure(base.key.figure).label} ({title})", axis_label(base.axis), ylabel(base),
                 tuple(measured_line(s) for s in members), xlog=True)


def _strong_group(title: str, members: Sequence[Series]) -> list[Block]:
    base, flags = members[0], report_flags()
    speedups = {s.key.stack: scaling.speedup(s.points, higher_is_better=s.higher_is_better) for s in members}
    peaks = {stack: scaling.speedup_peak(values) for stack, values in speedups.items()}
    p0 = min(x for s in members for x in s.points)
    xs = sorted({x for s in members for x in s.points})
    chart = Chart(slug("app", title), f"{title}: speedup vs processes per stack (ideal dashed, peaks starred); "
                                       f"{base.bench.figure(base.key.figure).label} vs processes", (
        Panel(f"Speedup ({title})", axis_label(base.axis), f"Speedup over {p0} process(es)",
              (*(measured_line(s, speedups[s.key.stack]) for s in members),
               Line("ideal", tuple(xs), tuple(x / p0 for x in xs), "ideal", style="ideal")),
              tuple(Mark(p, sp, f"peak {sp:.1f}x at {p}", stack) for stack, (p, sp) in peaks.items()),
              xlog=True, ylog=True),  # log-log: ideal scaling is the diagonal
        _fom_panel(title, members)))
    base_peak = peaks[base.key.stack][0]
    improvements = [_improvement(base, s) if s is not base else ("baseline", "baseline", "baseline", "")
                    for s in members]  # the last of each: a note, under the row
    stacks = [(s.key.stack, f"{peaks[s.key.stack][1]:.2f}", at_label(s.axis, peaks[s.key.stack][0]), *found[:3],
               _interconnect_value(speedups[base.key.stack], speedups[s.key.stack], base_peak)
               if s is not base else "baseline") for s, found in zip(members, improvements)]
    rows = [row for s in members for row in _strong_rows(s, flags)]
    return [Heading(3, title), Figure(chart),
            table(("Stack", axis_label(base.axis), ylabel(base), "Speedup", "Parallel efficiency", "Karp-Flatt",
                   "Runs"), [cells for cells, _ in rows], [note for _, note in rows]),
            table(("Stack", "Peak speedup", "At", f"Improvement over {base.key.stack} at its peak",
                   "Mean improvement up to that peak (geometric)",
                   "Average % up to that peak (the study's: arithmetic mean)",
                   f"Interconnect value: processes saved for {base.key.stack}'s peak speedup"), stacks,
                  [found[3] for found in improvements])]


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
    base, flags = members[0], report_flags()
    efficiency = {s.key.stack: series.efficiency(s) for s in members}
    xs = sorted({x for s in members for x in s.points})
    chart = Chart(slug("app", title), f"{title}: weak-scaling efficiency vs processes per stack (ideal dashed); "
                                       f"{base.bench.figure(base.key.figure).label} vs processes", (
        Panel(f"Weak-scaling efficiency ({title})", axis_label(base.axis), "Efficiency T(p0)/T(p)",
              (*(measured_line(s, efficiency[s.key.stack]) for s in members),
               Line("ideal", tuple(xs), tuple(1.0 for _ in xs), "ideal", style="ideal")), xlog=True, y_from_zero=True),
        _fom_panel(title, members)))
    largest = [(s.key.stack, at_label(s.axis, max(s.points)), f"{efficiency[s.key.stack][max(s.points)]:.1%}")
               for s in members]
    rows = [((s.key.stack, p, f"{v:.4g}", f"{efficiency[s.key.stack][p]:.1%}", runs), note)
            for s in members for p, v in s.points.items()
            for runs, note in [noise.runs_cell(s.runs[p], s.values.get(p, ()), flags)]]
    return [Heading(3, title), Figure(chart),
            table(("Stack", axis_label(base.axis), ylabel(base), "Weak-scaling efficiency", "Runs"),
                  [cells for cells, _ in rows], [note for _, note in rows]),
            table(("Stack", "Largest count", "Weak-scaling efficiency there"), largest)]


def application_section(all_series: Sequence[Series]) -> list[Block]:
    out: list[Block] = [Heading(2, "Applications")]
    groups = fom_groups(s for s in all_series if s.bench.section == "application")
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
