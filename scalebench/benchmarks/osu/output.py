"""Parser for OSU Micro-Benchmarks output (OMB 3.x to 7.x), host and CUDA/ROCm/OpenACC variants.

Every OMB program prints the same shape: a title ``# OSU MPI Bandwidth Test v5.9``
(``# OSU MPI-CUDA Latency Test v7.5`` for device builds), optional comment lines
(``# Datatype: MPI_CHAR.``, ``# [ pairs: 1 ] [ window size: 64 ]``, ``# Send Buffer on
DEVICE (D) ...``), an optional column header ``# Size  Bandwidth (MB/s)`` (several columns in
7.x: ``Avg Latency(us)  Min Latency(us)  Max Latency(us)  Iterations``; ``MB/s  Messages/s``
for osu_mbw_mr), then one row per message size. The primary metric is the first column after
Size; ``rows`` are its [size, value] pairs and ``other_columns`` keeps the rest. osu_barrier
prints no Size column (``# Avg Latency(us)`` then one bare value): its size is None.

A text holding several tables (outputs concatenated by a job script) reports the last table
with rows; ``n_tables`` says how many there were. Lines are matched with anchored, bounded
expressions, so parsing is linear in the text size.

A latency, bandwidth or rate that cannot be (not finite, negative, beyond its quantity's bound:
scalebench.parse._common.refusal) is null in ``rows`` or ``other_columns``, never a number a curve or
a peak is made of, and named in ``warnings``; so is a row whose minimum, average and maximum latency
are out of order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scalebench.errors import ParseError
from scalebench.parse._common import (VALUE, VALUE_RE, Value, complete_text, int_or_value, is_finite, lines_of,
                                      refused_or, to_value, with_note)

Row = tuple[int | None, Value | None]  # size is None in osu_barrier's size-less table; value None: refused

_TITLE_RE = re.compile(r"#[ \t]*OSU[ \t]+(.*)")
_VERSION_RE = re.compile(r"[ \t]v(\d{1,3}(?:\.\d{1,4}){0,3}[A-Za-z0-9]{0,8})$")
_PREFIX_RE = re.compile(r"(?:MPI|OpenSHMEM|UPC\+\+|UPC)(?:-[A-Za-z]{1,12})?[ \t]+")
_DATATYPE_RE = re.compile(r"#[ \t]*Datatype:[ \t]*([A-Za-z0-9_]{1,60})\.?")
_HEADER_RE = re.compile(r"#[ \t]*Size(?![A-Za-z])(.*)")
# osu_barrier has no message size: "# Avg Latency(us)" then one bare value.
_SIZELESS_HEADER_RE = re.compile(r"#[ \t]*((?:Avg[ \t]+)?Latency[ \t]*\(us\).*)")
_ROW_RE = re.compile(rf"(\d{{1,18}})[ \t]+({VALUE})(?:[ \t]+(.*))?")
_COLUMN_SPLIT_RE = re.compile(r"[ \t]{2,}|\t")
_UNIT_RE = re.compile(r"\(([^()]{1,20})\)")
_MAX_EXTRA = 30  # columns after Size and the primary metric; OMB prints at most a handful

PEAK_NOTE = (
    "for latency tests 'peak_value' is the maximum latency (largest message); "
    "min_latency_us is the small-message latency"
)

_COLLECTIVES = (
    "allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "alltoallw", "barrier",
    "bcast", "gather", "gatherv", "reduce", "reduce_scatter", "reduce_scatter_block",
    "scatter", "scatterv",
)
# Title (lower case, without the "OSU MPI[-CUDA] " prefix, "Test" and version) -> program.
_PROGRAMS: dict[str, str] = {
    "latency": "osu_latency",
    "bandwidth": "osu_bw",
    "bi-directional bandwidth": "osu_bibw",
    "multiple bandwidth / message rate": "osu_mbw_mr",
    "multi latency": "osu_multi_lat",
    "multi-threaded latency": "osu_latency_mt",
    "mpi_put latency": "osu_put_latency",
    "mpi_get latency": "osu_get_latency",
    "mpi_put bandwidth": "osu_put_bw",
    "mpi_get bandwidth": "osu_get_bw",
    "mpi_put bi-directional bandwidth": "osu_put_bibw",
    "mpi_accumulate latency": "osu_acc_latency",
    "mpi_get_accumulate latency": "osu_get_acc_latency",
    "mpi_fetch_and_op latency": "osu_fop_latency",
    "mpi_compare_and_swap latency": "osu_cas_latency",
}
for _name in _COLLECTIVES:
    _PROGRAMS[f"{_name} latency"] = f"osu_{_name}"
    _PROGRAMS[f"non-blocking {_name} latency"] = f"osu_i{_name}"


def _other_cell(token: str) -> Value:
    """An extra column's cell: int for counts (Iterations), float, or the text ("Pass")."""
    return int_or_value(token)


