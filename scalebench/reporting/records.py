"""What ingest makes of a run: Cases and Sessions, and the one check every case passes before anything
reads it (scalebench.reporting.store and .perflogs build cases; `check_case` vets them).

A run report is written by ReFrame from whatever a check computed, and may have been edited since:
a value that cannot be a measurement (a negative Rmax, an efficiency of 1e300 %, Rpeak 0, -1 nodes, a
400-digit integer) would otherwise reach medians, verdicts and plots. Such a case is skipped, and the
warning names the file, the case and the value; so is a case whose figures contradict each other
(benchmarks.yaml `relations`: efficiency against Rmax / Rpeak, ...), whose tasks are fewer than its
nodes or its HPL grid, or whose rate is beyond what its processes can reach (quantities.yaml).
One figure is dropped, with a warning, when it is no number (a string, a boolean), was recorded for
another partition, or in a unit its quantity cannot convert to the registry's (`figure_value`); a figure in
another unit of its quantity (Tflop/s, Mflop/s for Gflop/s) is converted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scalebench import loaders
from scalebench.registry import (RATIO_TOLERANCE, Entry, Relation, family, lookup, provenance, quantities,
                                   quantity_of, split_sized)
from scalebench.errors import InputError
from scalebench.hpl.output import rate_bounds  # HPL's own rate formula, where the parser has it
from scalebench.validation import C_INT_MAX, FLOAT_INT_MAX, check_name, excerpt

# What ingest keeps of a test case besides its figures (scalebench/data/provenance.yaml): the fields
# copied into its provenance, those read from other names, and where each one is kept.
PROVENANCE_KEYS = provenance().in_provenance()
_DERIVED = provenance().derived()
_KEPT_IN = {f.name: f.into for f in provenance().fields.values() if f.into}
# Parameters and provenance are small values (a name, a number, a short list): deeper is no check's.
_MAX_VALUE_DEPTH = 4


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
    # A failed case: what the scheduler and MPI launcher wrote into its job output (see store._job_messages).
    job_messages: tuple[str, ...] = ()

    def figure(self, name: str) -> float | None:
        return self.figures.get(name, (None, ""))[0]

    def recorded(self, name: str, default: Any = "") -> Any:
        """A registered field as this case keeps it (scalebench/data/provenance.yaml); a KeyError for a
        name the registry does not keep, so that a report never reads a name it misspelt."""
        into = _KEPT_IN[name]
        if into == "provenance":
            return self.provenance.get(name, default)
        return self.params.get(name, default) if into == "params" else getattr(self, into)

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
    identity: str = ""  # one session however many copies of it are read (store.session_identity)

    @property
    def git_describe(self) -> str:
        return str(self.run_provenance.get("git_describe") or "")


# --- values as a report holds them -------------------------------------------------------------------

_NUMERIC = (int, float)  # exact types: a bool is no measurement


def number(value: Any) -> float | None:
    """A finite number as a float, else None: a NaN or infinite figure is no measurement. An int
    beyond a float's range is no number a check computed: InputError."""
    if type(value) is float:
        return value if math.isfinite(value) else None
    if type(value) is int:
        if not -FLOAT_INT_MAX <= value <= FLOAT_INT_MAX:
            raise InputError(f"{excerpt(value)} is beyond a float's range")
        return float(value)
    return None


class FigureDropped(InputError):
    """One figure of a case cannot be used (the rest of the case can): it is left out with a warning."""


def _conversion(bench: Entry, name: str, unit: str) -> tuple[float, str]:
    """(factor, unit) turning a value of figure `name` recorded in `unit` into the registry's unit;
    InputError when the unit is not one its quantity can convert."""
    spec = bench.figures.get(family(bench, name))
    wanted = spec.unit if spec is not None else None
    if wanted is None or unit == wanted:
        return 1.0, unit
    quantity = quantity_of(wanted)
    if quantity is None or quantity_of(unit) is not quantity:
        raise FigureDropped(f"unit {excerpt(unit)} is not {wanted} and cannot be converted to it")
    return quantity.convert(1.0, unit, wanted), wanted


