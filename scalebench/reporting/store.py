"""Results store: ReFrame run reports and perflogs kept as written, read back into one table of
sessions, cases and figures (scalebench.reporting.table).

A run directory (results/runs/<UTC time>-<host>-<pid>/) holds report.json, perflogs/, output/ and
reframe.log exactly as ReFrame wrote them, and provenance.json when `scalebench run` made it;
scalebench only reads them. A run's report.json is the source of truth; its perflogs are read only
when the report is missing (the run was interrupted or is still going) or broken. A malformed or
partial report is skipped with a warning that names the file. Each report is read once: what ingest
made of it is kept in the index beside the results (scalebench.reporting.index).
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import itertools
import multiprocessing
import os
import re
import shlex
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

import polars as pl

from scalebench import loaders, programs, registry, textfile
from scalebench.errors import InputError, ResultsError
from scalebench.reporting import cutshort
from scalebench.reporting.index import INDEX_DIR, Fresh, Index, Indexed, SegmentUnreadable, assemble, select
from scalebench.reporting.perflogs import load_perflogs, run_dir_of
from scalebench.reporting.records import (PROVENANCE_KEYS, Case, FigureDropped, Session, check_case, count, derived,
                                        figure_value, interval, number, params_from_name, run_provenance, text)
from scalebench.reporting.table import Table, concat, from_sessions
from scalebench.site.rundir import DRY_RUN_MARK, dry_run_requested
from scalebench.validation import excerpt_text

__all__ = ["Case", "Loaded", "Session", "find_sources", "ingest", "load", "paused_gc", "read_report",
           "results_dir_of", "session_of", "skip_reasons"]

# Directories of a run that hold benchmark files, never run reports: not searched.
_NOT_SEARCHED = {"stage", "output"}


def _walk(entry: Path, warnings: list[str], unreported: list[Path]) -> Iterator[Path]:
    """Files under `entry`, skipping the benchmark-file trees of run directories, dry runs' directories
    and symbolic links to directories (each said in `warnings`); the run directories that hold no run
    report are added to `unreported`. A directory removed while it is walked (a run deleted meanwhile)
    is skipped with a warning; one that cannot be read stops the walk (ResultsError)."""
    def unreadable(err: OSError) -> None:
        if isinstance(err, (FileNotFoundError, NotADirectoryError)) and err.filename != str(entry):
            warnings.append(f"skipped {err.filename}: removed while the results were read")
            return
        _raise_unreadable(err)

    for root, dirs, files in os.walk(entry, onerror=unreadable):
        if DRY_RUN_MARK in files:
            dirs[:] = []
            warnings.append(_dry_run_warning(Path(root)))
            continue
        if _unreported_run(Path(root), files):
            unreported.append(Path(root))
        kept = []
        beside_runs = "runs" in dirs  # a results directory: its index holds no run report
        for name in sorted(d for d in dirs if d not in _NOT_SEARCHED and not (beside_runs and d == INDEX_DIR)):
            if os.path.islink(os.path.join(root, name)):
                # A link may lead anywhere, outside the results or back into them: read what is named.
                warnings.append(f"skipped {os.path.join(root, name)}: a symbolic link to a directory "
                                f"({_link_target(os.path.join(root, name))}), not followed; give its target "
                                "to read it")
            else:
                kept.append(name)
        dirs[:] = kept
        for name in files:
            yield Path(root, name)


def _unreported_run(directory: Path, files: Sequence[str]) -> bool:
    """A run directory (one of runs/, or holding what a run writes first) with no run report in it."""
    run = directory.parent.name == "runs" or "reframe.log" in files or "provenance.json" in files
    return run and not any(name.endswith(".json") and name != "provenance.json" for name in files)


def _link_target(path: str) -> str:
    try:
        return f"to {excerpt_text(os.readlink(path), 200)}"
    except OSError as err:
        return f"unreadable: {err.strerror}"


def _dry_run_warning(run_dir: Path) -> str:
    return f"skipped {run_dir}: a ReFrame dry run (its {DRY_RUN_MARK} file), nothing measured"


def _raise_unreadable(err: OSError) -> None:
    raise ResultsError(f"results: cannot read {err.filename}: {err.strerror}")


class Found(NamedTuple):
    reports: list[Path]  # JSON files that may be run reports
    perflogs: list[Path]
    unreported: list[Path]  # run directories without a run report (scalebench.reporting.cutshort)


def find_sources(paths: Iterable[str | Path], warnings: list[str] | None = None) -> Found:
    """What is under the given files/directories to read; what is skipped on the way (dry runs, links to
    directories, directories removed meanwhile) is said in `warnings`."""
    warnings = warnings if warnings is not None else []
    reports: set[Path] = set()
    perflogs: set[Path] = set()
    unreported: list[Path] = []
    for entry in map(Path, paths):
        if not entry.exists():
            raise ResultsError(f"results: {entry} does not exist")
        if entry.is_file() and entry.suffix not in (".json", ".log"):
            raise ResultsError(f"results: {entry} is neither a run report (.json) nor a perflog (.log); "
                               "give run directories, report files or results/")
        if not entry.is_file() and not entry.is_dir():
            raise ResultsError(f"results: {entry} is not a file or a directory")
        if entry.is_file():
            run_dir = run_dir_of(entry) if entry.suffix == ".log" else entry.parent
            if (run_dir / DRY_RUN_MARK).exists():
                warnings.append(_dry_run_warning(run_dir))
                continue
        for path in [entry] if entry.is_file() else _walk(entry, warnings, unreported):
            if path.suffix == ".json" and path.name != "provenance.json":
                reports.add(path)
            elif path.suffix == ".log" and (entry.is_file() or "perflogs" in path.parts):
                perflogs.add(path)
    return Found(sorted(reports), sorted(perflogs), sorted(set(unreported)))


JOB_MESSAGES_MAX = 6


def _stage_dir(stagedir: str, report: str) -> Path:
    """A case's stage directory; under the report's run directory when the results were moved."""
    stage = Path(stagedir)
    if stage.is_dir() or "stage" not in stage.parts:
        return stage
    parts = stage.parts
    return Path(report).parent.joinpath(*parts[len(parts) - 1 - parts[::-1].index("stage"):])


def _job_messages(testcase: dict[str, Any], report: str) -> tuple[str, ...]:
    """The scheduler's and launcher's messages in a failed case's job stderr/stdout (ReFrame keeps a
    failed case's stage directory); () when the files are gone."""
    stagedir = testcase.get("stagedir")
    if not isinstance(stagedir, str) or not stagedir:
        return ()
    stage = _stage_dir(stagedir, report)
    found: dict[str, None] = {}
    for key in ("job_stderr", "job_stdout"):
        name = testcase.get(key)
        if not isinstance(name, str) or not name:
            continue
        try:
            text = textfile.read_tail(stage / name, "job output", programs.LAUNCHER_TAIL)
        except InputError:
            continue
        for line in programs.launcher_lines(text):
            found.setdefault(line, None)
    return tuple(found)[:JOB_MESSAGES_MAX]


