"""Perflogs, the fallback when a run has no usable report.json (interrupted, or still going): ReFrame's
pipe-separated lines, one per figure, regrouped into the cases of one session."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from scalebench import textfile
from scalebench.errors import InputError
from scalebench.loaders import REPORT_LIMIT
from scalebench.registry import lookup
from scalebench.reporting.records import (PROVENANCE_KEYS, Case, FigureDropped, Session, check_case, count, derived,
                                        figure_value, params_from_name, run_provenance)

_REFERENCE_FIELDS = ("perf_ref", "perf_lower_thres", "perf_upper_thres")


def _value(text: str) -> Any:
    if text in ("null", "None", ""):
        return None
    try:
        return float(text)
    except ValueError:
        return text


def _rows(path: Path, warnings: list[str]) -> list[dict[str, str]]:
    """The lines of one pipe-separated perflog as dicts keyed by its header; torn lines skipped (a last
    line without its line end is one: ReFrame was still writing it)."""
    try:
        text = textfile.read_text(path, "perflog", REPORT_LIMIT)
    except InputError as err:
        warnings.append(f"skipped {err}")
        return []
    lines = text.splitlines()
    if lines and not text.endswith(("\n", "\r")):
        lines.pop()
        warnings.append(f"{path}: skipped its last line, cut short (no line end)")
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


def _case(rows: list[dict[str, str]], path: Path, run_provenance: dict[str, Any], dropped: list[str]) -> Case:
    """A case from its perflog lines; a figure that is no number or in a unit that cannot be converted
    (records.figure_value) is left out, and why is appended to `dropped`."""
    first = rows[0]
    name = first.get("display_name", "")
    bench = lookup(name.split(" ")[0])
    figures, references = {}, {}
    for row in rows:
        var = row["perf_var"]
        try:
            value, unit, factor = figure_value(bench, var, _value(row["perf_value"]), row.get("perf_unit", ""))
        except FigureDropped as err:
            dropped.append(f"figure {var}: {err}: dropped")
            continue
        reference = tuple(_value(row.get(k, "")) for k in _REFERENCE_FIELDS)
        if factor != 1.0 and type(reference[0]) is float:
            reference = (reference[0] * factor, *reference[1:])
        figures[var], references[var] = (value, unit), reference
    num_tasks = count(_value(first.get("num_tasks", "")), "num_tasks")
    cpus = count(_value(first.get("num_cpus_per_task", "")), "num_cpus_per_task") or 1
    return Case(
        report=str(path), session_start=first.get("job_completion_time", ""),
        system=first["system"], partition=first["partition"], environ=first.get("environ", ""),
        stack=first.get("stack") or first.get("environ", ""), benchmark=name.split(" ")[0],
        name=name, params={p: first.get(p) for p in params_from_name(name)},
        num_nodes=count(_value(first.get("num_nodes", "")), "num_nodes"), num_tasks=num_tasks,
        result=first.get("result") or "unknown", fail_phase=None, fail_reason=None,
        figures=figures, references=references,  # type: ignore[arg-type]
        provenance={k: first[k] for k in PROVENANCE_KEYS if first.get(k) not in (None, "", "null")},
        cores=num_tasks * cpus if num_tasks else None, **derived(first, run_provenance))


def load_perflogs(run_dir: Path, files: Sequence[Path], warnings: list[str]) -> Session | None:
    """A session rebuilt from a run's perflog lines: one case per (time, case, system, partition); a case
    with a value that cannot be (see records.check_case) skipped with a warning."""
    provenance = run_provenance(run_dir, warnings)
    grouped: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for path in files:
        for row in _rows(path, warnings):
            key = tuple(row.get(k, "") for k in ("job_completion_time", "display_name", "system", "partition",
                                                 "environ"))
            grouped.setdefault(key, []).append(row)
    cases = []
    for rows in grouped.values():
        dropped: list[str] = []
        try:
            case = _case(rows, files[0], provenance, dropped)
            check_case(case)
        except KeyError as err:
            warnings.append(f"skipped perflogs of {run_dir}: no {err} column")
            return None
        except InputError as err:
            warnings.append(f"skipped {rows[0].get('display_name', '?')} in the perflogs of {run_dir}: {err}")
            continue
        warnings.extend(f"{rows[0].get('display_name', '?')} in the perflogs of {run_dir}: {why}" for why in dropped)
        cases.append(case)
    if not cases:
        return None
    start = min(c.session_start for c in cases)
    return Session(str(run_dir / "perflogs"), start, None, cases, run_provenance=provenance, source="perflogs")


def run_dir_of(perflog: Path) -> Path:
    """results/runs/<run>/perflogs/<system>/<partition>/<check>.log -> results/runs/<run>."""
    parts = perflog.parts
    return Path(*parts[:len(parts) - 1 - parts[::-1].index("perflogs")]) if "perflogs" in parts else perflog.parent
