"""Results store: ReFrame run reports kept as written, read back into one tidy table.

A run directory (results/runs/<UTC time>-<host>-<pid>/) holds report.json, perflogs/, output/ and
reframe.log exactly as ReFrame wrote them; scalebench only reads them. Ingest turns every test case
x performance variable into a Record; a malformed or partial report is skipped with a warning that
names the file.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from scalebench.errors import ResultsError

# Check variables copied into every record as provenance (when the check defines them).
PROVENANCE_KEYS = ("deck_summary", "deck_source", "spack_lock", "n_policy", "blas_kernel",
                   "blas_kernel_used", "ceiling_warnings", "rpeak_derivation", "executable", "hpl_deck",
                   "job_nodelist")


@dataclass(frozen=True)
class Case:
    """One test case of one run, with its performance figures."""

    report: str  # path of the report.json it came from
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

    def figure(self, name: str) -> float | None:
        return self.figures.get(name, (None, ""))[0]


@dataclass(frozen=True)
class Record:
    """One tidy row: a case's figure with everything needed to group and compare it."""

    system: str
    partition: str
    stack: str
    benchmark: str
    case: str
    num_nodes: int | None
    num_tasks: int | None
    figure: str
    value: float | None
    unit: str
    reference: Any
    result: str
    report: str


@dataclass(frozen=True)
class Session:
    report: str
    start: str
    elapsed_s: float | None
    cases: list[Case]


def find_reports(paths: Iterable[str | Path]) -> list[Path]:
    """Every ReFrame JSON report under the given files/directories, in a stable order."""
    found: set[Path] = set()
    for entry in map(Path, paths):
        if not entry.exists():
            raise ResultsError(f"results: {entry} does not exist")
        if entry.is_file():
            found.add(entry)
            continue
        try:
            found.update(p for p in entry.rglob("*.json") if "stage" not in p.relative_to(entry).parts)
        except PermissionError as err:
            raise ResultsError(f"results: cannot read {err.filename}: permission denied") from err
    return sorted(found)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _case(testcase: dict[str, Any], report: Path, start: str) -> Case:
    figures, references = {}, {}
    for key, entry in (testcase.get("perfvalues") or {}).items():
        name = key.split(":")[-1]
        value, ref, lower, upper, unit = entry[:5]
        figures[name] = (_number(value), unit or "")
        references[name] = (ref, lower, upper)
    params = testcase.get("check_params") or {}
    if not params:  # ReFrame 4.x reports parameters as top-level keys listed in the name
        params = {p.split("=")[0]: testcase.get(p.split("=")[0])
                  for p in testcase.get("display_name", "").split(" %")[1:]}
    result = testcase.get("result") or "unknown"
    return Case(
        report=str(report), session_start=start,
        system=testcase["system"], partition=testcase["partition"], environ=testcase["environ"],
        stack=testcase.get("stack") or testcase["environ"],
        benchmark=testcase.get("name", "").split(" ")[0] or testcase.get("unique_name", ""),
        name=testcase.get("display_name") or testcase.get("name", ""),
        params=params, num_nodes=testcase.get("num_nodes"), num_tasks=testcase.get("num_tasks"),
        result=result, fail_phase=testcase.get("fail_phase"), fail_reason=testcase.get("fail_reason"),
        figures=figures, references=references,
        provenance={k: testcase[k] for k in PROVENANCE_KEYS if testcase.get(k) not in (None, "")},
        time_run_s=_number(testcase.get("time_run")),
    )


def load_session(path: Path) -> Session | None:
    """One report; None if the JSON is not a ReFrame run report. Raises ResultsError if it is broken."""
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise ResultsError(f"{path}: not readable JSON ({err})") from err
    if not isinstance(data, dict) or "session_info" not in data or "runs" not in data:
        return None
    start = str(data["session_info"].get("time_start", ""))
    try:
        # The last run holds the final outcome of retried cases; earlier runs are the retries.
        runs = data["runs"]
        final: dict[str, dict[str, Any]] = {}
        for run in runs:
            for testcase in run["testcases"]:
                final[testcase.get("unique_name") or testcase["name"]] = testcase
        cases = [_case(tc, path, start) for tc in final.values()]
    except (KeyError, TypeError, ValueError, IndexError) as err:
        raise ResultsError(f"{path}: malformed ReFrame report ({type(err).__name__}: {err})") from err
    elapsed = _number(data["session_info"].get("time_elapsed"))
    return Session(str(path), start, elapsed, cases)


def ingest(paths: Iterable[str | Path]) -> tuple[list[Session], list[str]]:
    """All sessions under `paths`, and one warning per report that had to be skipped."""
    sessions, warnings = [], []
    for path in find_reports(paths):
        try:
            session = load_session(path)
        except ResultsError as err:
            warnings.append(f"skipped {err}")
            continue
        if session is not None:
            sessions.append(session)
    return sessions, warnings


def records(sessions: Iterable[Session]) -> Iterator[Record]:
    for session in sessions:
        for case in session.cases:
            for name, (value, unit) in case.figures.items():
                yield Record(case.system, case.partition, case.stack, case.benchmark, case.name,
                             case.num_nodes, case.num_tasks, name, value, unit,
                             case.references.get(name, (None,))[0], case.result, case.report)
