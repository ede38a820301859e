"""The report's memory bandwidth section: STREAM's four kernels per node, per system and stack, and
triad against the node's theoretical bandwidth where the site file gives it."""
from __future__ import annotations

from typing import Any, Sequence

from scalebench.reporting import noise
from scalebench.reporting.document import Block, Heading, Text, table
from scalebench.reporting.sections.common import fmt
from scalebench.reporting.series import Series, at_label
from scalebench.site.thresholds import report_flags

FIGURES = ("copy", "scale", "add", "triad", "memory_bandwidth", "triad_fraction")


def stream_section(results: Any, all_series: Sequence[Series], section: str) -> list[Block]:
    """One row per system, stack and node count: the median of every run's per-node figures."""
    mine = [s for s in all_series if s.bench.section == section]
    if not mine:
        return []
    flags = report_flags()
    rows: dict[tuple[str, str, str, int], dict[str, Any]] = {}
    for s in mine:
        for x, value in s.points.items():
            row = rows.setdefault((s.key.where, s.key.stack, s.key.variant, x), {"axis": s.axis})
            row[s.key.figure] = value
            if s.key.figure == s.bench.fom:
                row["runs"], row["note"] = noise.runs_cell(s.runs[x], s.values.get(x, ()), flags)
    bench = mine[0].bench
    header = ("System", "Stack", "Variant", "At", *(f"{bench.figure(f).label} ({bench.figure(f).unit})"
                                                    for f in FIGURES), "Runs")
    ordered = sorted(rows.items())
    body = [(where, stack, variant or "-", at_label(row["axis"], x),
             *(fmt(row.get(f), ".4g") for f in FIGURES), row.get("runs", "-"))
            for (where, stack, variant, x), row in ordered]
    return [Heading(2, "Memory bandwidth (STREAM)"),
            Text("STREAM's kernels on one whole node, every core with a thread (per node; copy and scale move 2, "
                 "add and triad 3 words per element, as STREAM counts). The theoretical bandwidth is the site "
                 "file's `memory_bandwidth_gbs`; triad's fraction of it is what a memory specification is "
                 "held to (\"-\": the site file does not give it)."),
            table(header, body, [row.get("note", "") for _, row in ordered])]
