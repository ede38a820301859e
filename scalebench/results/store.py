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
import io
import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

from scalebench import benchmarks
from scalebench.errors import ResultsError

try:  # run reports are large (100 MB for 100 000 figures): orjson parses them about 4x faster
    from orjson import loads as _fast_loads
except ImportError:  # the standard library gives the same values
    _fast_loads = json.loads  # type: ignore[assignment]


def _parse_json(data: bytes) -> Any:
    """JSON as Python's json module reads it. Python writes a NaN figure as the bare word NaN, which is
    not JSON: orjson refuses it, so such a file is read again by the standard library."""
    try:
        return _fast_loads(data)
    except ValueError:
        return json.loads(data)

# Check variables copied into every case as provenance (when the check defines them).
PROVENANCE_KEYS = ("deck_summary", "deck_source", "n_policy", "blas_kernel", "blas_kernel_used",
                   "ceiling_warnings", "rpeak_derivation", "executable", "hpl_deck", "job_nodelist",
                   "idle_ranks", "grid_reason", "scaling", "trials", "trial_gflops")
# Where a check or provenance.json may record the software stack's identity (Spack lock/spec hash).
SPEC_HASH_KEYS = ("spack_lock", "spack_lock_sha256", "lock_sha256", "spack_lock_hash", "spec_hash")
# Directories of a run that hold benchmark files, never run reports: not searched.
_NOT_SEARCHED = {"stage", "output"}
_PERF_FIELDS = ("perf_var", "perf_value", "perf_unit", "perf_ref", "perf_lower_thres", "perf_upper_thres",
                "perf_result")


@dataclass(frozen=True)
class Case:
    """One test case of one run, with its performance figures."""

    report: str  # path of the report.json (or perflog) it came from
    session_start: str
    system: str
    partition: str
    environ: str
    stack: str
    benchmark: str  # the check's class name
    name: str  # display name, with parameters
    params: dict[str, Any]
    num_nodes: int | None
    num_tasks: int | None
    result: str  # pass | fail | skip | abort
    fail_phase: str | None
    fail_reason: str | None
    figures: dict[str, tuple[float | None, str]]  # name -> (value, unit)
    references: dict[str, tuple[Any, Any, Any]]  # name -> (ref, lower, upper)
    provenance: dict[str, Any] = field(default_factory=dict)
    time_run_s: float | None = None
    job_interval: tuple[float, float] | None = None  # (submit, completion) UNIX times of its job
    cores: int | None = None  # num_tasks x cpus per task
    binary: str = ""
    nodelist: str = ""
    spec_hash: str = ""
    # A failed case: what the scheduler and MPI launcher wrote into its job output (see _job_messages).
    job_messages: tuple[str, ...] = ()

    def figure(self, name: str) -> float | None:
        return self.figures.get(name, (None, ""))[0]

    @property
    def measured(self) -> bool:
        """Its figures are measurements: it passed, or only missed a performance reference."""
        return self.result == "pass" or self.fail_phase == "performance"


@dataclass(frozen=True)
class Session:
    """One reframe invocation: its report (or perflogs) and what it says about where it ran."""

    report: str
    start: str
    elapsed_s: float | None
    cases: list[Case]
    hostname: str = ""
    version: str = ""  # ReFrame's
    cmdline: str = ""
    run_provenance: dict[str, Any] = field(default_factory=dict)  # the run directory's provenance.json
    source: str = "report"  # report | perflogs

    @property
    def git_describe(self) -> str:
        return str(self.run_provenance.get("git_describe") or "")


class Record(NamedTuple):
    """One tidy row: a case's figure with everything needed to group, compare and trace it.

    A NamedTuple, not a dataclass: ingest builds one per figure (100 000s) and tuples are cheap."""

    system: str
    partition: str
    stack: str
    benchmark: str
    case: str
    params: tuple[tuple[str, Any], ...]  # sorted (name, value) pairs, incl. msg_size of sized figures
    num_nodes: int | None
    num_tasks: int | None
    cores: int | None
    figure: str
    value: float | None
    unit: str
    reference: Any
    result: str
    report: str
    usable: bool  # a measured value (see Case.measured)
    origin: Case
    session: Session

    def param(self, name: str) -> Any:
        for key, value in self.params:
            if key == name:
                return value
        return None


