"""The report's closing sections: checks the registry does not know, failed and skipped cases, and the
provenance of every run and case."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import polars as pl

from scalebench.registry import provenance
from scalebench.reporting.document import Block, Heading, Text, bullets, table
from scalebench.reporting.records import Session
from scalebench.reporting.sections.common import fmt
from scalebench.reporting.series import Series
from scalebench.reporting.table import Table

LIST_LIMIT = 4  # distinct values shown per cell before "(+N more)"


def some(values: Iterable[Any]) -> str:
    distinct = sorted({str(v) for v in values if v not in (None, "")})
    shown = ", ".join(distinct[:LIST_LIMIT]) or "-"
    return shown + (f" (+{len(distinct) - LIST_LIMIT} more)" if len(distinct) > LIST_LIMIT else "")


def other_section(all_series: Sequence[Series]) -> list[Block]:
    other = [s for s in all_series if s.bench.section == "other"]
    if not other:
        return []
    rows = [(s.key.where, s.key.benchmark, s.key.variant or "-", s.key.stack, s.key.figure, x, f"{v:.4g}", s.unit,
             s.runs[x]) for s in other for x, v in s.points.items()]
    return [Heading(2, "Other results"),
            Text("Checks with no section of their own in scalebench/data/benchmarks.yaml: their figures, "
                 "without plots or comparisons."),
            table(("System", "Benchmark", "Variant", "Stack", "Figure", "Processes", "Value", "Unit", "Runs"), rows)]


FAILURES = "Failures and skipped cases"


@dataclass(frozen=True)
class Failure:
    where: str
    stack: str
    line: str  # the case, where, the stack, the phase and reason, what the job's output said
    runs: int


def _why(case) -> str:
    """The phase and reason of a failed case; ReFrame records neither for a case it did not run
    because a check it depends on failed (result fail_deps)."""
    if case.result == "fail_deps" and not case.fail_reason:
        return "not run: a check it depends on failed"
    return f"{case.fail_phase or case.result}: {case.fail_reason or 'no reason recorded'}"


def failures(sessions: Sequence[Session]) -> list[Failure]:
    """The failed cases, one per distinct line (the report's first page lists them to re-run)."""
    failed: dict[tuple[str, str, str], int] = {}
    for session in sessions:
        for c in session.cases:
            if c.result not in ("pass", "skip"):
                line = f"{c.name} on {c.system}:{c.partition} ({c.stack}): {_why(c)}"
                if c.job_messages:  # as code spans: Slurm's '*** ... ***' is no emphasis
                    spans = (m.replace("`", "'") for m in c.job_messages)
                    line += "; job output: " + "; ".join(f"`{m}`" for m in spans)
                key = (f"{c.system}:{c.partition}", c.stack, line)
                failed[key] = failed.get(key, 0) + 1
    return [Failure(*key, runs) for key, runs in sorted(failed.items(), key=lambda item: item[0][2])]


def failures_section(sessions: Sequence[Session], failed: Sequence[Failure] | None = None) -> list[Block]:
    failed = failures(sessions) if failed is None else failed
    # One line per reason: a scale a machine lacks skips every check at that scale.
    skipped_cases: dict[tuple[str, str], dict[str, set[str]]] = {}  # (where, reason) -> check -> variants
    skipped_stacks: dict[tuple[str, str], set[str]] = {}
    for session in sessions:
        for c in session.cases:
            if c.result == "skip":
                key = (f"{c.system}:{c.partition}", c.fail_reason or "reason not recorded")
                skipped_cases.setdefault(key, {}).setdefault(c.benchmark, set()).add(c.name)
                skipped_stacks.setdefault(key, set()).add(c.stack)
    skipped = [f"{where}: {reason}: " + ", ".join(
                   f"{check} ({len(names)} variants)" if len(names) > 1 else next(iter(names))
                   for check, names in sorted(checks.items()))
               + f" [{', '.join(sorted(skipped_stacks[(where, reason)]))}]"
               for (where, reason), checks in sorted(skipped_cases.items())]
    out: list[Block] = []
    if failed:
        out += [Heading(3, "Failures"),
                bullets([f.line + (f" ({f.runs} runs)" if f.runs > 1 else "") for f in failed])]
    if skipped:
        out += [Heading(3, "Skipped (the partition or stack cannot run them)"),
                bullets(skipped)]
    return ([Heading(2, FAILURES)] + out) if out else []


def _overhead(elapsed_s: float | None, intervals: Sequence[tuple[float, float]]) -> tuple[str, str]:
    """Session wall time minus the time some job was running (the union of the jobs' submit to
    completion intervals, sorted: a case's run phase also counts its wait for a free job slot)."""
    if elapsed_s is None or not intervals:
        return fmt(elapsed_s, ".1f"), "-"
    busy, (start, end) = 0.0, intervals[0]
    for left, right in intervals[1:]:
        if left > end:
            busy, start = busy + end - start, left
        end = max(end, right)
    overhead = elapsed_s - busy - (end - start)
    return f"{elapsed_s:.1f}", f"{overhead:.1f} ({overhead / len(intervals):.1f} per case)"


def provenance_section(results: Table) -> list[Block]:
    ran = results.cases.filter(pl.col("result") != "skip")
    intervals: dict[int, list[tuple[float, float]]] = {}
    for session, submit, end in ran.filter(pl.col("job_submit").is_not_null()).select(
            "session", "job_submit", "job_end").sort(["session", "job_submit", "job_end"]).iter_rows():
        intervals.setdefault(session, []).append((submit, end))
    counts = dict(ran.group_by("session").len().iter_rows())
    sessions = list(results.sessions.sort(["start", "report"], maintain_order=True).iter_rows(named=True))
    runs = [(f"`{s['report']}`", s["source"], s["start"], s["hostname"] or "-", s["version"] or "-",
             s["git_describe"] or "-", str(counts.get(s["session"], 0)),
             *_overhead(s["elapsed_s"], intervals.get(s["session"], []))) for s in sessions]
    columns = provenance().appendix
    shown = [pl.col(f"shown_{f.name}" if f"shown_{f.name}" in ran.columns else f.name).unique().alias(f.name)
             for f in columns]
    grouped = ran.group_by(["system", "partition", "stack", "benchmark"]).agg(*shown)
    software = sorted((f"{row[0]}:{row[1]}", row[2], row[3], *(some(values) for values in row[4:]))
                      for row in grouped.iter_rows())
    # Paths, specs and node lists are long: each is a line under its system, stack and benchmark.
    details = [[f"{f.label}: {value}" for f, value in zip(columns, row[3:]) if value != "-"] for row in software]
    recorded: dict[str, list[str]] = {}  # provenance.json contents -> the runs that recorded them
    for report, text in results.sessions.filter(pl.col("run_provenance") != "{}").select(
            "report", "run_provenance").iter_rows():
        content = ", ".join(f"{k}={v}" for k, v in sorted(json.loads(text).items()))
        recorded.setdefault(content, []).append(report)
    extra = [f"{content} ({len(reports)} run(s), e.g. `{min(reports)}`)" for content, reports in sorted(recorded.items())]
    out: list[Block] = [
        Heading(2, "Provenance"),
        Text("What each run recorded when it ran (ReFrame's session information and the run directory's "
             "provenance.json), not the state of any checkout when this report was made. ReFrame overhead = "
             "session wall time minus the jobs' run times."),
        Heading(3, "Runs"),
        table(("Run report", "Source", "Started", "Host", "ReFrame", "git describe", "Cases", "Wall (s)",
               "ReFrame overhead (s)"), runs, [f"Command line: {s['cmdline']}" if s["cmdline"] else ""
                                               for s in sessions]),
        Heading(3, "Binaries, software stacks, decks and nodes"),
        table(("System", "Stack", "Benchmark"), [row[:3] for row in software], details)]
    if extra:
        out += [Heading(3, "provenance.json"), bullets(extra)]
    return out
