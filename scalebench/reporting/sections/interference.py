"""The report's "Interference and noise" section: what the node probe measured on the nodes of every
job (scalebench.nodeprobe), and which results are noisy (scalebench.reporting.noise) and why."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import polars as pl

from scalebench.reporting import noise
from scalebench.reporting.document import Block, Heading, Text, table
from scalebench.reporting.sections.common import fmt
from scalebench.reporting.series import Series, at_label
from scalebench.reporting.table import Table
from scalebench.site.thresholds import report_flags
from scalebench.validation import excerpt_text

ROW_LIMIT = 200  # noisy cases listed one per row; more are counted


def _number(record: Mapping[str, Any], name: str, spec: str) -> str:
    value = record.get(name)
    return fmt(value, spec) if type(value) in (int, float) else "-"


def _probe_cells(record: Any) -> tuple[tuple[str, ...], str]:
    """(the probe's cells, the processes that used most): those go under the row."""
    if not isinstance(record, Mapping) or type(record.get("nodes")) is not int or not record["nodes"]:
        return ("no probe samples",) + ("-",) * 4, ""
    expected = record.get("expected_nodes")
    missing = expected - record["nodes"] if type(expected) is int else 0
    nodes = f"{record['nodes']}" + (f" ({missing} without)" if missing > 0 else "")
    loads = "/".join(_number(record, name, ".1f") for name in ("load1_before", "load1_max", "load1_after"))
    clock = f"{_number(record, 'clock_mhz', '.0f')} ({excerpt_text(str(record.get('clock_source') or '-'), 40)})"
    top = excerpt_text(str(record.get("foreign_top") or ""), 200)
    return (nodes, _number(record, "steal_pct", ".1f"), _number(record, "foreign_cores", ".2f"), loads, clock), top


TITLE = "Interference and noise"


@dataclass(frozen=True)
class NoisyCase:
    where: str
    stack: str
    label: str  # noise.rerun_label: the check and its parameters, where, the stack
    run: str  # the run's start
    noise: noise.Noise


@dataclass(frozen=True)
class Disagreeing:
    """A point whose repeated runs disagree."""
    where: str
    benchmark: str
    variant: str
    stack: str
    figure: str
    at: str
    why: str


@dataclass(frozen=True)
class Findings:
    probed: int  # measured cases with probe samples
    noisy: int  # noisy cases
    cases: tuple[NoisyCase, ...]  # the first ROW_LIMIT of them
    points: tuple[Disagreeing, ...]
    by_place: tuple[tuple[tuple[str, str], int], ...] = ()  # ((system:partition, stack), noisy cases), all of them

    @property
    def empty(self) -> bool:
        return not self.probed and not self.noisy and not self.points


def findings(results: Table, all_series: Sequence[Series]) -> Findings:
    """What the section shows: the probed and noisy cases, and the points whose repeated runs disagree
    (the report's first page lists them to re-run)."""
    flags = report_flags()
    probed = noisy = 0
    starts = results.sessions["start"].to_list()
    # Every measured case may carry probe samples; those of judged checks may be noisy.
    shown: list[tuple[int, noise.Verdict]] = []
    noisy_rows: list[int] = []
    for row, verdict in noise.table_verdicts(results, flags, probed=True).items():
        probed += verdict.noise.probe is not None and bool(verdict.noise.probe.get("nodes"))
        if verdict.noise.noisy:
            noisy += 1
            noisy_rows.append(row)
            if len(shown) < ROW_LIMIT:
                shown.append((row, verdict))
    rows = [row for row, _ in shown]
    labels = noise.rerun_labels(results, rows)
    places = {case: (f"{system}:{partition}", stack) for case, system, partition, stack in results.cases.filter(
        pl.col("case").is_in(rows)).select("case", "system", "partition", "stack").iter_rows()}
    every = results.cases.filter(pl.col("case").is_in(noisy_rows)).group_by("system", "partition", "stack").len()
    by_place = tuple(sorted(((f"{system}:{partition}", stack), n)
                            for system, partition, stack, n in every.iter_rows()))
    cases = tuple(NoisyCase(*places[row], labels[row], starts[verdict.session], verdict.noise)
                  for row, verdict in shown)
    points = tuple(Disagreeing(s.key.where, s.key.benchmark, s.key.variant or "-", s.key.stack, s.key.figure,
                               at_label(s.axis, x), why)
                   for s in all_series if s.key.figure == s.bench.fom and s.bench.section in noise.JUDGED
                   for x in s.points if (why := noise.runs_noise(s.values.get(x, ()), flags)))
    return Findings(probed, noisy, cases, points, by_place)


def interference_section(results: Table, all_series: Sequence[Series], found: Findings | None = None) -> list[Block]:
    flags = report_flags()
    found = findings(results, all_series) if found is None else found
    if found.empty:
        return []
    out: list[Block] = [
        Heading(2, TITLE),
        Text("Every job runs a probe on each of its nodes (scalebench.nodeprobe) before, during and after the run: "
             "CPU time stolen by the hypervisor, CPU used by processes that are not the job's beyond the cores it "
             "leaves idle (foreign load, in cores, with the processes that used most), load, and the clock the "
             "kernel reports. A run is noisy when the probe measured steal above "
             f"{flags['noisy_steal']:.0%} or foreign load above {flags['noisy_foreign_cores']:g} cores, its solves "
             f"or repeated runs disagree by a coefficient of variation above {flags['noisy_cv']:.0%}, or its DGEMM "
             f"repeats by more than {flags['noisy_dgemm_spread']:.0%} (site_configs/report_flags.yaml); HPL and "
             "application results are judged so, microbenchmarks (whose spread is their figure) are not. A noisy "
             "result is neither a pass nor a fail: re-run it."),
        Text(f"{found.probed} measured case(s) carry probe samples; {found.noisy} are noisy."),
    ]
    if found.cases:
        cells = [(case, _probe_cells(case.noise.probe)) for case in found.cases]
        out.append(table(("Case", "Run", "Nodes probed", "Steal (%)", "Foreign load (cores)",
                          "Load before/during/after", "Clock (MHz, source)"),
                         [(case.label, case.run, *probe) for case, (probe, _) in cells],
                         [(f"Noisy because: {'; '.join(case.noise.reasons)}",
                           *((f"Foreign load from: {top}",) if top else ())) for case, (_, top) in cells]))
        if found.noisy > len(found.cases):
            out.append(Text(f"... and {found.noisy - len(found.cases)} more noisy case(s)."))
    if found.points:
        out += [Heading(3, "Points whose repeated runs disagree"),
                table(("System", "Benchmark", "Variant", "Stack", "Figure", "At"),
                      [(p.where, p.benchmark, p.variant, p.stack, p.figure, p.at) for p in found.points[:ROW_LIMIT]],
                      [f"Why: {p.why}" for p in found.points[:ROW_LIMIT]])]
    return out