def _walk(entry: Path) -> Iterator[Path]:
    """Files under `entry`, skipping the benchmark-file trees of run directories."""
    for root, dirs, files in os.walk(entry, onerror=_raise_unreadable):
        dirs[:] = sorted(d for d in dirs if d not in _NOT_SEARCHED)
        for name in files:
            yield Path(root, name)


def _raise_unreadable(err: OSError) -> None:
    raise ResultsError(f"results: cannot read {err.filename}: {err.strerror}")


def find_sources(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """(JSON files that may be run reports, perflog files) under the given files/directories."""
    reports: set[Path] = set()
    perflogs: set[Path] = set()
    for entry in map(Path, paths):
        if not entry.exists():
            raise ResultsError(f"results: {entry} does not exist")
        for path in [entry] if entry.is_file() else _walk(entry):
            if path.suffix == ".json" and path.name != "provenance.json":
                reports.add(path)
            elif path.suffix == ".log" and (entry.is_file() or "perflogs" in path.parts):
                perflogs.add(path)
    return sorted(reports), sorted(perflogs)


def find_reports(paths: Iterable[str | Path]) -> list[Path]:
    """Every ReFrame JSON report under the given files/directories, in a stable order."""
    return find_sources(paths)[0]


_NUMERIC = (int, float)  # exact types: a bool is no measurement


def _number(value: Any) -> float | None:
    """A finite number, else None: a NaN or infinite figure is no measurement."""
    return float(value) if type(value) in _NUMERIC and math.isfinite(value) else None


def _int(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _nodelist(value: Any) -> str:
    return ",".join(map(str, value)) if isinstance(value, list) else str(value or "")


def _spec_hash(*sources: dict[str, Any]) -> str:
    return next((str(s[k]) for s in sources for k in SPEC_HASH_KEYS if s.get(k)), "")


def _interval(start: Any, end: Any) -> tuple[float, float] | None:
    start, end = _number(start), _number(end)
    return (start, end) if start is not None and end is not None and end >= start else None


def _params_from_name(display_name: str) -> list[str]:
    """Parameter names of a ReFrame 4.x display name: 'HPLCheck %scale=1_core %nb=192'."""
    return [part.split("=")[0] for part in display_name.split(" %")[1:]]


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
            with open(stage / name, "rb") as handle:
                handle.seek(max(0, os.fstat(handle.fileno()).st_size - _JOB_OUTPUT_TAIL))
                text = handle.read().decode(errors="replace")
        except OSError:
            continue
        for match in _JOB_MESSAGE.finditer(text):
            found.setdefault(match.group(0).strip(), None)
    return tuple(found)[:JOB_MESSAGES_MAX]


def _case(testcase: dict[str, Any], report: str, start: str, run_provenance: dict[str, Any]) -> Case:
    figures, references = {}, {}
    for key, entry in (testcase.get("perfvalues") or {}).items():
        # [value, ref, lower, upper, unit, result]. Once per figure: _number is inlined.
        name, value = key.rpartition(":")[2], entry[0]
        figures[name] = (float(value) if type(value) in _NUMERIC and math.isfinite(value) else None, entry[4] or "")
        references[name] = (entry[1], entry[2], entry[3])
    params = testcase.get("check_params") or {}
    if not params:  # ReFrame 4.x reports parameters as top-level keys listed in the name
        params = {p: testcase.get(p) for p in _params_from_name(testcase.get("display_name", ""))}
    num_tasks = _int(testcase.get("num_tasks"))
    cpus = _int(testcase.get("num_cpus_per_task")) or 1
    return Case(
        report=report, session_start=start,
        system=testcase["system"], partition=testcase["partition"], environ=testcase["environ"],
        stack=testcase.get("stack") or testcase["environ"],
        benchmark=testcase.get("name", "").split(" ")[0] or testcase.get("unique_name", ""),
        name=testcase.get("display_name") or testcase.get("name", ""),
        params=params, num_nodes=_int(testcase.get("num_nodes")), num_tasks=num_tasks,
        result=testcase.get("result") or "unknown",
        fail_phase=testcase.get("fail_phase"), fail_reason=testcase.get("fail_reason"),
        figures=figures, references=references,
        provenance={k: testcase[k] for k in PROVENANCE_KEYS if testcase.get(k) not in (None, "")},
        time_run_s=_number(testcase.get("time_run")),
        job_interval=_interval(testcase.get("job_submit_time"), testcase.get("job_completion_time_unix")),
        cores=num_tasks * cpus if num_tasks else None,
        binary=str(testcase.get("hpl_binary") or testcase.get("executable") or ""),
        nodelist=_nodelist(testcase.get("job_nodelist")),
        spec_hash=_spec_hash(testcase, run_provenance),
        job_messages=_job_messages(testcase, report) if testcase.get("result") not in ("pass", "skip") else (),
    )


def _run_provenance(run_dir: Path, warnings: list[str]) -> dict[str, Any]:
    """The run directory's provenance.json (written by `scalebench run`), {} when absent."""
    path = run_dir / "provenance.json"
    if not path.is_file():
        return {}
    try:
        data = _parse_json(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        warnings.append(f"ignored {path}: not readable JSON ({err})")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"ignored {path}: expected a JSON object")
        return {}
    return data


# ReFrame's run report has no skip reason; its log has, e.g.
# "[     SKIP ] (1/8) NetPIPECheck %placement=inter_node /02dbaacd @local:default+mpich [needs 2 nodes]".
_SKIP_LINE = re.compile(r"\bSKIP\S*\s*\] \(\s*\d+/\d+\) (?P<name>.+?) /[0-9a-f]+ "
                        r"@(?P<system>[^:\s]+):(?P<partition>[^+\s]+)\+(?P<environ>\S+) \[(?P<reason>.*)\]\s*$", re.M)


def skip_reasons(log: Path) -> dict[tuple[str, str, str, str], str]:
    """{(case name, system, partition, environ): reason} from a run's reframe.log; {} without one."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return {}
    return {(m["name"], m["system"], m["partition"], m["environ"]): m["reason"] for m in _SKIP_LINE.finditer(text)}


def load_session(path: Path, warnings: list[str] | None = None) -> Session | None:
    """One report; None if the JSON is not a ReFrame run report. Raises ResultsError if it is broken."""
    try:
        data = _parse_json(path.read_bytes())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ResultsError(f"{path}: not readable JSON ({err})") from err
    if not isinstance(data, dict) or "session_info" not in data or "runs" not in data:
        return None
    info = data["session_info"]
    start = str(info.get("time_start", ""))
    run_provenance = _run_provenance(path.parent, warnings if warnings is not None else [])
    try:
        # The last run holds the final outcome of retried cases; earlier runs are the retries. A case
        # is a check variant on one partition and environment (one check runs on several stacks).
        final: dict[tuple[str, ...], dict[str, Any]] = {}
        for run in data["runs"]:
            for testcase in run["testcases"]:
                final[(testcase.get("unique_name") or testcase["name"], str(testcase.get("system")),
                       str(testcase.get("partition")), str(testcase.get("environ")))] = testcase
        report = str(path)
        cases = [_case(tc, report, start, run_provenance) for tc in final.values()]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
        raise ResultsError(f"{path}: malformed ReFrame report ({type(err).__name__}: {err})") from err
    if any(c.result == "skip" and not c.fail_reason for c in cases):
        reasons = skip_reasons(path.parent / "reframe.log")
        cases = [replace(c, fail_reason=reasons.get((c.name, c.system, c.partition, c.environ)))
                 if c.result == "skip" and not c.fail_reason else c for c in cases]
    return Session(str(path), start, _number(info.get("time_elapsed")), cases,
                   hostname=str(info.get("hostname") or ""), version=str(info.get("version") or ""),
                   cmdline=str(info.get("cmdline") or ""), run_provenance=run_provenance)


# --- perflogs (the fallback when a run has no usable report) ---------------------------------------

def _perflog_value(text: str) -> Any:
    if text in ("null", "None", ""):
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _perflog_rows(path: Path, warnings: list[str]) -> list[dict[str, str]]:
    """The lines of one pipe-separated perflog as dicts keyed by its header; torn lines skipped."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as err:
        warnings.append(f"skipped {path}: {err.strerror}")
        return []
    if not lines or "perf_var" not in lines[0].split("|"):
        warnings.append(f"skipped {path}: not a scalebench perflog (no header with perf_var)")
        return []
    header = lines[0].split("|")
    rows, torn = [], 0
    for line in lines[1:]:
        cells = line.split("|")
        if len(cells) != len(header):
            torn += 1
            continue
        rows.append(dict(zip(header, cells)))
    if torn:
        warnings.append(f"{path}: skipped {torn} incomplete line(s)")
    return rows


def _perflog_case(rows: list[dict[str, str]], path: Path, run_provenance: dict[str, Any]) -> Case:
    first = rows[0]
    name = first.get("display_name", "")
    figures = {r["perf_var"]: (_number(_perflog_value(r["perf_value"])), r.get("perf_unit", ""))
               for r in rows}
    references = {r["perf_var"]: tuple(_perflog_value(r.get(k, "")) for k in _PERF_FIELDS[3:6]) for r in rows}
    num_tasks = _int(_perflog_value(first.get("num_tasks", "")))
    cpus = _int(_perflog_value(first.get("num_cpus_per_task", ""))) or 1
    return Case(
        report=str(path), session_start=first.get("job_completion_time", ""),
        system=first["system"], partition=first["partition"], environ=first.get("environ", ""),
        stack=first.get("stack") or first.get("environ", ""), benchmark=name.split(" ")[0],
        name=name, params={p: first.get(p) for p in _params_from_name(name)},
        num_nodes=_int(_perflog_value(first.get("num_nodes", ""))), num_tasks=num_tasks,
        result=first.get("result") or "unknown", fail_phase=None, fail_reason=None,
        figures=figures, references=references,  # type: ignore[arg-type]
        provenance={k: first[k] for k in PROVENANCE_KEYS if first.get(k) not in (None, "", "null")},
        cores=num_tasks * cpus if num_tasks else None, nodelist=first.get("job_nodelist", ""),
        spec_hash=_spec_hash(first, run_provenance))


def load_perflogs(run_dir: Path, files: Sequence[Path], warnings: list[str]) -> Session | None:
    """A session rebuilt from a run's perflog lines: one case per (time, case, system, partition)."""
    run_provenance = _run_provenance(run_dir, warnings)
    grouped: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for path in files:
        for row in _perflog_rows(path, warnings):
            key = tuple(row.get(k, "") for k in ("job_completion_time", "display_name", "system", "partition",
                                                 "environ"))
            grouped.setdefault(key, []).append(row)
    try:
        cases = [_perflog_case(rows, files[0], run_provenance) for rows in grouped.values()]
    except KeyError as err:
        warnings.append(f"skipped perflogs of {run_dir}: no {err} column")
        return None
    if not cases:
        return None
    start = min(c.session_start for c in cases)
    return Session(str(run_dir / "perflogs"), start, None, cases, run_provenance=run_provenance,
                   source="perflogs")


def _run_dir_of(perflog: Path) -> Path:
    """results/runs/<run>/perflogs/<system>/<partition>/<check>.log -> results/runs/<run>."""
    parts = perflog.parts
    return Path(*parts[:len(parts) - 1 - parts[::-1].index("perflogs")]) if "perflogs" in parts else perflog.parent


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
    report_files, perflog_files = find_sources(paths)
    sessions: list[Session] = []
    warnings: list[str] = []
    reported: set[Path] = set()  # run directories whose report.json was read
    for path in report_files:
        try:
            session = load_session(path, warnings)
        except ResultsError as err:
            warnings.append(f"skipped {err}")
            continue
        if session is not None:
            sessions.append(session)
            reported.add(path.parent)
    by_run: dict[Path, list[Path]] = {}
    for path in perflog_files:
        by_run.setdefault(_run_dir_of(path), []).append(path)
    for run_dir, files in sorted(by_run.items()):
        if run_dir in reported:
            continue  # the report holds the same figures, and more
        session = load_perflogs(run_dir, files, warnings)
        if session is not None:
            warnings.append(f"{run_dir}: no usable report.json (run interrupted or still going): "
                            f"read {sum(len(c.figures) for c in session.cases)} figure(s) from its perflogs")
            sessions.append(session)
    return sessions, warnings


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
CSV_TRAILING = ("num_nodes", "num_tasks", "cores", "figure", "value", "unit", "reference", "result",
                "spec_hash", "deck", "binary", "nodelist", "git_describe", "reframe_version", "hostname",
                "report")


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
                _csv_line([c.spec_hash, c.provenance.get("deck_summary", ""), c.binary, c.nodelist,
                           session.git_describe, session.version, session.hostname, r.report]))
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
