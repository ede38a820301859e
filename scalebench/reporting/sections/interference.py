"""The report's "Interference and noise" section: what the node probe measured on the nodes of every
job (scalebench.nodeprobe), and which results are noisy (scalebench.reporting.noise) and why."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

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


def _probe_cells(record: Any) -> tuple[str, ...]:
    if not isinstance(record, Mapping) or type(record.get("nodes")) is not int or not record["nodes"]:
        return ("no probe samples",) + ("-",) * 4
    expected = record.get("expected_nodes")
    missing = expected - record["nodes"] if type(expected) is int else 0
    nodes = f"{record['nodes']}" + (f" ({missing} without)" if missing > 0 else "")
    loads = "/".join(_number(record, name, ".1f") for name in ("load1_before", "load1_max", "load1_after"))
    clock = f"{_number(record, 'clock_mhz', '.0f')} ({excerpt_text(str(record.get('clock_source') or '-'), 40)})"
    top = excerpt_text(str(record.get("foreign_top") or ""), 200)
    return nodes, _number(record, "steal_pct", ".1f"), _number(record, "foreign_cores", ".2f") + (f": {top}" if top else ""), \
        loads, clock


def interference_section(results: Table, all_series: Sequence[Series]) -> list[Block]:
    flags = report_flags()
    probed = noisy = 0
    starts = results.sessions["start"].to_list()
    # Every measured case may carry probe samples; those of judged checks may be noisy.
    shown: list[tuple[int, noise.Verdict]] = []
    for row, verdict in noise.table_verdicts(results, flags, probed=True).items():
        probed += verdict.noise.probe is not None and bool(verdict.noise.probe.get("nodes"))
        if verdict.noise.noisy:
            noisy += 1
            if len(shown) < ROW_LIMIT:
                shown.append((row, verdict))
    labels = noise.rerun_labels(results, [row for row, _ in shown])
    rows = [(labels[row], starts[verdict.session], *_probe_cells(verdict.noise.probe), "; ".join(verdict.noise.reasons))
            for row, verdict in shown]
    disagree = [(s.key.where, s.key.benchmark, s.key.variant or "-", s.key.stack, s.key.figure, at_label(s.axis, x),
                 why) for s in all_series if s.key.figure == s.bench.fom and s.bench.section in noise.JUDGED
                for x in s.points if (why := noise.runs_noise(s.values.get(x, ()), flags))]
    if not probed and not noisy and not disagree:
        return []
    out: list[Block] = [
        Heading(2, "Interference and noise"),
        Text("Every job runs a probe on each of its nodes (scalebench.nodeprobe) before, during and after the run: "
             "CPU time stolen by the hypervisor, CPU used by processes that are not the job's beyond the cores it "
             "leaves idle (foreign load, in cores, with the processes that used most), load, and the clock the "
             "kernel reports. A run is noisy when the probe measured steal above "
             f"{flags['noisy_steal']:.0%} or foreign load above {flags['noisy_foreign_cores']:g} cores, its solves "
             f"or repeated runs disagree by a coefficient of variation above {flags['noisy_cv']:.0%}, or its DGEMM "
             f"repeats by more than {flags['noisy_dgemm_spread']:.0%} (site_configs/report_flags.yaml); HPL and "
             "application results are judged so, microbenchmarks (whose spread is their figure) are not. A noisy "
             "result is neither a pass nor a fail: re-run it."),
        Text(f"{probed} measured case(s) carry probe samples; {noisy} are noisy."),
    ]
    if rows:
        out.append(table(("Case", "Run", "Nodes probed", "Steal (%)", "Foreign load (cores)",
                          "Load before/during/after", "Clock (MHz, source)", "Noisy because"), rows))
        if noisy > len(rows):
            out.append(Text(f"... and {noisy - len(rows)} more noisy case(s)."))
    if disagree:
        out += [Heading(3, "Points whose repeated runs disagree"),
                table(("System", "Benchmark", "Variant", "Stack", "Figure", "At", "Why"), disagree[:ROW_LIMIT])]
    return out

