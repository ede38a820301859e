"""Reports from the results store: a terminal table, and Markdown, one self-contained HTML file and the
tidy CSV, with sections for HPL, applications and microbenchmarks (scalebench/data/benchmarks.yaml says
which check goes where), optional acceptance verdicts, a stack bake-off and a provenance appendix. It
puts together the parts of scalebench.reporting and the benchmarks' own sections (scalebench.benchmarks), above both.

Every number shown for a point is the median over the runs that measured it (scalebench.reporting.series).
"""
from __future__ import annotations

import itertools
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import polars as pl

from scalebench import atomic, faultpoints
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
from scalebench.benchmarks import BENCHMARKS
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
    sectioned = [found for found in BENCHMARKS if found.section is not None]
    blocks += [block for found in sectioned if found.leads for block in found.section(results, all_series, found.name)]
    blocks += application_section(all_series)
    blocks += micro_section(all_series)
    blocks += [block for found in sectioned if not found.leads
               for block in found.section(results, all_series, found.name)]
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


def _stem(n: int) -> str:
    return "report" if n == 1 else f"report-{n}"


# Published in this order, the report to open last: when it is there, every other file of it is.
_ORDER = ("files", "parquet", "csv", "txt", "md", "html")


def _names(stem: str, split_csv: bool) -> dict[str, str]:
    """What each part of the report is called: report[-N].<fmt>, report[-N]_csv/ for a CSV per benchmark,
    report[-N]_files/ for the Markdown's images (a name taken by any of them takes the whole stem)."""
    names = {fmt: f"{stem}.{fmt}" for fmt in FORMATS}
    names.update(files=f"{stem}_files", csv=f"{stem}_csv" if split_csv else f"{stem}.csv")
    return names


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


def _stage_and_publish(staging: atomic.Staging, results: Table, blocks: list[Block], formats: Sequence[str],
                       split_csv: bool, pictures: bool, worker: ChartWorker | None) -> dict[str, Path]:
    """Each format written under a temporary name, then all published under the first stem free of
    them all (scalebench.atomic): a report is never written over, nor seen in part."""
    out_dir, temps = staging.directory, {}
    charts = list(dict.fromkeys(charts_of(blocks)))
    if worker is not None:
        worker.submit(charts)  # drawn while the text formats are written
    faultpoints.reached("report:charts")
    if "csv" in formats or "parquet" in formats:
        rows = tidy.frame(results)
        if "csv" in formats and split_csv:
            temps["csv"] = staging.directory_for("report_csv")
            with atomic.named(out_dir / "report_csv", "--out"):
                tidy.write_csv_per_benchmark(rows, temps["csv"])
        elif "csv" in formats:
            temps["csv"] = staging.file("report.csv", lambda handle: tidy.write_csv(rows, handle))
        if "parquet" in formats:
            temps["parquet"] = staging.file("report.parquet", lambda handle: tidy.write_parquet(rows, handle))
        del rows
    if "txt" in formats:
        temps["txt"] = staging.file("report.txt", render_text(blocks))
    images = worker.result() if worker is not None else draw_here(charts) if charts and pictures else {}
    pictures_of = {chart: f"{i:02d}-{chart.name}.png" for i, chart in enumerate(charts, 1)}
    if "md" in formats and charts:
        temps["files"] = staging.directory_for("report_files")
        with atomic.named(out_dir / "report_files", "--out"):
            for chart in charts:
                (temps["files"] / pictures_of[chart]).write_bytes(images[chart])
    if "html" in formats:
        temps["html"] = staging.file("report.html", render_html(blocks, "scalebench report", images))
    for n in itertools.count(1):
        names = _names(_stem(n), split_csv)
        if any(os.path.lexists(out_dir / names[part]) for part in {*formats, "files"}):
            continue
        if "md" in formats:
            temps["md"] = staging.file("report.md", render_markdown(
                blocks, lambda chart: f"{names['files']}/{pictures_of[chart]}"))
        try:
            atomic.publish_together([(temps[part], out_dir / names[part]) for part in _ORDER if part in temps])
        except FileExistsError:  # another report took a name meanwhile: the next stem
            continue
        return {fmt: out_dir / names[fmt] for fmt in formats}
    raise AssertionError("unreachable")


def write_report(results: Sequence[str | Path], out_dir: Path | None = None, formats: Sequence[str] = DEFAULT_FORMATS,
                 thresholds: Path | None = None, *, split_csv: bool = False, rebuild: bool = False,
                 index: bool = True) -> Written:
    """Write the report in each format into a new set of files; never replaces an existing report.
    The runs are read through the index beside them (`index`; `rebuild`: every report read again)."""
    with paused_gc():  # see results.paused_gc: the whole report handles the 100 000s of records
        chosen = out_dir is not None
        out_dir = out_dir or default_out_dir(results)  # before anything is read: a refusal comes first
        if not chosen:  # the reports of killed reports beside this one: their temporaries, and their directories
            atomic.sweep_below(out_dir.parent)
        split_csv = split_csv and "csv" in formats
        warnings: list[str] = []
        sources = find_sources(results, warnings)
        # A big report's pictures are drawn by a worker process, which imports matplotlib while the
        # results are read; for a small one, starting a second Python costs more than it saves.
        pictures = bool({"md", "html"} & set(formats))
        big = pictures and sum(map(_size, sources[0])) >= WORKER_FROM_BYTES
        worker = ChartWorker() if big else None
        try:
            loaded = load(results, index=index, rebuild=rebuild, sources=(*sources, warnings))
            return _write_files(loaded, out_dir, chosen, formats, thresholds, split_csv, pictures, worker)
        finally:
            if worker is not None:
                worker.close()


def _size(path: Path) -> int:
    """Bytes of a file found by the walk; 0 when it is gone since (its reading will say so)."""
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _write_files(loaded: Loaded, out_dir: Path, chosen: bool, formats: Sequence[str], thresholds: Path | None,
                 split_csv: bool, pictures: bool, worker: ChartWorker | None) -> Written:
    results, warnings = loaded.table, loaded.warnings
    all_series = series.build(results)
    verdicts = None
    if thresholds is not None:
        criteria = acceptance.load(thresholds, figure_units(results))
        expectations = model_expectations(results) if acceptance.uses_model(criteria) else None
        verdicts = acceptance.judge(criteria, results, all_series=all_series, expectations=expectations,
                                    cut_short=loaded.cut_short)
    blocks = build_document(results, warnings, verdicts, thresholds, all_series)
    try:
        made = atomic.make_directory(out_dir)
    except OSError as err:
        default = "" if chosen else " (the default, beside the results: name another with --out)"
        raise ResultsError(f"--out: cannot write into {out_dir}{default}: {err.strerror or err}") from err
    try:
        with atomic.named(out_dir, "--out"), atomic.Staging(out_dir, "--out") as staging:
            files = _stage_and_publish(staging, results, blocks, formats, split_csv, pictures, worker)
    except BaseException:
        atomic.unmake(made)  # nothing was published: no directory left either
        raise
    warnings = [*warnings, worker.failure] if worker is not None and worker.failure else warnings
    shown = [fmt for fmt in ("html", "md", "txt", "csv", "parquet") if fmt in files]
    target = files[next(fmt for fmt in shown if not (fmt == "csv" and split_csv and len(shown) > 1))]
    return Written(target, results, warnings, files, verdicts, loaded.notes)