def _split_title(title_body: str) -> tuple[str | None, str | None]:
    """(program name, version) from the text after '# OSU'."""
    body = title_body.strip()
    version = None
    match = _VERSION_RE.search(body)
    if match:
        version = match.group(1)
        body = body[: match.start()].rstrip()
    prefix = _PREFIX_RE.match(body)
    if prefix:
        body = body[prefix.end():]
    words = body.lower().split()
    if words and words[-1] == "test":
        words = words[:-1]
    return _PROGRAMS.get(" ".join(words)), version


def _columns(header_rest: str) -> list[str]:
    """Column names: OMB separates them by two or more spaces (names contain single spaces)."""
    return [name for name in _COLUMN_SPLIT_RE.split(header_rest.strip()) if name]


def unit_of(metric: str | None) -> str | None:
    """'Bandwidth (MB/s)' -> 'MB/s', 'Avg Latency(us)' -> 'us', bare 'MB/s' -> 'MB/s'."""
    if not metric:
        return None
    units = _UNIT_RE.findall(metric)
    if units:
        return units[-1].strip()
    if "/" in metric and " " not in metric:
        return metric
    return None


def _unit_from_title(title: str | None) -> str | None:
    if title is None:
        return None
    lowered = title.lower()
    if "bandwidth" in lowered:
        return "MB/s"
    if "latency" in lowered:
        return "us"
    return None


def _extreme(rows: list[Row], pick: Any) -> tuple[float | None, int | None]:
    """(value, size) of the first row whose finite value equals pick() of all finite values."""
    finite = [(value, size) for size, value in rows if is_finite(value)]
    if not finite:
        return None, None
    best = pick(value for value, _ in finite)
    return next((value, size) for value, size in finite if value == best)


@dataclass
class _Table:
    title: str | None = None
    datatype: str | None = None
    columns: list[str] | None = None
    sizeless: bool = False
    rows: list[Row] = field(default_factory=list)
    extra: list[list[int | Value]] = field(default_factory=list)


@dataclass(frozen=True)
class OsuTable:
    """One benchmark table: title facts, columns and [size, primary value] rows.

    ``metric`` is the primary column name as printed (None without a column header) and
    ``unit`` its unit, taken from the header or, without one, from the title. For latency
    tables (unit us) ``peak_value`` is the largest latency and ``min_latency_us`` the
    smallest; for bandwidth tables ``peak_value`` is the best bandwidth. Ties go to the
    first row printed. osu_barrier's table has no Size column: its sizes are None.
    """

    title: str | None
    benchmark: str | None
    version: str | None
    datatype: str | None
    columns: tuple[str, ...] | None
    rows: tuple[Row, ...]
    other_columns: dict[str, list[int | Value | None]]
    n_tables: int
    cut_line: str | None = None  # complete_text's warning
    problems: tuple[str, ...] = ()  # values refused, latencies out of order

    @property
    def metric(self) -> str | None:
        first = 1 if self.columns and self.columns[0] == "Size" else 0
        return self.columns[first] if self.columns and len(self.columns) > first else None

    @property
    def unit(self) -> str | None:
        return unit_of(self.metric) if self.metric else _unit_from_title(self.title)

    @property
    def is_latency(self) -> bool:
        return self.unit == "us"

    def to_dict(self) -> dict[str, Any]:
        rows = list(self.rows)
        peak, peak_size = _extreme(rows, max)
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "title": self.title,
            "version": self.version,
            "datatype": self.datatype,
            "columns": list(self.columns) if self.columns is not None else None,
            "metric": self.metric,
            "unit": self.unit,
            "rows": [[size, value] for size, value in rows],
            "n_rows": len(rows),
            "peak_value": peak,
            "peak_at_size": peak_size,
            "other_columns": {name: list(values) for name, values in self.other_columns.items()},
            "n_tables": self.n_tables,
        }
        if self.is_latency:
            low, low_size = _extreme(rows, min)
            out["min_latency_us"] = low
            out["min_latency_at_size"] = low_size
            out["peak_note"] = PEAK_NOTE
        warnings = ([self.cut_line] if self.cut_line else []) + list(self.problems)
        if warnings:
            out["warnings"] = warnings
        return out


# Latency columns of OMB 7.x, in the order their values must be: min <= avg <= max.
_LATENCY_ORDER = ("Min Latency(us)", "Avg Latency(us)", "Max Latency(us)")