def _case(testcase: dict[str, Any], report: str, start: str, provenance: dict[str, Any],
          dropped: list[str] | None = None) -> Case:
    """A test case of a run report as a Case (vetted by records.check_case before anyone reads it). A
    figure of another partition, no number or in a unit that cannot be converted (records.figure_value) is
    left out, and why is appended to `dropped`; a figure in another unit of its quantity is converted."""
    figures, references = {}, {}
    benchmark = text(testcase.get("name", "")).split(" ")[0] or text(testcase.get("unique_name", ""))
    bench = registry.lookup(benchmark)
    own = f"{testcase['system']}:{testcase['partition']}"
    for key, entry in (testcase.get("perfvalues") or {}).items():
        # [value, ref, lower, upper, unit, result], keyed <system>:<partition>:<figure>
        where, _, name = key.rpartition(":")
        try:
            if where and where != own:
                raise FigureDropped(f"recorded for {excerpt_text(where, 80)}, not this case's {own}")
            value, unit, factor = figure_value(bench, name, entry[0], entry[4] or "")
        except FigureDropped as err:
            if dropped is not None:
                dropped.append(f"figure {excerpt_text(name, 80)}: {err}: dropped")
            continue
        except InputError as err:
            raise InputError(f"figure {name}: {err}") from None
        figures[name] = (value, unit)
        reference = entry[1]
        if factor != 1.0 and type(reference) in (int, float):
            reference = reference * factor  # ReFrame's reference is in the figure's unit; bounds are fractions
        references[name] = (reference, entry[2], entry[3])
    params = testcase.get("check_params") or {}
    if not params:  # ReFrame 4.x reports parameters as top-level keys listed in the name
        params = {p: testcase.get(p) for p in params_from_name(text(testcase.get("display_name", "")))}
    num_tasks = count(testcase.get("num_tasks"), "num_tasks")
    cpus = count(testcase.get("num_cpus_per_task"), "num_cpus_per_task") or 1
    return Case(
        report=report, session_start=start,
        system=testcase["system"], partition=testcase["partition"], environ=testcase["environ"],
        stack=testcase.get("stack") or testcase["environ"],
        benchmark=benchmark,
        name=text(testcase.get("display_name") or testcase.get("name", "")),
        params=params, num_nodes=count(testcase.get("num_nodes"), "num_nodes"), num_tasks=num_tasks,
        result=text(testcase.get("result") or "unknown"),
        fail_phase=testcase.get("fail_phase"), fail_reason=testcase.get("fail_reason"),
        figures=figures, references=references,
        provenance={k: testcase[k] for k in PROVENANCE_KEYS if testcase.get(k) not in (None, "")},
        time_run_s=number(testcase.get("time_run")),
        job_interval=interval(testcase.get("job_submit_time"), testcase.get("job_completion_time_unix")),
        cores=num_tasks * cpus if num_tasks else None,
        **derived(testcase, provenance),
        job_messages=_job_messages(testcase, report) if testcase.get("result") not in ("pass", "skip") else (),
    )


