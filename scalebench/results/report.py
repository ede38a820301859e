"""Reports from the results store: a terminal table, and Markdown, one self-contained HTML file and the
tidy CSV, with sections for HPL, applications and microbenchmarks (scalebench/data/benchmarks.yaml says
which check goes where), optional acceptance verdicts, a stack bake-off and a provenance appendix.

Every number shown for a point is the median over the runs that measured it (scalebench.results.series).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from scalebench import paths
from scalebench.benchmarks import provenance
from scalebench.errors import InputError, ResultsError
from scalebench.results import acceptance, compare, series
from scalebench.results.chart_worker import ChartWorker, draw_here
from scalebench.results.document import (Block, Heading, Text, bullets, charts_of, render_html, render_markdown,
                                         render_text, table)
from scalebench.results.sections import application_section, fmt, hpl_section, micro_section, other_section, some
from scalebench.results.store import Case, Record, Session, find_reports, load, paused_gc, write_csv

FORMATS = ("md", "html", "csv", "txt")  # txt: every section as aligned plain text, for terminals
WORKER_FROM_BYTES = 8_000_000  # run reports from which charts are drawn by a worker process (~8 000 figures)
DEFAULT_FORMATS = ("md", "html", "csv")



def _failures(sessions: Sequence[Session]) -> list[Block]:
    failed: dict[str, int] = {}
    for session in sessions:
        for c in session.cases:
            if c.result not in ("pass", "skip"):
                line = f"{c.name} on {c.system}:{c.partition} ({c.stack}): {c.fail_phase}: {c.fail_reason}"
                if c.job_messages:  # as code spans: Slurm's '*** ... ***' is no emphasis
                    spans = (m.replace("`", "'") for m in c.job_messages)
                    line += "; job output: " + "; ".join(f"`{m}`" for m in spans)
                failed[line] = failed.get(line, 0) + 1
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
                bullets([line + (f" ({n} runs)" if n > 1 else "") for line, n in sorted(failed.items())])]
    if skipped:
        out += [Heading(3, "Skipped (the partition or stack cannot run them)"),
                bullets(skipped)]
    return ([Heading(2, "Failures and skipped cases")] + out) if out else []


def _overhead(session: Session) -> tuple[str, str]:
    """Session wall time minus the time some job was running (the union of the jobs' submit to
    completion intervals: a case's run phase also counts its wait for a free job slot)."""
    intervals = sorted(c.job_interval for c in session.cases if c.result != "skip" and c.job_interval)
    if session.elapsed_s is None or not intervals:
        return fmt(session.elapsed_s, ".1f"), "-"
    busy, (start, end) = 0.0, intervals[0]
    for left, right in intervals[1:]:
        if left > end:
            busy, start = busy + end - start, left
        end = max(end, right)
    overhead = session.elapsed_s - busy - (end - start)
    return f"{session.elapsed_s:.1f}", f"{overhead:.1f} ({overhead / len(intervals):.1f} per case)"


def provenance_section(sessions: Sequence[Session]) -> list[Block]:
    runs = [(f"`{s.report}`", s.source, s.start, s.hostname or "-", s.version or "-", s.git_describe or "-",
             str(len([c for c in s.cases if c.result != "skip"])), *_overhead(s), s.cmdline or "-")
            for s in sorted(sessions, key=lambda s: (s.start, s.report))]
    cases: dict[tuple[str, str, str], list[Case]] = {}
    for session in sessions:
        for c in session.cases:
            if c.result != "skip":
                cases.setdefault((f"{c.system}:{c.partition}", c.stack, c.benchmark), []).append(c)
    columns = provenance().appendix
    software = [(*key, *(some(c.recorded(f.name) for c in cs) for f in columns)) for key, cs in sorted(cases.items())]
    recorded: dict[str, list[str]] = {}  # provenance.json contents -> the runs that recorded them
    for session in sessions:
        if session.run_provenance:
            content = ", ".join(f"{k}={v}" for k, v in sorted(session.run_provenance.items()))
            recorded.setdefault(content, []).append(session.report)
    extra = [f"{content} ({len(reports)} run(s), e.g. `{min(reports)}`)" for content, reports in sorted(recorded.items())]
    out: list[Block] = [
        Heading(2, "Provenance"),
        Text("What each run recorded when it ran (ReFrame's session information and the run directory's "
             "provenance.json), not the state of any checkout when this report was made. ReFrame overhead = "
             "session wall time minus the jobs' run times."),
        Heading(3, "Runs"),
        table(("Run report", "Source", "Started", "Host", "ReFrame", "git describe", "Cases", "Wall (s)",
               "ReFrame overhead (s)", "Command line"), runs),
        Heading(3, "Binaries, software stacks, decks and nodes"),
        table(("System", "Stack", "Benchmark", *(f.label for f in columns)), software)]
    if extra:
        out += [Heading(3, "provenance.json"), bullets(extra)]
    return out


# --- the whole document -----------------------------------------------------------------------------

def build_document(sessions: Sequence[Session], warnings: Sequence[str], rows: Sequence[Record],
                   verdicts: Sequence[acceptance.Verdict] | None = None,
                   thresholds: Path | None = None) -> list[Block]:
    all_series = series.build(rows)
    blocks: list[Block] = [
        Heading(1, "scalebench report"),
        Text(f"Generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} from {len(sessions)} run report(s), "
             f"{len(rows)} performance record(s)."),
    ]
    if verdicts is not None and thresholds is not None:
        blocks += acceptance.blocks(verdicts, thresholds)
    blocks += hpl_section(sessions, rows, all_series)
    blocks += application_section(all_series)
    blocks += micro_section(all_series)
    blocks += other_section(all_series)
    if len({s.key.stack for s in all_series if s.bench.fom == s.key.figure}) > 1:
        comparison = compare.compare(all_series, "stack")
        if any(len(group.values) > 1 for group in comparison.groups):  # some system ran several stacks
            blocks += compare.blocks(comparison, details=False)
    blocks += _failures(sessions)
    blocks += provenance_section(sessions)
    if warnings:
        blocks += [Heading(2, "Warnings"), bullets(list(warnings))]
    return blocks


def default_out_dir() -> Path:
    return paths.RESULTS / "reports" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def _claim(out_dir: Path, formats: Sequence[str]) -> tuple[dict[str, Path], Path]:
    """Files report[-N].<fmt> (and report[-N]_files/ for Markdown's images) that did not exist, created
    empty and exclusively, so neither an earlier report nor a concurrent one is ever overwritten."""
    n = 1
    while True:
        stem = "report" if n == 1 else f"report-{n}"
        targets = {fmt: out_dir / f"{stem}.{fmt}" for fmt in formats}
        files_dir = out_dir / f"{stem}_files"
        created: list[Path] = []
        try:
            if files_dir.exists():
                raise FileExistsError(files_dir)
            for path in targets.values():
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                created.append(path)
            return targets, files_dir
        except FileExistsError:
            for path in created:
                path.unlink()  # only the empty files this call created a moment ago
            n += 1


@dataclass(frozen=True)
class Written:
    target: Path  # the report to open: the HTML file when written, else the Markdown, else the CSV
    sessions: list[Session]
    warnings: list[str]
    files: dict[str, Path]  # format -> file
    verdicts: list[acceptance.Verdict] | None = None

    def __iter__(self) -> Iterator[Any]:
        """`target, sessions, warnings = write_report(...)`, as callers wrote before there were formats."""
        return iter((self.target, self.sessions, self.warnings))


def parse_formats(text: str) -> tuple[str, ...]:
    formats = tuple(dict.fromkeys(f.strip().lower() for f in text.split(",") if f.strip()))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        given = ", ".join(unknown) if unknown else repr(text)
        raise InputError(f"--format: {given} not one of {', '.join(FORMATS)}")
    return formats


def _write(path: Path, writer: Callable[[Any], None]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer(handle)


def write_report(results: Sequence[str | Path], out_dir: Path | None = None, formats: Sequence[str] = DEFAULT_FORMATS,
                 thresholds: Path | None = None) -> Written:
    """Write the report in each format into a new set of files; never replaces an existing report."""
    with paused_gc():  # see results.paused_gc: the whole report handles the 100 000s of records
        return _write_report(results, out_dir, formats, thresholds)


def _write_report(results: Sequence[str | Path], out_dir: Path | None, formats: Sequence[str],
                  thresholds: Path | None) -> Written:
    # A big report's pictures are drawn by a worker process, which imports matplotlib while the run
    # reports are read; for a small one, starting a second Python costs more than it saves.
    pictures = bool({"md", "html"} & set(formats))
    big = pictures and sum(path.stat().st_size for path in find_reports(results)) >= WORKER_FROM_BYTES
    worker = ChartWorker() if big else None
    try:
        return _write_files(results, out_dir, formats, thresholds, pictures, worker)
    finally:
        if worker is not None:
            worker.close()


def _write_files(results: Sequence[str | Path], out_dir: Path | None, formats: Sequence[str],
                 thresholds: Path | None, pictures: bool, worker: ChartWorker | None) -> Written:
    sessions, warnings, rows = load(results)
    verdicts = None
    if thresholds is not None:
        verdicts = acceptance.evaluate(acceptance.load(thresholds, rows), series.build(rows))
    blocks = build_document(sessions, warnings, rows, verdicts, thresholds)
    out_dir = out_dir or default_out_dir()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        files, files_dir = _claim(out_dir, formats)
    except OSError as err:
        raise ResultsError(f"--out: cannot write into {out_dir}: {err.strerror or err}") from err
    charts = list(dict.fromkeys(charts_of(blocks)))
    if worker is not None:
        worker.submit(charts)  # drawn while the text formats are written
    if "csv" in files:
        _write(files["csv"], lambda handle: write_csv(rows, handle))
    if "txt" in files:
        text = render_text(blocks)
        _write(files["txt"], lambda handle: handle.write(text))
    images = worker.result() if worker is not None else draw_here(charts) if charts and pictures else {}
    if worker is not None and worker.failure:
        warnings = [*warnings, worker.failure]
    names = {chart: f"{i:02d}-{chart.name}.png" for i, chart in enumerate(charts, 1)}
    if "md" in files:
        if charts:
            files_dir.mkdir()
            for chart in charts:
                (files_dir / names[chart]).write_bytes(images[chart])
        text = render_markdown(blocks, lambda chart: f"{files_dir.name}/{names[chart]}")
        _write(files["md"], lambda handle: handle.write(text))
    if "html" in files:
        page = render_html(blocks, "scalebench report", images)
        _write(files["html"], lambda handle: handle.write(page))
    target = next(files[fmt] for fmt in ("html", "md", "txt", "csv") if fmt in files)
    return Written(target, sessions, warnings, files, verdicts)


