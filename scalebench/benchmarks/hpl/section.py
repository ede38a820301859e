"""The report's HPL section: the HPL table (scalebench.reporting.hpl_table), Rmax and efficiency vs node
count with the linear-scaling line and the model's curve, energy, and how each deck was chosen."""
from __future__ import annotations

from typing import Sequence

from scalebench.analysis import scaling
from scalebench.reporting import series
from scalebench.reporting.document import Block, Chart, Figure, Heading, Line, Panel, Text, bullets, table
from scalebench.reporting.hpl_table import SECTION, HplLine, hpl_lines, hpl_tables
from scalebench.reporting.sections.common import fmt, measured_line, slug, ylabel
from scalebench.reporting.sections.energy import energy_blocks
from scalebench.reporting.series import Series, axis_label
from scalebench.reporting.table import Table
from scalebench.site.thresholds import report_flags


def _linear(s: Series, label: str) -> Line:
    """Perfect scaling from the series' smallest point: value(x0) * x / x0."""
    x0 = min(s.points)
    return Line(label, tuple(s.points), tuple(s.points[x0] * x / x0 for x in s.points), s.key.stack, style="ideal")


def _hpl_axis_series(results: Table, where_series: Sequence[Series]) -> list[Series]:
    """On one node (a workstation), scaling is over cores: plot against cores there."""
    if len({x for s in where_series for x in s.points}) > 1:
        return list(where_series)
    system, partition = where_series[0].key.system, where_series[0].key.partition
    names = sorted({s.key.benchmark for s in where_series})
    return [s for s in series.build(results, "cores", names) if (s.key.system, s.key.partition) == (system, partition)]


def _model_lines(efficiency: Sequence[Series], lines: Sequence[HplLine]) -> list[Line]:
    """Per stack, the model's expected efficiency at the series' points, dashed in the stack's colour.
    At one x, as in the series, the configuration with the most cores counts."""
    out = []
    for s in efficiency:
        expected: dict[int, tuple[int, float]] = {}
        for line in lines:
            point = line.point()
            found = line.expected
            if point is None or found is None or found.efficiency is None or line.stack != s.key.stack \
                    or line.where != s.key.where:
                continue
            x = point.cores if s.axis == "cores" else point.nodes
            if x in s.points and point.cores >= expected.get(x, (0, 0.0))[0]:
                expected[x] = (point.cores, found.efficiency)
        if len(expected) >= 2:
            xs = sorted(expected)
            out.append(Line(f"{s.key.stack} (model)", tuple(xs), tuple(expected[x][1] for x in xs), s.key.stack,
                            style="model"))
    return out