# ReFrame's run report has no skip reason; its log has, e.g.
# "[     SKIP ] (1/8) NetPIPECheck %placement=inter_node /02dbaacd @local:default+mpich [needs 2 nodes]".
_SKIP_LINE = re.compile(r"\bSKIP\S*\s*\] \(\s*\d+/\d+\) (?P<name>.+?) /[0-9a-f]+ "
                        r"@(?P<system>[^:\s]+):(?P<partition>[^+\s]+)\+(?P<environ>\S+) \[(?P<reason>.*)\]\s*$", re.M)


def skip_reasons(log: Path) -> dict[tuple[str, str, str, str], str]:
    """{(case name, system, partition, environ): reason} from a run's reframe.log; {} without one."""
    try:
        text = textfile.read_text(log, "ReFrame log", loaders.REPORT_LIMIT)
    except InputError:
        return {}
    return {(m["name"], m["system"], m["partition"], m["environ"]): m["reason"] for m in _SKIP_LINE.finditer(text)}


class ParsedReport(NamedTuple):
    info: dict[str, Any]
    runs: list[dict[str, Any]]
    identity: str  # session_identity
    digest: str  # sha256 of the report's bytes: its key in the index


def read_report(path: Path, raw: bytes | None = None, digest: str | None = None) -> ParsedReport | None:
    """A run report's session_info, runs and identity (from `raw`, its bytes, when they were read
    already, and `digest`, their sha256, when it was computed); None if the JSON is not a ReFrame run
    report."""
    try:
        raw = textfile.read_bytes(path, "run report", loaders.REPORT_LIMIT) if raw is None else raw
        data = loaders.parse_json(raw, str(path))
    except InputError as err:
        raise ResultsError(f"{path}: not readable JSON ({err})") from err
    if not isinstance(data, dict) or "session_info" not in data or "runs" not in data:
        return None
    info, runs = data["session_info"], data["runs"]
    if not isinstance(info, dict) or not isinstance(runs, list) or not all(
            isinstance(run, dict) and isinstance(run.get("testcases"), list) for run in runs):
        raise ResultsError(f"{path}: malformed ReFrame report (session_info must be an object, runs a list "
                           "of objects with a list of testcases)")
    if _dry_run_session(info):
        raise DryRunReport(f"{path}: a ReFrame dry run (its command line has --dry-run), nothing measured")
    digest = digest or hashlib.sha256(raw).hexdigest()
    return ParsedReport(info, runs, session_identity(info, digest), digest)


