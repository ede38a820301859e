"""Reports from the results store: a terminal table, and Markdown, one self-contained HTML file and the
tidy CSV, with sections for HPL, applications and microbenchmarks (scalebench/data/benchmarks.yaml says
which check goes where), optional acceptance verdicts, a stack bake-off and a provenance appendix.

Every number shown for a point is the median over the runs that measured it (scalebench.reporting.series).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import polars as pl

from scalebench import room
from scalebench.errors import InputError, ResultsError
from scalebench.reporting import acceptance, bakeoff, first_page, regressions, screening, series, tidy
from scalebench.reporting.chart_worker import ChartWorker, draw_here
from scalebench.reporting.document import (Block, Contents, Heading, Text, bullets, charts_of, render_html,
                                         render_markdown, render_text)
from scalebench.reporting.hpl_table import hpl_lines, model_expectations
from scalebench.reporting.sections import (application_section, failures_section, interference, interference_section,
                                         micro_section, other_section, over_time_section, provenance_section,
                                         transport_section)
from scalebench.reporting.sections.appendix import failures
from scalebench.reporting.store import Loaded, find_sources, load, paused_gc, results_dir_of
from scalebench.reporting.table import Table, figure_units
from scalebench.validation import excerpt_text

FORMATS = ("md", "html", "csv", "txt", "parquet")  # txt: every section as aligned text; parquet: the tidy table
WORKER_FROM_BYTES = 8_000_000  # run reports from which charts are drawn by a worker process (~8 000 figures)
# The tidy CSV only when asked for: a row per figure, 300 MB and seconds to write for a year of nightly runs.
DEFAULT_FORMATS = ("md", "html")


# --- the whole document -----------------------------------------------------------------------------

def build_document(results: Table, warnings: Sequence[str], verdicts: Sequence[acceptance.Verdict] | None = None,
                   thresholds: Path | None = None, all_series: Sequence[series.Series] | None = None) -> list[Block]:
    """The report: the first page (the answer, scalebench.reporting.first_page), the table of contents,
    then the sections it was drawn from."""
    all_series = series.build(results) if all_series is None else all_series
    blocks: list[Block] = []
    if verdicts is not None and thresholds is not None:
        blocks += acceptance.blocks(verdicts, thresholds)
    sectioned = [found for found in room.rooms() if found.section is not None]
    blocks += [block for found in sectioned if found.leads for block in found.section(results, all_series)]
    blocks += application_section(all_series)
    blocks += micro_section(all_series)
    blocks += [block for found in sectioned if not found.leads
               for block in found.section(results, all_series)]
    blocks += transport_section(results)
    noisy = interference.findings(results, all_series)
    blocks += interference_section(results, all_series, noisy)
    blocks += other_section(all_series)
    blocks += over_time_section(results, all_series)
    comparisons = _comparisons(all_series)
    blocks += [block for comparison in comparisons for block in bakeoff.blocks(comparison, details=False)]
    blocks += screening.blocks(results.materialize(pl.col("benchmark").is_in(screening.CHECKS)))
    blocks += regressions.blocks(results.materialize(pl.col("case").is_in(held_cases(results))))
    unpassed = results.materialize(pl.col("result") != "pass")
    failed = failures(unpassed)
    blocks += failures_section(unpassed, failed)
    blocks += provenance_section(results)
    if warnings:
        blocks += [Heading(2, "Warnings"), bullets(list(warnings))]
    ran = results.cases.filter(pl.col("result") != "skip").select("system", "partition", "stack").unique()
    places = sorted((f"{system}:{partition}", stack) for system, partition, stack in ran.iter_rows())
    answer = first_page.blocks(places, hpl_lines(results), verdicts, thresholds, comparisons,
                               first_page.reruns(noisy, failed))
    return [Heading(1, "scalebench report"),
            Text(f"Generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} from {results.session_count} run "
                 f"report(s), {results.record_count} performance record(s)."),
            *answer, Contents(), *blocks]


def _comparisons(all_series: Sequence[series.Series]) -> list[bakeoff.Comparison]:
    """The bake-offs the report shows: stacks on a system that ran several, and systems when several ran
    the same benchmarks."""
    out = []
    for by in bakeoff.BY:
        if len({bakeoff.config_of(s, by) for s in all_series if s.bench.fom == s.key.figure}) > 1:
            comparison = bakeoff.compare(all_series, by)
            if any(len(group.values) > 1 for group in comparison.groups):  # some ran several of them
                out.append(comparison)
    return out


def held_cases(results: Table) -> list[int]:
    """The cases with a figure held to a reference (regressions.held): a positive reference and a bound."""
    records = results.records
    return records.filter(pl.col("value").is_not_null() & (pl.col("ref") > 0)
                          & (pl.col("lower").is_not_null() | pl.col("upper").is_not_null()))["case"].unique().to_list()


def default_out_dir(results: Sequence[str | Path]) -> Path:
    """reports/<UTC time>/ beside the results: in the one results directory every given path belongs to.
    Never the repository's by default (the results may be elsewhere, the repository read-only)."""
    dirs = sorted({results_dir_of(Path(p)) for p in results})
    if len(dirs) != 1:
        raise InputError(f"--out: the results given are in {len(dirs)} results directories "
                         f"({excerpt_text(', '.join(map(str, dirs)), 200)}); say where the report goes with --out")
    return dirs[0] / "reports" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


