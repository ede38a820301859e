"""Parser for Intel MPI Benchmarks output (IMB-MPI1/EXT/NBC/RMA, IMB 3.2 to 2021).

IMB prints a banner (``Intel(R) MPI Benchmarks 2021.3, MPI-1 part``), the
``# List of Benchmarks to run:`` listing, then one block per benchmark and process count::

    # Benchmarking PingPong
    # #processes = 2
    #-----------------------------
           #bytes #repetitions      t[usec]   Mbytes/sec
                0         1000         1.68         0.00

Columns differ by benchmark (``t[usec] Mbytes/sec`` for PingPong/PingPing,
``t_min[usec] t_max[usec] t_avg[usec]`` for collectives, plus ``Mbytes/sec`` for
Sendrecv/Exchange, no ``#bytes`` for Barrier), so each block keeps its own column names and
rows are dicts keyed by them. A row counts only when it has exactly one number per column:
lines the MPI library interleaves are skipped without ending the table. IMB-EXT's
``MODE: AGGREGATE`` / ``NON-AGGREGATE`` tables become separate blocks with a ``mode`` key.

A time or rate that cannot be (not finite, negative, beyond its quantity's bound:
scalebench.parse._common.refusal) is null in its row, and a row whose t_min, t_avg and t_max are
out of order is named; both in ``warnings``. A #processes of 0 is no process count (null).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scalebench.errors import ParseError
from scalebench.parse._common import (VALUE_RE, TypedValue, complete_text, finite_max, finite_min, is_finite,
                                      lines_of, parse_int, refused_or, to_value, with_note)

Value = TypedValue

_VERSION_RE = re.compile(
    r"#?[ \t]*Intel[ \t]?\(R\)[ \t]+MPI[ \t]+Benchmarks?(?:[ \t]+Suite)?[ \t]+V?(\d[^,]{0,40}),"
)
_BENCHMARKING_RE = re.compile(r"#[ \t]*Benchmarking[ \t]+(\S{1,100})")
_PROCESSES_RE = re.compile(r"#[ \t]*#processes[ \t]*=[ \t]*(\d{1,9})")
_MODE_RE = re.compile(r"#[ \t]*MODE:[ \t]*([A-Za-z_-]{1,40})")
_LISTED_RE = re.compile(r"#[ \t]*([A-Za-z][A-Za-z0-9_-]{0,60})")
_INT_COLUMNS = ("#bytes", "#repetitions")
# The unit of a measured column, by how its name ends ("t_avg[usec]", "Mbytes/sec", "overlap[%]").
_COLUMN_UNITS = (("[usec]", "us"), ("Mbytes/sec", "MB/s"), ("Msg/sec", "msg/s"), ("[%]", "%"))
_TIME_ORDER = ("t_min[usec]", "t_avg[usec]", "t_max[usec]")
_PRINTED_STEP = 0.01  # IMB prints times with two decimals
_MAX_COLUMNS = 32  # IMB tables have at most eight columns
_FINALIZE = "# All processes entering MPI_Finalize"
_LIST_START = "# List of Benchmarks to run:"


def _cell(column: str, token: str) -> Value | None:
    """The typed value of one cell, or None when the token does not fit the column."""
    if column in _INT_COLUMNS:
        return parse_int(token)
    if VALUE_RE.fullmatch(token):
        return to_value(token)
    return None


def latency_column(columns: tuple[str, ...]) -> str | None:
    """t_avg[usec] for collectives, t[usec] for PingPong; else the first *[usec] column."""
    for wanted in ("t_avg[usec]", "t[usec]"):
        if wanted in columns:
            return wanted
    return next((c for c in columns if c.endswith("[usec]")), None)


@dataclass(frozen=True)
class ImbBlock:
    """One benchmark at one process count.

    ``min_latency_usec`` is the smallest latency-column value over rows with #bytes > 0 (all
    rows when the table has no #bytes column, as for Barrier): the 0-byte row of a
    collective measures no data movement. ``peak_mbytes_per_sec`` exists only for tables
    with a Mbytes/sec column.
    """

    benchmark: str | None
    processes: int | None
    columns: tuple[str, ...]
    rows: tuple[dict[str, Value], ...]
    mode: str | None = None

    @property
    def latency_column_used(self) -> str | None:
        return latency_column(self.columns)

    @property
    def min_latency_usec(self) -> float | None:
        column = self.latency_column_used
        if column is None:
            return None
        return finite_min(
            row[column]
            for row in self.rows
            if "#bytes" not in row or row["#bytes"] > 0  # type: ignore[operator]
        )

    @property
    def peak_mbytes_per_sec(self) -> float | None:
        return finite_max(row.get("Mbytes/sec") for row in self.rows)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "benchmark": self.benchmark,
            "processes": self.processes,
            "rows": [dict(row) for row in self.rows],
            "columns": list(self.columns),
            "n_rows": len(self.rows),
        }
        if "Mbytes/sec" in self.columns:
            out["peak_mbytes_per_sec"] = self.peak_mbytes_per_sec
        out["min_latency_usec"] = self.min_latency_usec
        out["latency_column_used"] = self.latency_column_used
        if self.mode is not None:
            out["mode"] = self.mode
        return out


@dataclass(frozen=True)
class ImbOutput:
    """All blocks in print order; ``benchmarks_listed`` is None without a listing."""

    imb_version: str | None
    benchmarks_listed: tuple[str, ...] | None
    blocks: tuple[ImbBlock, ...]
    finalize_line: bool
    cut_line: str | None = None  # complete_text's warning
    problems: tuple[str, ...] = ()  # values refused, times out of order

    def to_dict(self) -> dict[str, Any]:
        listed = self.benchmarks_listed
        out: dict[str, Any] = {
            "imb_version": self.imb_version,
            "benchmarks_listed": list(listed) if listed is not None else None,
            "blocks": [block.to_dict() for block in self.blocks],
            "finalize_line": self.finalize_line,
        }
        warnings = ([self.cut_line] if self.cut_line else []) + list(self.problems)
        if warnings:
            out["warnings"] = warnings
        return out


def _column_unit(column: str) -> str | None:
    return next((unit for end, unit in _COLUMN_UNITS if column.endswith(end)), None)


def _vet(block: "_Block", refused: list[str]) -> None:
    """Null each cell of `block` that cannot be and name it; name rows whose times are out of order."""
    name = f"{block.benchmark or 'table'}" + (f" on {block.processes} processes" if block.processes else "")
    if block.processes == 0:
        refused.append(f"{name}: #processes = 0 is no process count: dropped")
        block.processes = None
    for row in block.rows:
        where = f"{name}, {row['#bytes']} bytes" if "#bytes" in row else name
        for column, value in row.items():
            unit = _column_unit(column)
            if unit is not None or not (isinstance(value, int) or is_finite(value)):
                row[column] = refused_or(value, unit or "", f"{where}: {column}", refused)  # type: ignore[assignment]
        times = [row.get(column) for column in _TIME_ORDER]
        if all(is_finite(t) for t in times) and not (
                times[0] <= times[1] + _PRINTED_STEP and times[1] <= times[2] + _PRINTED_STEP):  # type: ignore[operator]
            refused.append(f"{where}: t_min, t_avg and t_max out of order ({', '.join(map(str, times))})")


@dataclass
class _Block:
    benchmark: str | None = None
    processes: int | None = None
    mode: str | None = None
    columns: tuple[str, ...] | None = None
    rows: list[dict[str, Value]] = field(default_factory=list)

    def freeze(self) -> ImbBlock:
        return ImbBlock(self.benchmark, self.processes, self.columns or (), tuple(self.rows), self.mode)


class _Reader:
    def __init__(self) -> None:
        self.version: str | None = None
        self.listed: list[str] | None = None
        self.listing = False
        self.blocks: list[_Block] = []
        self.finalize = False

    def current(self) -> _Block:
        if not self.blocks:
            self.blocks.append(_Block())
        return self.blocks[-1]

    def continued(self) -> _Block:
        """The current block, or a copy of its identity once it already holds a table."""
        block = self.current()
        if block.rows or block.columns is not None:
            block = _Block(block.benchmark, block.processes, block.mode)
            self.blocks.append(block)
        return block

    def feed(self, line: str) -> None:
        tokens = line.split()
        if tokens[0] in _INT_COLUMNS and len(tokens) <= _MAX_COLUMNS:  # header starts with '#' too
            self.listing = False
            self.continued().columns = tuple(tokens)
            return
        if line[0] == "#":
            self._comment(line)
            return
        self.listing = False
        block = self.current()
        columns = block.columns
        if columns is None or len(tokens) != len(columns):
            return
        row = {column: _cell(column, token) for column, token in zip(columns, tokens)}
        if all(value is not None for value in row.values()):
            block.rows.append(row)  # type: ignore[arg-type]

    def _comment(self, line: str) -> None:
        if line.startswith("#--"):
            self.listing = False
            return
        if line.startswith(_FINALIZE):
            self.finalize = True
            return
        if line.startswith(_LIST_START):
            self.listed, self.listing = [], True
            return
        match = _BENCHMARKING_RE.match(line)
        if match:
            self.listing = False
            self.blocks.append(_Block(match.group(1)))
            return
        if self.listing:
            match = _LISTED_RE.fullmatch(line)
            if match and self.listed is not None:
                self.listed.append(match.group(1))
            return
        match = _PROCESSES_RE.match(line)
        if match:
            block = self.current()
            if block.rows:
                block = self.continued()
            block.processes = int(match.group(1))
            return
        match = _MODE_RE.match(line)
        if match:
            self.continued().mode = match.group(1)
            return
        if self.version is None:
            match = _VERSION_RE.match(line)
            if match:
                self.version = match.group(1).strip()


def parse_imb(text: str) -> ImbOutput:
    """Parse IMB output; ParseError when no benchmark table row is found. A last line without its
    line end is dropped, with a warning."""
    text, cut = complete_text(text)
    reader = _Reader()
    for line in lines_of(text):
        reader.feed(line)
    if not any(block.rows for block in reader.blocks):
        raise ParseError(with_note("no IMB result row (a '#bytes #repetitions ...' table) found", cut))
    refused: list[str] = []
    for block in reader.blocks:
        _vet(block, refused)
    return ImbOutput(
        imb_version=reader.version,
        benchmarks_listed=tuple(reader.listed) if reader.listed is not None else None,
        blocks=tuple(block.freeze() for block in reader.blocks),
        finalize_line=reader.finalize,
        cut_line=cut,
        problems=tuple(refused),
    )