def session_of(path: Path, parsed: ParsedReport, warnings: list[str] | None = None) -> Session:
    """The Session of a report read by read_report. A test case that cannot be read, or holds a value that
    cannot be (records.check_case), is left out with a warning naming the file and the case."""
    warnings = warnings if warnings is not None else []
    info, runs = parsed.info, parsed.runs
    start = text(info.get("time_start", ""))
    provenance = run_provenance(path.parent, warnings)
    # The last run holds the final outcome of retried cases; earlier runs are the retries. A case is a
    # check variant on one partition and environment (one check runs on several stacks).
    final: dict[tuple[str, ...], Any] = {}
    for run in runs:
        for testcase in run["testcases"]:
            if not isinstance(testcase, dict):
                warnings.append(f"{path}: skipped a test case that is not an object")
                continue
            key = (testcase.get("unique_name") or testcase.get("name"), testcase.get("system"),
                   testcase.get("partition"), testcase.get("environ"))
            if not all(type(k) is str for k in key):  # usually strings: text() only for the odd one
                key = tuple(map(text, key))
            final[key] = testcase
    report = str(path)
    cases = []
    for testcase in final.values():
        name = excerpt_text(text(testcase.get("display_name") or testcase.get("name") or "?"), 80)
        dropped: list[str] = []
        try:
            case = _case(testcase, report, start, provenance, dropped)
            check_case(case)
        except (InputError, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            reason = str(err) if isinstance(err, InputError) else f"malformed ({type(err).__name__}: {err})"
            warnings.append(f"skipped {name} in {path}: {excerpt_text(reason, 300)}")
            continue
        warnings.extend(f"{name} in {path}: {excerpt_text(why, 300)}" for why in dropped)
        cases.append(case)
    if any(c.result == "skip" and not c.fail_reason for c in cases):
        reasons = skip_reasons(path.parent / "reframe.log")
        cases = [replace(c, fail_reason=reasons.get((c.name, c.system, c.partition, c.environ)))
                 if c.result == "skip" and not c.fail_reason else c for c in cases]
    try:
        elapsed = number(info.get("time_elapsed"))
    except InputError:
        elapsed = None
    return Session(report, start, elapsed, cases, hostname=text(info.get("hostname") or ""),
                   version=text(info.get("version") or ""), cmdline=text(info.get("cmdline") or ""),
                   run_provenance=provenance, identity=parsed.identity)


# Run reports to read from which worker processes share the reading (one per CPU): below, starting them
# (Python and polars imported, about a second each) costs more than it saves.
PARALLEL_FROM_BYTES = 64 * 2**20
_CHUNKS_PER_WORKER = 4  # chunks of about equal bytes: a worker done early takes the next


@dataclass(frozen=True)
class _Read:
    """What reading one run report gave: a session (its row in its chunk's table), an indexed report (its
    digest), or why there is none."""

    kind: str  # session | indexed | dry | error | none (JSON, not a run report)
    message: str = ""  # dry, error: the warning
    identity: str = ""
    digest: str = ""
    warnings: tuple[str, ...] = ()
    row: int = -1


def _read_chunk(paths: Sequence[Path], indexed: frozenset[str]) -> tuple[list[_Read], Table]:
    """Run reports read, vetted and made columns: a worker's share of a load, or all of a small one. A
    report whose digest is `indexed` is not parsed: the index has it."""
    out: list[_Read] = []
    sessions: list[Session] = []
    with paused_gc():
        for path in paths:
            try:
                raw: bytes | None = textfile.read_bytes(path, "run report", loaders.REPORT_LIMIT)
            except InputError:
                raw = None  # read_report reads it again, and says what is wrong
            digest = hashlib.sha256(raw).hexdigest() if raw is not None else None
            if digest is not None and digest in indexed:
                out.append(_Read("indexed", digest=digest))
                continue
            try:
                parsed = read_report(path, raw, digest)
            except DryRunReport as err:
                out.append(_Read("dry", f"skipped {err}"))
                continue
            except ResultsError as err:
                out.append(_Read("error", f"skipped {err}"))
                continue
            if parsed is None:
                out.append(_Read("none"))
                continue
            found: list[str] = []
            sessions.append(session_of(path, parsed, found))
            out.append(_Read("session", identity=parsed.identity, digest=parsed.digest, warnings=tuple(found),
                             row=len(sessions) - 1))
        return out, from_sessions(sessions)


def _chunks(paths: Sequence[Path], workers: int) -> list[list[Path]]:
    """The paths in order, in chunks of about equal bytes; one chunk for a small load or a single CPU."""
    sizes = []
    for path in paths:
        try:
            sizes.append(os.stat(path).st_size)
        except OSError:
            sizes.append(0)
    total = sum(sizes)
    if workers < 2 or total < PARALLEL_FROM_BYTES:
        return [list(paths)]
    share = total / (workers * _CHUNKS_PER_WORKER)
    chunks: list[list[Path]] = [[]]
    held = 0
    for path, size in zip(paths, sizes):
        if held >= share:
            chunks.append([])
            held = 0
        chunks[-1].append(path)
        held += size
    return chunks


def _read_all(paths: Sequence[Path], indexed: frozenset[str]) -> tuple[dict[Path, tuple[_Read, int]], list[Table]]:
    """{path: (what reading it gave, its chunk)} and each chunk's table. A year of nightly runs (a GB of run
    reports) is read by a worker process per CPU, in chunks; a small load, or one whose workers cannot
    start, here."""
    workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    chunks = _chunks(paths, workers)
    results: list[tuple[list[_Read], Table]] | None = None
    if len(chunks) > 1:
        try:
            with ProcessPoolExecutor(max_workers=min(workers, len(chunks)),
                                     mp_context=multiprocessing.get_context("spawn")) as pool:
                results = list(pool.map(_read_chunk, chunks, itertools.repeat(indexed)))
        except (OSError, BrokenProcessPool):  # no process to start, or one lost: read them here
            results = None
    if results is None:
        results = [_read_chunk(chunk, indexed) for chunk in chunks]
    reads = {path: (read, i) for i, (chunk, (found, _)) in enumerate(zip(chunks, results))
             for path, read in zip(chunk, found)}
    return reads, [table for _, table in results]


class DryRunReport(ResultsError):
    """A run report ReFrame wrote for a dry run: its cases 'pass' without having run."""


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CMDLINE_PARSED = 100_000  # characters of a command line split as a shell would; a longer one by spaces


def session_identity(info: dict[str, Any], digest: str) -> str:
    """What makes two reports one session: ReFrame's session UUID, else (an older or edited report
    without one) the report's content, its sha256 `digest`."""
    uuid = info.get("uuid")
    if isinstance(uuid, str) and _UUID.fullmatch(uuid):
        return f"uuid:{uuid.lower()}"
    return f"sha256:{digest}"


def _dry_run_session(info: dict[str, Any]) -> bool:
    """ReFrame's own record of a dry run: its command line (session_info.cmdline, quoted as a shell
    would) asks for one. ReFrame 4.10 stores no other mark: the cases of a dry run 'pass' with every
    performance value null."""
    cmdline = info.get("cmdline")
    if not isinstance(cmdline, str):
        return False
    try:
        words = shlex.split(cmdline) if len(cmdline) <= _CMDLINE_PARSED else cmdline.split()
    except ValueError:  # unbalanced quotes: not written by ReFrame, but still words
        words = cmdline.split()
    return dry_run_requested(words)


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector paused for a bulk load.

    Ingest allocates millions of objects (parsed JSON, cases, records), none of them in reference
    cycles, and every automatic collection pass traverses all of them again: a third of the time of a
    100 000-record report. Reference counting still frees everything meanwhile. On the way out the
    objects are moved to the oldest generation in one step (freeze, then unfreeze), so resuming does
    not start with a pass over all of them; later full collections still see them. A caller that had
    already paused collection keeps it paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()


@dataclass(frozen=True)
class Loaded:
    table: Table
    warnings: list[str]  # about the results: the report lists them
    notes: list[str]  # about the index: said on stderr, never part of a report
    cut_short: tuple[cutshort.CutShort, ...] = ()  # runs without a report (each named in the warnings too)

    def sessions(self, cases: Any = None) -> list[Session]:
        """Sessions and cases as ingest made them (Table.materialize)."""
        return self.table.materialize(cases)


Sources = tuple[list[Path], list[Path], list[Path], list[str]]  # find_sources' Found, and its warnings


def load(paths: Iterable[str | Path], *, index: bool = True, rebuild: bool = False,
         sources: Sources | None = None) -> Loaded:
    """Everything under `paths` (or in `sources`, found already), each session once however many copies
    of it there are, read from the index beside the results where it holds a run report (and written
    into it where not: `index`; `rebuild` reads every report again and writes them all); ResultsError
    when there is nothing."""
    paths = list(paths)
    if sources is None:
        found: list[str] = []
        sources = (*find_sources(paths, found), found)
    with paused_gc():
        skip: set[Path] = set()
        notes: list[str] = []
        while True:
            indexes: dict[Path, Index] = {}
            try:
                loaded = _load(paths, sources, indexes if index else None, rebuild, frozenset(skip))
            except SegmentUnreadable as err:  # a segment's cases or records damaged: load again without it
                skip.add(err.segment)
                notes.append(f"index: skipped {err.segment}: {err.why}; its run reports are read again (the "
                             "index is derived from them: the segment may be deleted)")
                continue
            for idx in indexes.values():
                idx.write()
                notes += idx.notes
            return Loaded(loaded.table, loaded.warnings, notes + loaded.notes, loaded.cut_short)


def ingest(paths: Iterable[str | Path]) -> tuple[list[Session], list[str]]:
    """All sessions under `paths` read from their JSON (no index), and the warnings."""
    loaded = load(paths, index=False)
    return loaded.sessions(), loaded.warnings


def results_dir_of(path: Path) -> Path:
    """The results directory a given path belongs to: the one holding runs/ when the path is runs/, a
    run directory or a file of one; else the directory given (or the file's)."""
    path = Path(os.path.abspath(path))
    where = run_dir_of(path) if path.suffix == ".log" and path.is_file() else path.parent if path.is_file() else path
    if where.name == "runs":
        return where.parent
    return where.parent.parent if where.parent.name == "runs" else where


def _load(paths: list[str | Path], sources: Sources, indexes: dict[Path, Index] | None, rebuild: bool,
          skip: frozenset[Path]) -> Loaded:
    report_files, perflog_files, unreported = sources[:3]
    warnings = list(sources[3])
    named = {Path(p) for p in paths if Path(p).is_file()}
    parts: list[Fresh | Indexed] = []
    reported: set[Path] = set()  # run directories whose report.json was read (or is a dry run's)
    read_from: dict[str, Path] = {}  # session identity -> the report it was read from

    def copy(identity: str, path: Path) -> bool:
        first = read_from.setdefault(identity, path)
        if first is path:
            return False
        if not _same_file(first, path):
            warnings.append(f"skipped {path}: a copy of the session read from {first} ({identity})")
        return True

    plan: list[tuple[Path, Index | None, Indexed | None]] = []
    for path in report_files:
        idx = None
        where = results_dir_of(path)
        if indexes is not None and Path(os.path.abspath(path)).parent.parent == where / "runs":  # a results tree
            idx = indexes.get(where) or indexes.setdefault(where, Index(where, rebuild, skip))
        plan.append((path, idx, idx.known(path) if idx is not None else None))
    indexed = frozenset().union(*(idx.digests() for idx in (indexes or {}).values()))
    reads, tables = _read_all([path for path, _, known in plan if known is None], indexed)
    fresh: list[Fresh] = []
    kept: list[list[int]] = [[] for _ in tables]  # per chunk, the sessions this load keeps, in order
    for path, idx, known in plan:
        read, chunk = reads.get(path, (None, -1))
        if read is not None and read.kind == "indexed":
            known = idx.indexed(path, read.digest) if idx is not None else None
            if known is None:  # indexed beside other results, not these: read here (a copy, most likely)
                (read,), table = _read_chunk([path], frozenset())
                chunk = len(tables)
                tables.append(table)
                kept.append([])
        if known is not None:
            reported.add(path.parent)
            if not copy(known.entry.identity, path):
                parts.append(known)
                warnings += known.warnings
            continue
        if read is None or read.kind == "none":
            if path in named:
                warnings.append(f"skipped {path}: not a ReFrame run report (no session_info and runs)")
            continue
        if read.kind in ("dry", "error"):
            warnings.append(read.message)
            if read.kind == "dry":
                reported.add(path.parent)
            continue
        reported.add(path.parent)
        if copy(read.identity, path):
            if idx is not None:
                idx.remember(path, read.digest)
            continue
        part = Fresh()
        parts.append(part)
        fresh.append(part)
        kept[chunk].append(read.row)
        warnings += read.warnings
        if idx is not None:
            idx.add(path, read.digest, read.identity, part, read.warnings)
    made = concat(table if rows == list(range(table.session_count)) else select(table, rows)
                  for table, rows in zip(tables, kept))
    for idx in (indexes or {}).values():
        idx.made(fresh, made)
    table = assemble(parts, made)
    cut = {run_dir: cutshort.find(run_dir) for run_dir in unreported if run_dir not in reported}
    perflog_sessions = _perflog_sessions(perflog_files, reported, table, warnings, cut)
    warnings += [c.describe() for c in cut.values() if not c.perflogs]
    if perflog_sessions:
        table = concat([table, from_sessions(perflog_sessions)])
    if table.cases.is_empty():
        given = ", ".join(map(str, paths)) or "(nothing)"
        more = f"; {len(warnings) - 1} more" if len(warnings) > 1 else ""
        why = f" ({excerpt_text(warnings[0], 300)}{more})" if warnings else ""
        raise ResultsError(f"results: no usable ReFrame run report or perflog in {excerpt_text(given, 200)}{why}")
    return Loaded(table, warnings, [], tuple(cut.values()))


def _perflog_sessions(perflog_files: Sequence[Path], reported: set[Path], reports: Table,
                      warnings: list[str], cut: dict[Path, cutshort.CutShort]) -> list[Session]:
    """Sessions of the runs that have perflogs and no usable report; a copy of a session read already
    (the same cases with the same figures) left out. A run cut short (`cut`) is named with them, and
    marked as read (CutShort.perflogs)."""
    by_run: dict[Path, list[Path]] = {}
    for path in perflog_files:
        by_run.setdefault(run_dir_of(path), []).append(path)
    sessions: list[Session] = []
    measured: set[tuple[Any, ...]] = set()
    for run_dir, files in sorted(by_run.items()):
        if run_dir in reported:
            continue  # the report holds the same figures, and more
        session = load_perflogs(run_dir, files, warnings)
        if session is None:
            continue
        prints = _fingerprints(session)
        names = list({c.name for c in session.cases})
        read = {p for s in reports.materialize(pl.col("name").is_in(names)) for p in _fingerprints(s)} | measured
        if prints and prints <= read:
            cut.pop(run_dir, None)  # a copy of a run read already: nothing of it is missing
            warnings.append(f"skipped the perflogs of {run_dir}: a copy of a session already read "
                            "(the same cases with the same figures)")
            continue
        measured |= prints
        read = f"read {sum(len(c.figures) for c in session.cases)} figure(s) of the cases it finished from its perflogs"
        if run_dir in cut:
            cut[run_dir] = replace(cut[run_dir], perflogs=True)
            warnings.append(f"{cut[run_dir].describe()}; {read}")
        else:
            warnings.append(f"{run_dir}: no usable report.json (run interrupted or still going): {read}")
        sessions.append(session)
    return sessions


def _same_file(a: Path, b: Path) -> bool:
    """One file named twice (a run directory and its report.json both given): no copy to warn of."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _fingerprints(session: Session) -> set[tuple[Any, ...]]:
    """The measured cases of a session by content: a perflog copy of a run has no session UUID, but the
    same cases with the same figures as the run's report."""
    return {(c.name, c.system, c.partition, c.environ, tuple(sorted((k, v[0]) for k, v in c.figures.items())))
            for c in session.cases if any(v[0] is not None for v in c.figures.values())}
