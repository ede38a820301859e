"""Results store: ReFrame run reports and perflogs kept as written, read back into one tidy table.

A run directory (results/runs/<UTC time>-<host>-<pid>/) holds report.json, perflogs/, output/ and
reframe.log exactly as ReFrame wrote them, and provenance.json when `scalebench run` made it;
scalebench only reads them. Ingest turns every test case x performance variable into a Record. A
run's report.json is the source of truth; its perflogs are read only when the report is missing
(the run was interrupted or is still going) or broken. A malformed or partial report is skipped
with a warning that names the file.
"""
from __future__ import annotations

import contextlib
import csv
import gc
import hashlib
import io
import json
import math
import os
import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from scalebench import benchmarks, loaders, textfile
from scalebench.errors import InputError, ResultsError
from scalebench.results.perflogs import load_perflogs, run_dir_of
from scalebench.site.rundir import DRY_RUN_MARK, dry_run_requested
from scalebench.validation import excerpt_text
from scalebench.results.records import (PROVENANCE_KEYS, Case, Record, Session, check_case, count, derived, interval,
                                        number, params_from_name, run_provenance, text)

__all__ = ["Case", "Record", "Session", "find_reports", "find_sources", "ingest", "load", "load_session",
           "paused_gc", "records", "skip_reasons", "write_csv"]

# Directories of a run that hold benchmark files, never run reports: not searched.
_NOT_SEARCHED = {"stage", "output"}


def _walk(entry: Path, warnings: list[str]) -> Iterator[Path]:
    """Files under `entry`, skipping the benchmark-file trees of run directories, dry runs' directories
    and symbolic links to directories (each said in `warnings`)."""
    for root, dirs, files in os.walk(entry, onerror=_raise_unreadable):
        if DRY_RUN_MARK in files:
            dirs[:] = []
            warnings.append(_dry_run_warning(Path(root)))
            continue
        kept = []
        for name in sorted(d for d in dirs if d not in _NOT_SEARCHED):
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


def _link_target(path: str) -> str:
    try:
        return f"to {excerpt_text(os.readlink(path), 200)}"
    except OSError as err:
        return f"unreadable: {err.strerror}"


def _dry_run_warning(run_dir: Path) -> str:
    return f"skipped {run_dir}: a ReFrame dry run (its {DRY_RUN_MARK} file), nothing measured"


def _raise_unreadable(err: OSError) -> None:
    raise ResultsError(f"results: cannot read {err.filename}: {err.strerror}")


def find_sources(paths: Iterable[str | Path], warnings: list[str] | None = None) -> tuple[list[Path], list[Path]]:
    """(JSON files that may be run reports, perflog files) under the given files/directories; what is
    skipped on the way (dry runs, links to directories) is said in `warnings`."""
    warnings = warnings if warnings is not None else []
    reports: set[Path] = set()
    perflogs: set[Path] = set()
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
        for path in [entry] if entry.is_file() else _walk(entry, warnings):
            if path.suffix == ".json" and path.name != "provenance.json":
                reports.add(path)
            elif path.suffix == ".log" and (entry.is_file() or "perflogs" in path.parts):
                perflogs.add(path)
    return sorted(reports), sorted(perflogs)


def find_reports(paths: Iterable[str | Path]) -> list[Path]:
    """Every ReFrame JSON report under the given files/directories, in a stable order."""
    return find_sources(paths)[0]


# Lines a scheduler or MPI launcher writes into a job's output when it ends a job or a rank: they say
# what happened (cancelled, time limit, node failure, a rank killed by a signal), where the check's
# sanity message only sees output missing.
_JOB_MESSAGE = re.compile(r"^(?:slurmstepd\S*: error: .*|srun: error: .*"
                          r"|.*noticed that process rank \d+ with PID \d+ on node \S+ exited on signal .*)$", re.M)
JOB_MESSAGES_MAX = 6
_JOB_OUTPUT_TAIL = 64 * 1024  # bytes read from the end of each output: the messages come last


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
            text = textfile.read_tail(stage / name, "job output", _JOB_OUTPUT_TAIL)
        except InputError:
            continue
        for match in _JOB_MESSAGE.finditer(text):
            found.setdefault(match.group(0).strip(), None)
    return tuple(found)[:JOB_MESSAGES_MAX]


