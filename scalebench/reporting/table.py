"""The results as columns: every session, case and figure ingest vetted, in three polars frames that the
report, acceptance and the bake-off query (references and screening read the Case objects of the cases
they need, made from them), and that the index keeps (scalebench.reporting.index).

Why polars: ReFrame 4.10 already depends on it (pinned in requirements.txt, with wheels for every
supported Python on x86_64 and aarch64), so it adds no dependency to install or keep up; its Rust
group-by and median run on all cores, and it reads and writes Parquet itself (no pyarrow). DuckDB or
pyarrow would add a large binary wheel per platform to pin and test, and DuckDB a second query language
(SQL) for the same few group-bys.

A year of nightly runs is ~1 000 000 figures and ~200 000 cases: Python loops over them were most of a
report's time. Here a loop runs per distinct value (a parameter combination, a deck, a provenance
text), and Case objects are made only for the few cases a section lists (Table.materialize).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Callable, Iterable, NamedTuple, Sequence, TypeVar

import polars as pl

from scalebench import registry
from scalebench.reporting.records import Case, Session
from scalebench.validation import is_number

# Provenance kept as text columns (what str() of the value shows, "" when absent): the report's
# appendix and CSV columns and the transport section read them for every case.
_REGISTRY = registry.provenance()
_KEPT_IN = {f.name: f.into for f in _REGISTRY.fields.values() if f.into}
SHOWN = tuple(dict.fromkeys(name for name in (*(f.name for f in _REGISTRY.appendix),
                                             *(f.name for _, f in _REGISTRY.csv),
                                             "transport", "transport_evidence", "fabric")
                            if _KEPT_IN.get(name) == "provenance"))

SESSION_SCHEMA: dict[str, Any] = {
    "session": pl.UInt32, "report": pl.Utf8, "start": pl.Utf8, "elapsed_s": pl.Float64, "hostname": pl.Utf8,
    "version": pl.Utf8, "cmdline": pl.Utf8, "run_provenance": pl.Utf8, "git_describe": pl.Utf8, "source": pl.Utf8,
    "identity": pl.Utf8,
}
CASE_SCHEMA: dict[str, Any] = {
    "case": pl.UInt32, "session": pl.UInt32, "report": pl.Utf8, "session_start": pl.Utf8, "system": pl.Utf8,
    "partition": pl.Utf8, "environ": pl.Utf8, "stack": pl.Utf8, "benchmark": pl.Utf8, "name": pl.Utf8,
    "params": pl.Utf8, "num_nodes": pl.Int64, "num_tasks": pl.Int64, "cores": pl.Int64, "result": pl.Utf8,
    "fail_phase": pl.Utf8, "fail_reason": pl.Utf8, "provenance": pl.Utf8, "time_run_s": pl.Float64,
    "job_submit": pl.Float64, "job_end": pl.Float64, "binary": pl.Utf8, "nodelist": pl.Utf8, "spec_hash": pl.Utf8,
    "job_messages": pl.List(pl.Utf8), "measured": pl.Boolean, "hpl_deck": pl.Utf8,
    **{f"shown_{name}": pl.Utf8 for name in SHOWN},
}
RECORD_SCHEMA: dict[str, Any] = {
    "case": pl.UInt32, "perf_var": pl.Utf8, "figure": pl.Utf8, "msg_size": pl.Int64, "value": pl.Float64,
    "unit": pl.Utf8, "references": pl.Utf8, "reference": pl.Utf8, "ref": pl.Float64, "lower": pl.Float64,
    "upper": pl.Float64, "usable": pl.Boolean,
}


try:  # orjson writes a case's provenance 20x faster than the standard library
    from orjson import dumps as _fast_dumps, loads as _fast_loads
except ImportError:  # the standard library's is the same JSON
    _fast_dumps = None  # type: ignore[assignment]


def dumps(value: Any) -> str:
    """JSON that reads back as the same Python value (NaN and infinity, lone surrogates and key order
    kept). orjson's where it reads back equal (a year of nightly runs is 200 000 cases to write), else the
    standard library's: orjson writes NaN and infinity as null and refuses lone surrogates, integers
    beyond 64 bits and keys that are no text."""
    if _fast_dumps is not None:
        try:
            text = _fast_dumps(value)
        except TypeError:  # orjson.JSONEncodeError
            pass
        else:
            if _fast_loads(text) == value:
                return text.decode()
    return json.dumps(value, separators=(",", ":"))


def shown(value: Any) -> str:
    """A value as a report cell shows it (what csv and str() write), "" when absent."""
    return "" if value is None else str(value)


def _number(value: Any) -> float | None:
    return float(value) if is_number(value) else None


def _frame(columns: dict[str, list[Any]], schema: dict[str, Any]) -> pl.DataFrame:
    try:
        return pl.DataFrame(columns, schema=schema)
    except UnicodeEncodeError:  # a lone surrogate (Python's json reads "\ud800"): no UTF-8 text holds one
        return pl.DataFrame({name: [_utf8(v) for v in values] for name, values in columns.items()}, schema=schema)


def _utf8(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return [_utf8(v) for v in value] if isinstance(value, list) else value


def hashable(value: Any) -> Any:
    """A parameter value as a dict key or sort key: a list or mapping as its JSON."""
    return value if isinstance(value, (str, int, float, bool, type(None))) else json.dumps(value, sort_keys=True)


def _reference(ref: tuple[Any, Any, Any]) -> Any:
    # ReFrame writes (0, None, None) when a check has no reference for a figure.
    return None if ref[0] == 0 and ref[1] is None and ref[2] is None else ref[0]


@dataclass(frozen=True)
class Table:
    """sessions (one row each), cases (one row each, `session` their session's row) and records (one row
    per figure, `case` its case's row), in the order ingest read them."""

    sessions: pl.DataFrame
    cases: pl.DataFrame
    records: pl.DataFrame

    @property
    def session_count(self) -> int:
        return self.sessions.height

    @property
    def record_count(self) -> int:
        return self.records.height

    def with_cases(self) -> pl.DataFrame:
        """Records with their case's columns (and the session's start as run_start)."""
        return self.records.join(self.cases, on="case", how="left", maintain_order="left")

    def materialize(self, cases: pl.Expr | None = None) -> list[Session]:
        """Sessions holding the cases that match `cases` (an expression on the cases frame; None: every
        case), as ingest made them; sessions without such cases are left out."""
        made = self.cases_by_id(cases)
        by_session: dict[int, list[Case]] = {}
        for session, case in made.values():
            by_session.setdefault(session, []).append(case)
        sessions = self.sessions.filter(pl.col("session").is_in(list(by_session)))
        return [Session(s["report"], s["start"], s["elapsed_s"], by_session[s["session"]], hostname=s["hostname"],
                        version=s["version"], cmdline=s["cmdline"], run_provenance=json.loads(s["run_provenance"]),
                        source=s["source"], identity=s["identity"])
                for s in sessions.iter_rows(named=True)]

    def cases_by_id(self, cases: pl.Expr | None = None) -> dict[int, tuple[int, Case]]:
        """{case row: (session row, Case)} of the cases matching `cases`, in order."""
        rows = self.cases if cases is None else self.cases.filter(cases)
        figures: dict[int, dict[str, tuple[float | None, str]]] = {}
        references: dict[int, dict[str, tuple[Any, ...]]] = {}
        read: dict[str, tuple[Any, ...]] = {}  # a year of figures holds a few distinct references: each read once
        wanted = self.records.join(rows.select("case"), on="case", how="semi", maintain_order="left")
        for case, name, value, unit, refs in wanted.select("case", "perf_var", "value", "unit",
                                                           "references").iter_rows():
            figures.setdefault(case, {})[name] = (value, unit)
            found = read.get(refs)
            if found is None:
                found = read[refs] = tuple(json.loads(refs))
            references.setdefault(case, {})[name] = found
        out: dict[int, tuple[int, Case]] = {}
        for row in rows.iter_rows(named=True):
            interval = (row["job_submit"], row["job_end"]) if row["job_submit"] is not None else None
            out[row["case"]] = (row["session"], Case(
                report=row["report"], session_start=row["session_start"], system=row["system"],
                partition=row["partition"], environ=row["environ"], stack=row["stack"], benchmark=row["benchmark"],
                name=row["name"], params=json.loads(row["params"]), num_nodes=row["num_nodes"],
                num_tasks=row["num_tasks"], result=row["result"], fail_phase=row["fail_phase"],
                fail_reason=row["fail_reason"], figures=figures.get(row["case"], {}),
                references=references.get(row["case"], {}), provenance=json.loads(row["provenance"]),
                time_run_s=row["time_run_s"], job_interval=interval, cores=row["cores"], binary=row["binary"],
                nodelist=row["nodelist"], spec_hash=row["spec_hash"], job_messages=tuple(row["job_messages"])))
        return out


_Made = TypeVar("_Made")


def per_table(derive: Callable[[Table], _Made]) -> Callable[[Table], _Made]:
    """`derive`, computed once for the table it was last given: a report's parts ask for the same
    derived figures (HPL lines, noise verdicts) several times, and a year of runs makes that seconds."""
    last: list[Any] = [None, None]

    @functools.wraps(derive)
    def once(results: Table) -> _Made:
        if last[0] is not results:
            last[:] = [results, derive(results)]
        return last[1]
    return once


def empty() -> Table:
    return Table(pl.DataFrame(schema=SESSION_SCHEMA), pl.DataFrame(schema=CASE_SCHEMA),
                 pl.DataFrame(schema=RECORD_SCHEMA))


_PLAIN = (int, float, str, type(None))  # a reference of these alone is read once per distinct value


def _columns(rows: list[tuple[Any, ...]], schema: dict[str, Any]) -> dict[str, list[Any]]:
    """Row tuples as the schema's columns."""
    return {name: list(column) for name, column in zip(schema, zip(*rows))} if rows else {name: [] for name in schema}


def from_sessions(sessions: Sequence[Session]) -> Table:
    """The columns of sessions ingest made (from run reports or perflogs). Built as row tuples turned into
    columns at the end: a year of nightly runs is a million figures, and a dozen appends each were most
    of the time."""
    s_rows: list[tuple[Any, ...]] = []
    c_rows: list[tuple[Any, ...]] = []
    r_rows: list[tuple[Any, ...]] = []
    split: dict[tuple[str, str], tuple[str, int | None]] = {}  # (benchmark, figure name) -> (figure, size)
    # (reference, the types of its values) -> its columns: 1 and 1.0 are equal keys, not the same reference
    references_text: dict[tuple[Any, ...], tuple[str, str, float | None, float | None, float | None]] = {}
    for s_id, session in enumerate(sessions):
        s_rows.append((s_id, session.report, session.start, session.elapsed_s, session.hostname, session.version,
                       session.cmdline, dumps(session.run_provenance), session.git_describe, session.source,
                       session.identity))
        for case in session.cases:
            c_id = len(c_rows)
            provenance = case.provenance
            deck = provenance.get("hpl_deck")
            interval = case.job_interval or (None, None)
            c_rows.append((c_id, s_id, case.report, case.session_start, case.system, case.partition, case.environ,
                           case.stack, case.benchmark, case.name, dumps(case.params), case.num_nodes, case.num_tasks,
                           case.cores, case.result, case.fail_phase, case.fail_reason, dumps(provenance),
                           case.time_run_s, interval[0], interval[1], case.binary, case.nodelist, case.spec_hash,
                           list(case.job_messages), case.measured, dumps(deck) if isinstance(deck, dict) else None,
                           *(shown(provenance.get(name)) for name in SHOWN)))
            bench = None
            measured = case.measured
            for name, (value, unit) in case.figures.items():
                key = (case.benchmark, name)
                parts = split.get(key)
                if parts is None:
                    bench = bench or registry.lookup(case.benchmark)
                    sized = registry.split_sized(bench, name) if bench.sized else None
                    parts = split[key] = (name, None) if sized is None else sized
                ref = case.references[name]
                try:
                    known: tuple[Any, ...] | None = (ref, tuple(map(type, ref)))
                    refs = references_text.get(known)  # type: ignore[arg-type]
                except TypeError:  # a list or a mapping in it: read each time
                    known, refs = None, None
                if refs is None:
                    reference = _reference(ref)
                    refs = (dumps(list(ref)), shown(reference), _number(ref[0]), _number(ref[1]), _number(ref[2]))
                    if known is not None and type(ref) is tuple and all(t in _PLAIN for t in known[1]):
                        references_text[known] = refs
                r_rows.append((c_id, name, parts[0], parts[1], value, unit, *refs, measured and value is not None))
    return Table(_frame(_columns(s_rows, SESSION_SCHEMA), SESSION_SCHEMA),
                 _frame(_columns(c_rows, CASE_SCHEMA), CASE_SCHEMA),
                 _frame(_columns(r_rows, RECORD_SCHEMA), RECORD_SCHEMA))


def concat(parts: Iterable[Table]) -> Table:
    """The tables one after the other, session and case rows renumbered."""
    sessions, cases, records = [], [], []
    s_offset = c_offset = 0
    for part in parts:
        sessions.append(part.sessions.with_columns(pl.col("session") + s_offset))
        cases.append(part.cases.with_columns(pl.col("case") + c_offset, pl.col("session") + s_offset))
        records.append(part.records.with_columns(pl.col("case") + c_offset))
        s_offset += part.sessions.height
        c_offset += part.cases.height
    if not sessions:
        return empty()
    return Table(pl.concat(sessions), pl.concat(cases), pl.concat(records))


def exact_median(column: str | pl.Expr) -> pl.Expr:
    """statistics.median of a group's values (nulls left out), computed as it does ((a + b) / 2 of the
    two middle ones), so that the digits are those Python gives; null for no value."""
    values = (pl.col(column) if isinstance(column, str) else column).drop_nulls().sort()
    count = values.len()
    low, high = values.get((count - 1) // 2, null_on_oob=True), values.get(count // 2, null_on_oob=True)
    return pl.when(count % 2 == 1).then(high).otherwise((low + high) / 2)


class FigureUnit(NamedTuple):
    benchmark: str
    figure: str
    unit: str


def figure_units(results: Table) -> list[FigureUnit]:
    """Each (benchmark, figure) the results hold, with the unit of its first figure, in order: what a
    thresholds file's names are checked against (acceptance.load)."""
    rows = results.records.select("case", "figure", "unit").join(
        results.cases.select("case", "benchmark"), on="case", how="left", maintain_order="left")
    return [FigureUnit(*row) for row in rows.unique(["benchmark", "figure"], keep="first", maintain_order=True)
            .select("benchmark", "figure", "unit").iter_rows()]