def _vet(table: _Table, metric: str | None, unit: str | None) -> list[str]:
    """Null every value of `table` that cannot be, and say why; also latencies out of order."""
    found: list[str] = []
    what = metric or "value"
    table.rows = [(size, refused_or(value, unit or "", f"{what} at size {size}", found))
                  for size, value in table.rows]
    skip = 1 if table.sizeless else 2
    names = list(table.columns[skip:]) if table.columns else []
    for index, name in enumerate(names):
        column_unit = unit_of(name)
        if column_unit is None:
            continue
        for row, (size, _) in zip(table.extra, table.rows):
            if index < len(row) and not isinstance(row[index], str):
                row[index] = refused_or(row[index], column_unit, f"{name} at size {size}", found)
    columns = dict(zip(names, range(len(names))))
    primary = metric if metric in _LATENCY_ORDER else None
    for (size, value), row in zip(table.rows, table.extra):
        cells = {name: row[i] for name, i in columns.items() if i < len(row)}
        if primary is not None:
            cells[primary] = value
        ordered = [cells[name] for name in _LATENCY_ORDER if is_finite(cells.get(name))]
        if len(ordered) >= 2 and any(a > b for a, b in zip(ordered, ordered[1:])):  # type: ignore[operator]
            found.append(f"at size {size}: min, average and max latency out of order ({', '.join(map(str, ordered))})")
    return found


def _freeze(table: _Table, n_tables: int, cut_line: str | None) -> OsuTable:
    benchmark, version = (None, None)
    if table.title is not None:
        match = _TITLE_RE.fullmatch(table.title)
        if match:
            benchmark, version = _split_title(match.group(1))
    width = max((len(values) for values in table.extra), default=0)
    skip = 1 if table.sizeless else 2
    names = list(table.columns[skip:]) if table.columns else []
    names += [f"column {i + 3}" for i in range(len(names), width)]
    metric_columns = table.columns or []
    first = 1 if metric_columns and metric_columns[0] == "Size" else 0
    metric = metric_columns[first] if len(metric_columns) > first else None
    problems = _vet(table, metric, unit_of(metric) if metric else _unit_from_title(table.title))
    other = {name: [values[i] if i < len(values) else None for values in table.extra]
             for i, name in enumerate(names)}
    return OsuTable(
        title=table.title,
        benchmark=benchmark,
        version=version,
        datatype=table.datatype,
        columns=tuple(table.columns) if table.columns is not None else None,
        rows=tuple(table.rows),
        other_columns=other,
        n_tables=n_tables,
        cut_line=cut_line,
        problems=tuple(problems),
    )


def parse_osu(text: str) -> OsuTable:
    """Parse OMB output; ParseError when no [size value] row is found. A last line without its line
    end is dropped, with a warning."""
    text, cut = complete_text(text)
    tables: list[_Table] = []

    def fresh() -> _Table:
        """The table a comment line belongs to: a new one once the current one has rows."""
        if not tables or tables[-1].rows:
            tables.append(_Table())
        return tables[-1]

    for line in lines_of(text):
        if line[0] == "#":
            if _TITLE_RE.fullmatch(line):
                tables.append(_Table(title=line))
                continue
            match = _DATATYPE_RE.fullmatch(line)
            if match:
                fresh().datatype = match.group(1)
                continue
            match = _HEADER_RE.fullmatch(line)
            if match:
                fresh().columns = ["Size"] + _columns(match.group(1))
                continue
            match = _SIZELESS_HEADER_RE.fullmatch(line)
            if match:
                table = fresh()
                table.columns, table.sizeless = _columns(match.group(1)), True
            continue
        if tables and tables[-1].sizeless:
            tokens = line.split(None, _MAX_EXTRA + 1)
            if len(tokens) <= _MAX_EXTRA + 1 and all(VALUE_RE.fullmatch(tok) for tok in tokens):
                tables[-1].rows.append((None, to_value(tokens[0])))
                tables[-1].extra.append([_other_cell(tok) for tok in tokens[1:]])
            continue
        match = _ROW_RE.fullmatch(line)
        if match:
            size, value, rest = match.groups()
            extra = rest.split(None, _MAX_EXTRA) if rest else []
            if len(extra) > _MAX_EXTRA:
                continue  # no OMB table is this wide: not a result row
            if not tables:
                tables.append(_Table())
            tables[-1].rows.append((int(size), to_value(value)))
            tables[-1].extra.append([_other_cell(tok) for tok in extra])

    with_rows = [table for table in tables if table.rows]
    if not with_rows:
        raise ParseError(with_note("no OSU result row (message size and value) found", cut))
    return _freeze(with_rows[-1], len(with_rows), cut)