_conversions: dict[tuple[str, str, str], tuple[float, str] | str] = {}


def figure_value(bench: Entry, name: str, value: Any, unit: Any) -> tuple[float | None, str, float]:
    """(value, unit, factor) of a recorded figure in the registry's unit (benchmarks.yaml `unit`): a value
    in another unit of its quantity is converted (factor: what it was multiplied by); None for no value
    (ReFrame's null, NaN, infinity). FigureDropped when the value is no number (a string, a boolean) or the
    unit cannot be converted; InputError (the case cannot be read) for an integer beyond a float. Once per
    figure of every case read: a float in the registry's unit is decided with a dict lookup."""
    if type(value) is not float:
        if value is not None and type(value) is not int:
            raise FigureDropped(f"{excerpt(value)} is not a number")
        value = number(value)
    elif not math.isfinite(value):
        value = None
    if type(unit) is not str:
        raise FigureDropped(f"unit {excerpt(unit)} is not text")
    key = (bench.name, name, unit)
    found = _conversions.get(key)
    if found is None:
        try:
            found = _conversions[key] = _conversion(bench, name, unit)
        except FigureDropped as err:
            found = _conversions[key] = str(err)
    if type(found) is str:
        raise FigureDropped(found)
    factor, kept = found  # type: ignore[misc]
    return (value if value is None or factor == 1.0 else value * factor), kept, factor


def count(value: Any, name: str) -> int | None:
    """A count (nodes, tasks, CPUs per task) as an int; None when absent; InputError when it is not a
    whole number from 0 to C_INT_MAX (a skipped case has 0 nodes)."""
    if type(value) is int and 0 <= value <= C_INT_MAX:
        return value
    if value is None or value == "":
        return None
    as_float = number(value) if type(value) in _NUMERIC else None
    if as_float is None or not as_float.is_integer() or not 0 <= as_float <= C_INT_MAX:
        raise InputError(f"{name}: {excerpt(value)} is not a count from 0 to {C_INT_MAX}")
    return int(as_float)


def text(value: Any) -> str:
    """A report field as text: a string as it is, anything else (a number, a list nested a thousand
    deep) as a short excerpt, so that no field can make str() recurse or run long."""
    return value if isinstance(value, str) else "" if value is None else excerpt(value)


def interval(start: Any, end: Any) -> tuple[float, float] | None:
    start, end = number(start), number(end)
    return (start, end) if start is not None and end is not None and end >= start else None


def nodelist(value: Any) -> str:
    return ",".join(map(text, value)) if isinstance(value, list) else text(value or "")


def derived(record: dict[str, Any], run: dict[str, Any]) -> dict[str, str]:
    """The Case fields read from other names (binary, nodelist, spec_hash) of a test case, the run's
    provenance.json too where the registry says so: the first one recorded, as text."""
    found = {}
    for field in _DERIVED:
        sources = (record, run) if field.run else (record,)
        value = next((s[k] for s in sources for k in field.sources if s.get(k)), "")
        found[field.into] = nodelist(value) if field.type == "list" else text(value)
    return found


def params_from_name(display_name: str) -> list[str]:
    """Parameter names of a ReFrame 4.x display name: 'HPLCheck %scale=1_core %nb=192'."""
    return [part.split("=")[0] for part in display_name.split(" %")[1:]]


_SCALARS = frozenset((str, float, bool, type(None)))