def _hpl_where(where: str, hpl: Sequence[Series], lines: Sequence[HplLine]) -> list[Block]:
    rmax = series.select(hpl, figure="rmax")
    efficiency = series.select(hpl, figure="efficiency")
    if not rmax:
        return []
    axis = rmax[0].axis
    chart = Chart(slug("hpl", where), f"HPL on {where}: Rmax and efficiency vs {axis_label(axis).lower()}, per stack "
                                      "(dashed: HPL's scalability model, calibrated on these results)", (
        Panel(f"Rmax ({where})", axis_label(axis), ylabel(rmax[0]),
              tuple(line for s in rmax for line in (measured_line(s), _linear(s, "linear scaling"))), y_from_zero=True),
        Panel(f"Efficiency Rmax/Rpeak ({where})", axis_label(axis), "Efficiency (%)",
              tuple(measured_line(s) for s in efficiency) + tuple(_model_lines(efficiency, lines)), y_from_zero=True),
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
        Text("Efficiency = Rmax / nominal Rpeak of the cores used (TOP500 convention); above 100% the cores ran "
             "above their nominal clock (turbo). Clock is the clock the DGEMM ceiling implies at Rpeak's flop/cycle, "
             "a lower bound of the clock the cores ran at. Rmax counts only runs whose residual check PASSED. DGEMM "
             "is the ceiling measured in the same job: the best of short repeats of DGEMM on every rank at once, "
             "before and after the solves (the embedded xhpl), or hpcc's StarDGEMM x ranks after them; Rmax/DGEMM "
             "is the share of it HPL reaches, and a ceiling below Rmax is not valid (interference or a clock "
             "change between the two). Solve CV is the coefficient of variation of a run's solves of its deck. "
             "A run is noisy when its solves or DGEMM repeats disagree, or the node probe measured CPU steal or "
             "foreign load during it (thresholds: site_configs/report_flags.yaml; see \"Interference and noise\"): "
             "noisy runs are not counted where clean ones exist, and a configuration with only noisy runs is NOISY "
             "until re-run. Repeated runs of one configuration are summarised by their median (Runs)."),
        Heading(3, "How N was chosen"),
        bullets(sorted({f"{l.where} {l.stack} {l.scale}: {l.case.recorded('n_policy', 'unknown')}; "
                        f"deck from {l.case.recorded('deck_source', 'unknown')}" for l in lines})),
        Heading(3, "BLAS kernel and Rpeak inputs"),
        bullets(sorted({f"{l.where} {l.stack}: BLAS kernel {l.case.recorded('blas_kernel', 'unknown')}; "
                        f"OpenBLAS reported: {l.case.recorded('blas_kernel_used', 'unknown')}" for l in lines})
                + sorted({f"{l.where}: Rpeak from {l.case.recorded('rpeak_derivation', 'unknown')}"
                          for l in lines})),
    ]
    trials = sorted({f"{l.where} {l.stack} {l.scale}: {l.case.recorded('trial_gflops')} Gflop/s"
                     for l in lines if len(str(l.case.recorded("trial_gflops") or "").split()) > 1})
    if trials:
        out += [Heading(3, "Solves per run (Rmax is the best PASSED one)"), bullets(trials)]
    ceiling = sorted({f"{l.case.name} on {l.where} ({l.stack}): {l.case.recorded('ceiling_warnings')}"
                      for l in lines if l.case.recorded("ceiling_warnings")})
    if ceiling:
        out += [Heading(3, "DGEMM ceiling warnings"), bullets(ceiling)]
    return out + _model_notes(lines)


def _model_notes(lines: Sequence[HplLine]) -> list[Block]:
    margin = report_flags()["below_model_margin"]
    below = [f"{l.where} {l.stack} {l.scale}: {l.expected.flag} (measured {l.efficiency:.1f}%, expected "
             f"{l.expected.efficiency:.1f}%; {l.expected.note})"
             for l in lines if l.expected and l.expected.status == "below" and l.efficiency is not None
             and l.expected.efficiency is not None]
    none = sorted({f"{l.where} {l.stack}: {l.expected.note}" for l in lines
                   if l.expected and l.expected.status == "none"})
    out: list[Block] = [
        Heading(3, "Expected against measured"),
        Text("Expected is the efficiency HPL's scalability model (Petitet, Whaley, Dongarra, Cleary; "
             "`scalebench.hpl.model`) gives each configuration, calibrated on these results alone: the rank rate of "
             "the stack's smallest HPL configuration (scaled by each job's own DGEMM ceiling where both have one), "
             "latency and bandwidth from the stack's ping-pongs (NetPIPE, OSU, hpcc) at the configuration's "
             "placement, and the bandwidth's fall under load from hpcc's rings at several node counts or the "
             f"fabric class's default (site_configs/fabric_load.yaml). A configuration more than {margin:.0%} below "
             "its expectation (`below_model_margin`, site_configs/report_flags.yaml) is flagged."),
    ]
    if below:
        out.append(bullets(below))
    if none:
        out += [Text("Not expected (the model lacks a figure):"), bullets(none)]
    return out


def hpl_section(results: Table, all_series: Sequence[Series], section: str = "hpl") -> list[Block]:
    lines = hpl_lines(results)
    out: list[Block] = [Heading(2, SECTION)]
    if not lines:
        return out + [Text("No HPL results.")]
    core, detail = hpl_tables(lines)
    out += [core, Text("How each line's figures came about: the model's expectation, the DGEMM ceiling of the same "
                       "jobs, energy, the spread of the solves and the noise verdict (see the notes below)."), detail]
    hpl = [s for s in all_series if s.bench.section == section]
    for where in sorted({s.key.where for s in hpl}):
        out += _hpl_where(where, _hpl_axis_series(results, [s for s in hpl if s.key.where == where]), lines)
    return out + energy_blocks(lines, hpl) + _hpl_notes(lines)