def _claim(out_dir: Path, formats: Sequence[str], split_csv: bool) -> tuple[dict[str, Path], Path]:
    """Files report[-N].<fmt> (and report[-N]_files/ for Markdown's images, report[-N]_csv/ for a CSV per
    benchmark) that did not exist, created empty and exclusively, so neither an earlier report nor a
    concurrent one is ever overwritten."""
    n = 1
    while True:
        stem = "report" if n == 1 else f"report-{n}"
        targets = {fmt: out_dir / f"{stem}.{fmt}" for fmt in formats if not (fmt == "csv" and split_csv)}
        files_dir = out_dir / f"{stem}_files"
        created: list[Path] = []
        try:
            if files_dir.exists():
                raise FileExistsError(files_dir)
            if split_csv:
                (out_dir / f"{stem}_csv").mkdir()
                created.append(out_dir / f"{stem}_csv")
                targets["csv"] = out_dir / f"{stem}_csv"
            for fmt, path in targets.items():
                if fmt == "csv" and split_csv:
                    continue
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                created.append(path)
            return targets, files_dir
        except FileExistsError:
            for path in created:
                path.rmdir() if path.is_dir() else path.unlink()  # only what this call created a moment ago
            n += 1


@dataclass(frozen=True)
class Written:
    target: Path  # the report to open: the HTML file when written, else the Markdown, else the CSV
    table: Table
    warnings: list[str]
    files: dict[str, Path]  # format -> file (csv: a directory with --split-csv)
    verdicts: list[acceptance.Verdict] | None = None
    notes: list[str] = field(default_factory=list)  # about the index, for stderr


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
                 thresholds: Path | None = None, *, split_csv: bool = False, rebuild: bool = False,
                 index: bool = True) -> Written:
    """Write the report in each format into a new set of files; never replaces an existing report.
    The runs are read through the index beside them (`index`; `rebuild`: every report read again)."""
    with paused_gc():  # see results.paused_gc: the whole report handles the 100 000s of records
        chosen = out_dir is not None
        out_dir = out_dir or default_out_dir(results)  # before anything is read: a refusal comes first
        split_csv = split_csv and "csv" in formats
        warnings: list[str] = []
        sources = find_sources(results, warnings)
        # A big report's pictures are drawn by a worker process, which imports matplotlib while the
        # results are read; for a small one, starting a second Python costs more than it saves.
        pictures = bool({"md", "html"} & set(formats))
        big = pictures and sum(path.stat().st_size for path in sources[0]) >= WORKER_FROM_BYTES
        worker = ChartWorker() if big else None
        try:
            loaded = load(results, index=index, rebuild=rebuild, sources=(*sources, warnings))
            return _write_files(loaded, out_dir, chosen, formats, thresholds, split_csv, pictures, worker)
        finally:
            if worker is not None:
                worker.close()


def _write_files(loaded: Loaded, out_dir: Path, chosen: bool, formats: Sequence[str], thresholds: Path | None,
                 split_csv: bool, pictures: bool, worker: ChartWorker | None) -> Written:
    results, warnings = loaded.table, loaded.warnings
    all_series = series.build(results)
    verdicts = None
    if thresholds is not None:
        criteria = acceptance.load(thresholds, figure_units(results))
        expectations = model_expectations(results) if acceptance.uses_model(criteria) else None
        verdicts = acceptance.judge(criteria, results, all_series=all_series, expectations=expectations)
    blocks = build_document(results, warnings, verdicts, thresholds, all_series)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        files, files_dir = _claim(out_dir, formats, split_csv)
    except OSError as err:
        default = "" if chosen else " (the default, beside the results: name another with --out)"
        raise ResultsError(f"--out: cannot write into {out_dir}{default}: {err.strerror or err}") from err
    charts = list(dict.fromkeys(charts_of(blocks)))
    if worker is not None:
        worker.submit(charts)  # drawn while the text formats are written
    if "csv" in files or "parquet" in files:
        rows = tidy.frame(results)
        if "csv" in files:
            tidy.write_csv_per_benchmark(rows, files["csv"]) if split_csv else tidy.write_csv(rows, files["csv"])
        if "parquet" in files:
            tidy.write_parquet(rows, files["parquet"])
        del rows
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
    target = next(files[fmt] for fmt in ("html", "md", "txt", "csv", "parquet")
                  if fmt in files and not (fmt == "csv" and split_csv and len(files) > 1))
    return Written(target, results, warnings, files, verdicts, loaded.notes)