def is_plain(value: Any, depth: int = 0) -> bool:
    """A scalar, or lists/mappings of them at most _MAX_VALUE_DEPTH deep (and, in all, small)."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is int:
        return -FLOAT_INT_MAX <= value <= FLOAT_INT_MAX
    if depth >= _MAX_VALUE_DEPTH or kind not in (list, dict) or len(value) > 1000:
        return False
    for item in value.values() if kind is dict else value:
        if type(item) not in _SCALARS and not is_plain(item, depth + 1):
            return False
    return True


def run_provenance(run_dir: Path, warnings: list[str]) -> dict[str, Any]:
    """The run directory's provenance.json (written by `scalebench run`), {} when absent or unusable."""
    path = run_dir / "provenance.json"
    if not path.is_file():
        return {}
    try:
        data = loaders.load_json(path, "provenance", loaders.CONFIG_LIMIT)
    except InputError as err:
        warnings.append(f"ignored {err}")
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and is_plain(v) for k, v in data.items()):
        warnings.append(f"ignored {path}: expected a JSON object of plain values")
        return {}
    return data


# --- the physical sense of a figure ------------------------------------------------------------------

_LOW = {"positive": (0.0, False, "positive"), "non_negative": (0.0, True, "not negative"),
        "any": (-math.inf, True, "finite")}
_bounds_cache: dict[tuple[str, str, str], tuple[float, bool, float, str]] = {}


def bounds(bench: Entry, name: str, unit: str) -> tuple[float, bool, float, str]:
    """(low, low included, high, what the value must be) of a figure: its registry range (positive
    for rates and times unless the registry says otherwise) and, in %, 0 to 100; a rate at message
    size 0 may be 0. A figure the registry does not know: any finite value."""
    key = (bench.name, name, unit)
    found = _bounds_cache.get(key)
    if found is None:
        sized = split_sized(bench, name)
        figure = bench.figures.get(family(bench, name))
        kind = figure.range if figure is not None else "any"
        if sized is not None and sized[1] == 0 and kind == "positive":
            kind = "non_negative"
        low, included, words = _LOW[kind]
        high = math.inf
        if figure is not None and (unit == "%" or figure.maximum is not None):
            high = figure.maximum if figure.maximum is not None else 100.0
            words = f"{words} and at most {high:g}"
            if low < 0:
                low, included = 0.0, True
        quantity = quantity_of(unit)
        if quantity is not None and quantity.largest(unit) < high:  # beyond any machine (quantities.yaml)
            high = quantity.largest(unit)
            words = f"{words} and at most {high:g} {unit}"
        found = _bounds_cache[key] = (low, included, high, words)
    return found


_TEXT = (str, type(None))
_names_seen: set[str] = set()  # names already checked: ingest checks every case's (10 000s of them)


def check_case(case: Case) -> None:
    """InputError naming the first thing in `case` that cannot be so; nothing for a sound case.
    Once per case of every report read: the common cases (names seen before, string values) are
    decided without a call."""
    for name in ("system", "partition", "environ", "stack"):
        value = getattr(case, name)
        if type(value) is not str or value not in _names_seen:
            _names_seen.add(check_name(name, value))
    if not isinstance(case.benchmark, str) or not case.benchmark:
        raise InputError(f"check name: {excerpt(case.benchmark)} is not a name")
    for name in ("fail_phase", "fail_reason"):
        if type(getattr(case, name)) not in _TEXT:
            raise InputError(f"{name}: {excerpt(getattr(case, name))} is not text")
    for key, value in case.params.items():
        if type(key) is not str or type(value) is not str and not is_plain(value):
            raise InputError(f"parameter {excerpt(key)}: {excerpt(value)} is not a plain value")
    for key, value in case.provenance.items():
        if type(value) is not str and not is_plain(value):
            raise InputError(f"{key}: {excerpt(value)} is not a plain value")
    if not case.measured:
        return  # a failed or skipped case claims no measurement
    for name, value in (("num_nodes", case.num_nodes), ("num_tasks", case.num_tasks)):
        if value is not None and value < 1:
            raise InputError(f"{name}: {value} for a measured case")
    if case.num_nodes is not None and case.num_tasks is not None and case.num_tasks < case.num_nodes:
        raise InputError(f"num_tasks: {case.num_tasks} tasks cannot fill {case.num_nodes} nodes")
    deck = case.provenance.get("hpl_deck")
    if isinstance(deck, dict):
        _check_deck(deck, case.num_nodes, case.num_tasks)
    bench = lookup(case.benchmark)
    cache = _bounds_cache
    for name, (value, unit) in case.figures.items():
        if type(unit) is not str:
            raise InputError(f"figure {name}: unit {excerpt(unit)} is not text")
        if value is None:
            continue
        low, included, high, words = cache.get((bench.name, name, unit)) or bounds(bench, name, unit)
        if not ((value >= low if included else value > low) and value <= high):
            raise InputError(f"figure {name}: {value:g} {unit} must be {words}")
        if case.num_tasks and unit in _PER_PROCESS and value > _PER_PROCESS[unit] * case.num_tasks:
            raise InputError(f"figure {name}: {value:g} {unit} on {case.num_tasks} tasks is beyond "
                             f"{_PER_PROCESS[unit]:g} {unit} per process, more than any processor reaches")
    for relation in bench.relations:
        broken = _broken(relation, case.figures)
        if broken:
            raise InputError(f"figures contradict each other ({relation.text}): {broken}")


