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
from scalebench.errors import InputError, ResultsError
from scalebench.results import acceptance, compare, regressions, screening, series
from scalebench.results.chart_worker import ChartWorker, draw_here
from scalebench.results.document import (Block, Heading, Text, bullets, charts_of, render_html, render_markdown,
                                         render_text)
from scalebench.results.sections import (application_section, failures_section, hpl_section, interference_section,
                                         micro_section, other_section, provenance_section, transport_section)
from scalebench.results.store import Record, Session, find_reports, load, paused_gc, write_csv

FORMATS = ("md", "html", "csv", "txt")  # txt: every section as aligned plain text, for terminals
WORKER_FROM_BYTES = 8_000_000  # run reports from which charts are drawn by a worker process (~8 000 figures)
DEFAULT_FORMATS = ("md", "html", "csv")


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
    blocks += transport_section(sessions)
    blocks += interference_section(sessions, all_series)
    blocks += other_section(all_series)
    if len({s.key.stack for s in all_series if s.bench.fom == s.key.figure}) > 1:
        comparison = compare.compare(all_series, "stack")
        if any(len(group.values) > 1 for group in comparison.groups):  # some system ran several stacks
            blocks += compare.blocks(comparison, details=False)
    blocks += screening.blocks(sessions)
    blocks += regressions.blocks(sessions)
    blocks += failures_section(sessions)
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
        verdicts = acceptance.judge(acceptance.load(thresholds, rows), rows)
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