def _case(testcase: dict[str, Any], report: str, start: str, provenance: dict[str, Any]) -> Case:
    """A test case of a run report as a Case (vetted by records.check_case before anyone reads it)."""
    figures, references = {}, {}
    for key, entry in (testcase.get("perfvalues") or {}).items():
        # [value, ref, lower, upper, unit, result]. Once per figure: records.number is inlined for floats.
        name, value = key.rpartition(":")[2], entry[0]
        if type(value) is not float:
            try:
                value = number(value)
            except InputError as err:
                raise InputError(f"figure {name}: {err}") from None
        elif not math.isfinite(value):
            value = None
        figures[name] = (value, entry[4] or "")
        references[name] = (entry[1], entry[2], entry[3])
    params = testcase.get("check_params") or {}
    if not params:  # ReFrame 4.x reports parameters as top-level keys listed in the name
        params = {p: testcase.get(p) for p in params_from_name(text(testcase.get("display_name", "")))}
    num_tasks = count(testcase.get("num_tasks"), "num_tasks")
    cpus = count(testcase.get("num_cpus_per_task"), "num_cpus_per_task") or 1
    return Case(
        report=report, session_start=start,
        system=testcase["system"], partition=testcase["partition"], environ=testcase["environ"],
        stack=testcase.get("stack") or testcase["environ"],
        benchmark=text(testcase.get("name", "")).split(" ")[0] or text(testcase.get("unique_name", "")),
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


def load_session(path: Path, warnings: list[str] | None = None) -> Session | None:
    """One report; None if the JSON is not a ReFrame run report. Raises ResultsError if it is broken,
    DryRunReport if ReFrame wrote it for a dry run. A test case that cannot be read, or holds a value
    that cannot be (records.check_case), is left out with a warning naming the file and the case."""
    parsed = read_report(path)
    return None if parsed is None else session_of(path, parsed, warnings)


class ParsedReport(NamedTuple):
    info: dict[str, Any]
    runs: list[dict[str, Any]]
    identity: str  # session_identity


def read_report(path: Path) -> ParsedReport | None:
    """A run report's session_info, runs and identity; None if the JSON is not a ReFrame run report."""
    try:
        raw = textfile.read_bytes(path, "run report", loaders.REPORT_LIMIT)
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
    return ParsedReport(info, runs, session_identity(info, raw))


def session_of(path: Path, parsed: ParsedReport, warnings: list[str] | None = None) -> Session:
    """The Session of a report read by read_report (see load_session)."""
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
        try:
            case = _case(testcase, report, start, provenance)
            check_case(case)
        except (InputError, KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            reason = str(err) if isinstance(err, InputError) else f"malformed ({type(err).__name__}: {err})"
            name = excerpt_text(text(testcase.get("display_name") or testcase.get("name") or "?"), 80)
            warnings.append(f"skipped {name} in {path}: {excerpt_text(reason, 300)}")
            continue
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


class DryRunReport(ResultsError):
    """A run report ReFrame wrote for a dry run: its cases 'pass' without having run."""


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CMDLINE_PARSED = 100_000  # characters of a command line split as a shell would; a longer one by spaces


def session_identity(info: dict[str, Any], raw: bytes) -> str:
    """What makes two reports one session: ReFrame's session UUID, else (an older or edited report
    without one) the report's content."""
    uuid = info.get("uuid")
    if isinstance(uuid, str) and _UUID.fullmatch(uuid):
        return f"uuid:{uuid.lower()}"
    return f"sha256:{hashlib.sha256(raw).hexdigest()}"


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


def ingest(paths: Iterable[str | Path]) -> tuple[list[Session], list[str]]:
    """All sessions under `paths`, and one warning per report that had to be skipped."""
    with paused_gc():
        return _ingest(paths)


def load(paths: Iterable[str | Path]) -> tuple[list[Session], list[str], list[Record]]:
    """Sessions, warnings and the tidy table of everything under `paths`."""
    with paused_gc():
        sessions, warnings = _ingest(paths)
        return sessions, warnings, list(records(sessions))


def _ingest(paths: Iterable[str | Path]) -> tuple[list[Session], list[str]]:
    """Every session under `paths`, each once however many copies of it there are; ResultsError when
    there is none (an empty report is no answer)."""
    paths = list(paths)
    warnings: list[str] = []
    report_files, perflog_files = find_sources(paths, warnings)
    named = {Path(p) for p in paths if Path(p).is_file()}
    sessions: list[Session] = []
    reported: set[Path] = set()  # run directories whose report.json was read (or is a dry run's)
    read_from: dict[str, Path] = {}  # session identity -> the report it was read from
    measured: set[tuple[Any, ...]] = set()  # cases read from reports, by content (see _fingerprint)
    for path in report_files:
        try:
            parsed = read_report(path)
        except DryRunReport as err:
            warnings.append(f"skipped {err}")
            reported.add(path.parent)
            continue
        except ResultsError as err:
            warnings.append(f"skipped {err}")
            continue
        if parsed is None:
            if path in named:
                warnings.append(f"skipped {path}: not a ReFrame run report (no session_info and runs)")
            continue
        reported.add(path.parent)
        first = read_from.setdefault(parsed.identity, path)
        if first is not path:
            if not _same_file(first, path):
                warnings.append(f"skipped {path}: a copy of the session read from {first} ({parsed.identity})")
            continue
        session = session_of(path, parsed, warnings)
        sessions.append(session)
        measured.update(_fingerprints(session))
    by_run: dict[Path, list[Path]] = {}
    for path in perflog_files:
        by_run.setdefault(run_dir_of(path), []).append(path)
    for run_dir, files in sorted(by_run.items()):
        if run_dir in reported:
            continue  # the report holds the same figures, and more
        session = load_perflogs(run_dir, files, warnings)
        if session is None:
            continue
        prints = _fingerprints(session)
        if prints and prints <= measured:
            warnings.append(f"skipped the perflogs of {run_dir}: a copy of a session already read "
                            "(the same cases with the same figures)")
            continue
        measured |= prints
        warnings.append(f"{run_dir}: no usable report.json (run interrupted or still going): "
                        f"read {sum(len(c.figures) for c in session.cases)} figure(s) from its perflogs")
        sessions.append(session)
    if not any(session.cases for session in sessions):
        given = ", ".join(map(str, paths)) or "(nothing)"
        more = f"; {len(warnings) - 1} more" if len(warnings) > 1 else ""
        why = f" ({excerpt_text(warnings[0], 300)}{more})" if warnings else ""
        raise ResultsError(f"results: no usable ReFrame run report or perflog in {excerpt_text(given, 200)}{why}")
    return sessions, warnings


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


def _reference(ref: tuple[Any, Any, Any]) -> Any:
    # ReFrame writes (0, None, None) when a check has no reference for a figure.
    return None if ref[0] == 0 and ref[1] is None and ref[2] is None else ref[0]


def _hashable(value: Any) -> Any:
    return value if isinstance(value, (str, int, float, bool, type(None))) else json.dumps(value, sort_keys=True)


def records(sessions: Iterable[Session]) -> Iterator[Record]:
    """The tidy table: one Record per case x figure (x message size for sized microbenchmarks)."""
    for session in sessions:
        for case in session.cases:
            bench = benchmarks.lookup(case.benchmark)
            params = tuple(sorted((k, _hashable(v)) for k, v in case.params.items()))
            measured = case.measured
            for name, (value, unit) in case.figures.items():
                sized = benchmarks.split_sized(bench, name) if bench.sized else None
                figure, row_params = (name, params) if sized is None else (
                    sized[0], tuple(sorted((*params, ("msg_size", sized[1])))))
                yield Record(case.system, case.partition, case.stack, case.benchmark, case.name, row_params,
                             case.num_nodes, case.num_tasks, case.cores, figure, value, unit,
                             _reference(case.references[name]), case.result,
                             case.report, measured and value is not None, case, session)


# --- the tidy table as CSV --------------------------------------------------------------------------

CSV_LEADING = ("run_start", "system", "partition", "stack", "benchmark", "case")
_CSV_PROVENANCE = benchmarks.provenance().csv  # (column, field): the registry's
CSV_TRAILING = ("num_nodes", "num_tasks", "cores", "figure", "value", "unit", "reference", "result",
                *(column for column, _ in _CSV_PROVENANCE), "git_describe", "reframe_version", "hostname", "report")


def _csv_line(cells: Sequence[Any]) -> str:
    """Cells encoded as one CSV line (quoted where needed), without its line end."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(cells)
    return buffer.getvalue()


def write_csv(rows: Sequence[Record], handle: Any) -> None:
    """The tidy table as CSV, every parameter in its own column (param_<name> where a parameter has the
    name of a fixed column).

    Cells are encoded once per case (where, provenance), once per parameter combination and once per
    figure name, unit and result, then joined per row: at 100 000 rows, encoding every cell of every
    row was the slowest part of a report."""
    param_names = sorted({name for params in {r.params for r in rows} for name, _ in params})
    fixed = {*CSV_LEADING, *CSV_TRAILING}
    columns = [f"param_{name}" if name in fixed else name for name in param_names]  # a parameter named 'case'
    handle.write(_csv_line([*CSV_LEADING, *columns, *CSV_TRAILING]) + "\r\n")
    by_case: dict[int, tuple[str, str, str]] = {}
    by_params: dict[tuple[tuple[str, Any], ...], str] = {}
    words: dict[Any, str] = {}  # figure names, units, results, references: few distinct values

    def word(value: Any) -> str:
        # csv writes a lone empty cell as "" (to tell it from an empty line); within a line it is empty
        encoded = words[value] = "" if value in (None, "") else _csv_line([value])
        return encoded

    lines = []
    for r in rows:
        case = by_case.get(id(r.origin))
        if case is None:
            c, session = r.origin, r.session
            case = by_case[id(r.origin)] = (
                _csv_line([session.start, r.system, r.partition, r.stack, r.benchmark, r.case]),
                _csv_line([r.num_nodes, r.num_tasks, r.cores]),
                _csv_line([*(c.recorded(f.name) for _, f in _CSV_PROVENANCE), session.git_describe, session.version,
                           session.hostname, r.report]))
        params = by_params.get(r.params)
        if params is None:
            values = dict(r.params)
            params = by_params[r.params] = ("," + _csv_line([values.get(p, "") for p in param_names])
                                            if param_names else "")  # no parameter columns: nothing
        value = "" if r.value is None else repr(r.value)
        reference = r.reference if isinstance(r.reference, (int, float)) else words.get(r.reference) or word(r.reference)
        lines.append(f"{case[0]}{params},{case[1]},{words.get(r.figure) or word(r.figure)},{value},"
                     f"{words.get(r.unit) or word(r.unit)},{reference},{words.get(r.result) or word(r.result)},"
                     f"{case[2]}\r\n")
    handle.write("".join(lines))