def _check_deck(deck: dict[str, Any], nodes: int | None, tasks: int | None) -> None:
    """An HPL case's counts against its deck's: a grid needs its P x Q tasks, and the deck was made for
    its nodes x ranks per node (the job's tasks, idle ranks included): a case that ran other counts
    contradicts its own deck (1 000 000 tasks on one node, with a 1 x 2 grid)."""
    p, q, on, per_node = (deck.get(k) for k in ("p", "q", "nodes", "ranks_per_node"))
    if tasks is not None and type(p) is int and type(q) is int and p * q > tasks:
        raise InputError(f"hpl_deck: a {p}x{q} grid needs {p * q} tasks, the case ran {tasks}")
    if type(on) is int and type(per_node) is int and (tasks is not None and tasks != on * per_node
                                                      or nodes is not None and nodes != on):
        grid = f" ({p}x{q} grid)" if type(p) is int and type(q) is int else ""
        raise InputError(f"hpl_deck: made for {on} node(s) x {per_node} rank(s){grid}, the case ran {tasks} "
                         f"task(s) on {nodes} node(s): its counts contradict each other")


# unit -> the largest value one process reaches in it, where its quantity has such a bound (flop rates).
_PER_PROCESS = {unit: q.per_process_max / factor for q in quantities().values() if q.per_process_max
                for unit, factor in q.factors.items()}


def _broken(relation: Relation, figures: dict[str, tuple[float | None, str]]) -> str:
    """How the case's figures break `relation` ('' when they keep it, or one of them is missing)."""
    found = [figures.get(name, (None, ""))[0] for name in relation.figures]
    if any(value is None for value in found):
        return ""
    values = [float(value) for value in found]  # type: ignore[arg-type]
    names = relation.figures
    if relation.kind == "order":
        if all(a <= b * (1 + 1e-9) for a, b in zip(values, values[1:])):
            return ""
        return ", ".join(f"{name} {value:g}" for name, value in zip(names, values))
    if relation.kind == "ratio":
        derived, top, bottom = values
        percent = figures[names[0]][1] == "%"
        expected = (100.0 if percent else 1.0) * top / bottom if bottom else math.inf
        if math.isclose(derived, expected, rel_tol=RATIO_TOLERANCE):
            return ""
        unit = " %" if percent else ""
        return f"{names[0]} {derived:g}{unit} but {names[1]} / {names[2]} gives {expected:.4g}{unit}"
    rate, n, time_s = values
    if not (n.is_integer() and n >= 1):
        return f"{names[1]} {n:g} is no matrix order"
    low, high = rate_bounds(int(n), time_s, 0.005)  # HPL prints its time to 0.01 s
    if low <= rate <= high:
        return ""
    return f"{names[0]} {rate:g} is not what HPL computes for N={int(n)} in {time_s:g} s"
