"""The tidy table a report writes beside itself: one row per figure with its case, parameters and
provenance; as one CSV, one CSV per benchmark, or Parquet (typed columns, for pandas, polars, DuckDB)."""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import BinaryIO

import polars as pl

from scalebench import registry
from scalebench.reporting.series import record_params
from scalebench.reporting.table import Table, shown

CSV_LEADING = ("run_start", "system", "partition", "stack", "benchmark", "case")
_CSV_PROVENANCE = registry.provenance().csv  # (column, field): the registry's
_KEPT_IN = {f.name: f.into for f in registry.provenance().fields.values() if f.into}
CSV_TRAILING = ("num_nodes", "num_tasks", "cores", "figure", "value", "unit", "reference", "result",
                *(column for column, _ in _CSV_PROVENANCE), "git_describe", "reframe_version", "hostname", "report")


def frame(table: Table) -> pl.DataFrame:
    """The tidy table: every parameter in its own column (param_<name> where a parameter has the name of
    a fixed column)."""
    rows = table.with_cases().join(
        table.sessions.select("session", run_start="start", reframe_version="version", hostname="hostname",
                              git_describe="git_describe"), on="session", how="left", maintain_order="left")
    combos = rows.select("params", "msg_size").unique(maintain_order=True)
    pairs = [dict(record_params(json.loads(params), size)) for params, size in combos.iter_rows()]
    names = sorted({name for values in pairs for name in values})
    fixed = {*CSV_LEADING, *CSV_TRAILING}
    columns = [f"param_{name}" if name in fixed else name for name in names]  # a parameter named 'case'
    cells = combos.with_columns(pl.Series(f"\0{i}", [shown(values.get(name, "")) for values in pairs], dtype=pl.Utf8)
                                for i, name in enumerate(names))  # named apart: a parameter may be msg_size
    rows = rows.join(cells, on=["params", "msg_size"], how="left", nulls_equal=True, maintain_order="left")
    provenance = [pl.col(f"shown_{f.name}" if _KEPT_IN[f.name] == "provenance" else f.name).alias(column)
                  for column, f in _CSV_PROVENANCE]
    return rows.select(*CSV_LEADING[:-1], pl.col("name").alias("case"),
                       *(pl.col(f"\0{i}").alias(column) for i, column in enumerate(columns)),
                       "num_nodes", "num_tasks", "cores",
                       "figure", "value", "unit", "reference", "result", *provenance, "git_describe", "reframe_version",
                       "hostname", "report")


def write_csv(tidy: pl.DataFrame, target: Path | BinaryIO) -> None:
    tidy.write_csv(target, line_terminator="\r\n")


def write_parquet(tidy: pl.DataFrame, target: Path | BinaryIO) -> None:
    # Through memory: polars reports a failed write of Parquet as its own error, not the OSError it was.
    buffer = io.BytesIO()
    tidy.write_parquet(buffer, compression="zstd")
    if isinstance(target, Path):
        target.write_bytes(buffer.getvalue())
    else:
        target.write(buffer.getvalue())


_UNSAFE = re.compile(r"[^A-Za-z0-9_.+-]")


def write_csv_per_benchmark(tidy: pl.DataFrame, directory: Path) -> list[Path]:
    """<directory>/<benchmark>.csv each (a new, empty directory), with only the parameter columns that
    benchmark has."""
    written: list[Path] = []
    names: set[str] = set()
    fixed = {*CSV_LEADING, *CSV_TRAILING}
    for (benchmark,), rows in tidy.partition_by("benchmark", maintain_order=True, as_dict=True).items():
        empty = [c for c in rows.columns if c not in fixed and rows[c].eq("").all()]
        name = _UNSAFE.sub("_", str(benchmark))[:100].lstrip(".") or "benchmark"
        stem, k = name, 1
        while name.lower() in names:  # case-insensitive file systems, and names made safe alike
            k += 1
            name = f"{stem}-{k}"
        names.add(name.lower())
        path = directory / f"{name}.csv"
        write_csv(rows.drop(empty), path)
        written.append(path)
    return written
