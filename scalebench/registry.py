"""The registry of figure and provenance names and of what a measured value can be, data not code.

scalebench/data/benchmarks.yaml: which report section a check belongs to, its scaling axis, its figure
of merit, which way each figure is better, each figure's unit and range, and the relations between the
figures of one case; a new check gets a report section by adding an entry.
scalebench/data/quantities.yaml: the physical sense of a value by its unit (conversions, bounds), which
every output parser and the ingest apply (scalebench.parse._common.refusal, scalebench.reporting.records).
scalebench/data/provenance.yaml: what a result records besides its figures, from which the perflog
format, the checks' recorded variables, the ingest and the report's provenance columns derive.
A benchmark may keep its own entries of both in its folder's benchmark.yaml (scalebench/benchmarks/<name>/;
`checks`: entries of benchmarks.yaml; `provenance`: fields of provenance.yaml, none a perflog column),
merged after the packaged ones."""
from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from scalebench import benchmark, loaders, paths
from scalebench.errors import InputError
from scalebench.validation import did_you_mean, excerpt, is_number

# The report's sections in its order: the leading benchmark's (HPL's), the shared ones (other: "Other results",
# a table of the figures without plots or comparisons), then the other benchmarks' own (scalebench.benchmarks:
# a benchmark with a section adds its name; a unit test holds the two together).
SECTIONS = ("hpl", "application", "microbenchmark", "screening", "other", "stream")
DIRECTIONS = ("higher", "lower", "none")
CURVE_KINDS = ("bandwidth", "latency")
# What a value of a figure may be (scalebench.reporting.records checks every case at ingest).
RANGES = ("positive", "non_negative", "any")
_ENTRY_KEYS = {"title", "section", "x", "fom", "figures", "kind", "sized", "per_procs", "series_params", "time",
               "weak", "suite", "relations"}
_FIGURE_KEYS = {"direction", "label", "kind", "range", "max", "unit"}
_SIZED_NAME = re.compile(r"^(?P<figure>.+)_(?P<size>\d+)$")
_PER_PROCS_NAME = re.compile(r"^(?P<figure>.+)_p(?P<procs>\d+)$")
FIELD_TYPES = ("str", "int", "list", "dict")
PERFLOG_PLACES = ("case", "provenance")
_FIELD_KEYS = {"label", "type", "perflog", "check", "into", "from", "run"}
# ReFrame's columns of one figure (check_perf_<name>), between a perflog line's case and provenance.
PERFLOG_FIGURE_COLUMNS = ("perf_var", "perf_value", "perf_unit", "perf_ref", "perf_lower_thres", "perf_upper_thres",
                          "perf_result")


@dataclass(frozen=True)
class FigureSpec:
    name: str
    direction: str  # higher | lower | none
    label: str
    kind: str | None = None  # bandwidth | latency: a point-to-point curve (n1/2, latency surprise)
    range: str = "any"  # positive | non_negative | any; in % also at most 100
    maximum: float | None = None  # the largest value that can be (registry `max`; default 100 in %)
    unit: str | None = None  # the unit it is kept in; a value recorded in another unit is converted or refused


# A relation between the figures of one case (benchmarks.yaml `relations`): the kind, then the figures.
#   ratio     (a, b, c): a = b / c (x 100 when a is in %), within RATIO_TOLERANCE
#   hpl_rate  (rate, n, time): rate is what HPL computes from N and the time (scalebench.hpl.output)
#   order     (a, b, ...): a <= b <= ...
RELATION_FORMS = {
    "ratio": re.compile(r"(\w+) = (\w+) / (\w+)"),
    "hpl_rate": re.compile(r"(\w+) = hpl_rate\((\w+), (\w+)\)"),
    "order": re.compile(r"\w+(?: <= \w+)+"),
}
RATIO_TOLERANCE = 0.01  # a figure derived from two others, each rounded when printed


@dataclass(frozen=True)
class Relation:
    kind: str  # ratio | hpl_rate | order
    figures: tuple[str, ...]
    text: str  # as the registry writes it


@dataclass(frozen=True)
class Entry:
    name: str  # the check's class name
    title: str
    section: str  # one of SECTIONS
    x: str  # nodes | procs | a parameter name
    fom: str | None
    figures: Mapping[str, FigureSpec]
    kind: str | None = None  # bandwidth | latency: the kind of the figure of merit (microbenchmarks)
    sized: bool = False
    per_procs: bool = False  # figures named <figure>_p<processes>, one per process count (speedup_p4)
    series_params: tuple[str, ...] = ("scale",)
    time: str | None = None  # the run time bake-offs sum
    weak: tuple[str, str] | None = None  # (parameter, value) of weak-scaling cases
    suite: str = ""  # checks whose curves are read together (one for latency, one for bandwidth)
    relations: tuple[Relation, ...] = ()  # what the figures of one case must satisfy together

    def figure(self, name: str) -> FigureSpec:
        """A registered figure, or an undirected one for figures the registry does not list."""
        return self.figures.get(name) or FigureSpec(name, "none", name)

    def unit_of(self, name: str) -> str | None:
        """A figure's unit, its family's (scalebench.registry.family). None: the registry gives none."""
        return self.figure(family(self, name)).unit

    def in_units(self, figures: Mapping[str, tuple[float, str]]) -> dict[str, float]:
        """{name: value} of figures measured as (value, unit), each in its unit of the registry (converted
        within its quantity; a value None, not measured, stays None); InputError for a figure the registry
        gives no unit, or one of another quantity."""
        values = {}
        for name, (value, unit) in figures.items():
            wanted = self.unit_of(name)
            quantity = quantity_of(unit)
            if wanted is None or quantity is None or wanted not in quantity.factors:
                raise InputError(f"{self.name}: figure {name} is measured in {unit}; the registry gives it "
                                 f"{'no unit' if wanted is None else wanted}")
            values[name] = None if value is None else quantity.convert(value, unit, wanted)
        return values


def unregistered(name: str) -> Entry:
    """What a check missing from the registry is read as: a table under "Other results"."""
    return Entry(name, name, "other", "procs", None, {})


def _choice(value: object, allowed: Iterable[str], where: str) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise InputError(f"{where}: {excerpt(value)} is not one of {', '.join(allowed)}"
                         f"{did_you_mean(str(value), allowed)}")
    return str(value)


def _mapping(entry: object, keys: set[str], where: str) -> dict:
    """An entry of a registry: a mapping of known keys."""
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a mapping")
    unknown = sorted(set(entry) - keys)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}: unknown key{did_you_mean(unknown[0], keys)}")
    return entry


def _entry(name: str, entry: object, where: str) -> Entry:
    entry = _mapping(entry, _ENTRY_KEYS, where)
    figures = entry.get("figures")
    if not isinstance(figures, dict) or not figures:
        raise InputError(f"{where}.figures: expected a mapping of figure names")
    kind = entry.get("kind")
    if kind is not None:
        _choice(kind, CURVE_KINDS, f"{where}.kind")
    fom = entry.get("fom")
    parsed = {}
    for figure, spec in figures.items():
        spec = spec or {}
        if not isinstance(spec, dict) or set(spec) - _FIGURE_KEYS:
            raise InputError(f"{where}.figures.{figure}: expected direction, label and optionally kind, range, "
                             f"max and unit")
        direction = _choice(spec.get("direction"), DIRECTIONS, f"{where}.figures.{figure}.direction")
        figure_kind = spec.get("kind", kind if figure == fom else None)
        if figure_kind is not None:
            _choice(figure_kind, CURVE_KINDS, f"{where}.figures.{figure}.kind")
        # Rates and times are positive unless the registry says otherwise.
        value_range = _choice(spec.get("range", "any" if direction == "none" else "positive"), RANGES,
                              f"{where}.figures.{figure}.range")
        maximum = spec.get("max")
        if maximum is not None and (not is_number(maximum) or maximum <= 0):
            raise InputError(f"{where}.figures.{figure}.max: must be a positive number, got {excerpt(maximum)}")
        unit = spec.get("unit")
        if unit is not None:
            _choice(unit, units(), f"{where}.figures.{figure}.unit")
        parsed[str(figure)] = FigureSpec(str(figure), direction, str(spec.get("label") or figure), figure_kind,
                                         value_range, None if maximum is None else float(maximum), unit)
    if fom is not None:
        _choice(fom, parsed, f"{where}.fom")
    time = entry.get("time")
    if time is not None:
        _choice(time, parsed, f"{where}.time")
    weak = entry.get("weak")
    if weak is not None and (not isinstance(weak, dict) or len(weak) != 1):
        raise InputError(f"{where}.weak: expected one parameter and its value, e.g. {{scaling: weak}}")
    return Entry(
        relations=_relations(entry.get("relations") or [], parsed, f"{where}.relations"),
        name=name, title=str(entry.get("title") or name),
        section=_choice(entry.get("section"), SECTIONS, f"{where}.section"),
        x=str(entry.get("x") or "procs"), fom=fom, figures=parsed, kind=kind,
        sized=bool(entry.get("sized", False)), per_procs=bool(entry.get("per_procs", False)),
        series_params=tuple(entry.get("series_params") or ("scale",)), time=time,
        weak=tuple(map(str, next(iter(weak.items())))) if weak else None,  # type: ignore[arg-type]
        suite=str(entry.get("suite") or entry.get("title") or name))


def _relations(entries: object, figures: Mapping[str, FigureSpec], where: str) -> tuple[Relation, ...]:
    if not isinstance(entries, list):
        raise InputError(f"{where}: expected a list of relations (e.g. 'efficiency = rmax / rpeak_gflops')")
    found = []
    for index, text in enumerate(entries):
        kind = next((k for k, form in RELATION_FORMS.items() if isinstance(text, str) and form.fullmatch(text)), None)
        if kind is None:
            raise InputError(f"{where}[{index}]: {excerpt(text)} is none of 'a = b / c', 'rate = hpl_rate(n, time)', "
                             f"'a <= b <= ...'")
        names = tuple(re.findall(r"\w+", text.replace("hpl_rate(", "(")))
        for name in names:
            _choice(name, figures, f"{where}[{index}]")
        unit = [figures[name].unit for name in names]
        expected = {"ratio": (unit[1] is not None and unit[1] == unit[2] and unit[0] in ("%", "ratio")),
                    "hpl_rate": unit == ["Gflop/s", "N", "s"],
                    "order": unit[0] is not None and len(set(unit)) == 1}[kind]
        if not expected:
            raise InputError(f"{where}[{index}]: {text!r}: the units of its figures do not fit ({', '.join(map(str, unit))})")
        found.append(Relation(kind, names, text))
    return tuple(found)


# A benchmark's own entries of the registries, in its folder: {checks: {...}, provenance: {...}}.
FOLDER_REGISTRY = "benchmark.yaml"
_FOLDER_KEYS = ("checks", "provenance")


def folder_entries(key: str) -> list[tuple[str, str, object]]:
    """(where, name, entry) of every benchmark folder's benchmark.yaml under `key` (checks | provenance): read as
    data by folder (scalebench.benchmark.folder_files), as the benchmarks' site keys are, for the registry sits
    beneath the benchmarks' code."""
    found = []
    for path in benchmark.folder_files(FOLDER_REGISTRY):
        data = loaders.load_yaml(path, "benchmark's registry") or {}
        unknown = sorted(set(data) - set(_FOLDER_KEYS)) if isinstance(data, dict) else ["(not a mapping)"]
        if unknown:
            raise InputError(f"{path}: {unknown[0]}: unknown key "
                             f"(a benchmark's registry has {', '.join(_FOLDER_KEYS)})")
        entries = data.get(key) or {}
        if not isinstance(entries, dict):
            raise InputError(f"{path}: {key}: expected a mapping of names")
        found += [(f"{path}: {key}.{name}", str(name), entry) for name, entry in entries.items()]
    return found


def _merged(packaged: dict, key: str, read) -> dict:
    """The packaged registry's entries, then the benchmark folders' (a name registered twice is refused)."""
    for where, name, entry in folder_entries(key):
        if name in packaged:
            raise InputError(f"{where}: {name} is registered already")
        packaged[name] = read(name, entry, where)
    return packaged


def load(path: Path | None = None) -> dict[str, Entry]:
    """A registry file's entries; the packaged one's (no path) with the benchmark folders' after them."""
    where = path or paths.PACKAGE_DATA / "benchmarks.yaml"
    data = loaders.load_yaml(where, "benchmark registry") or {}
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a mapping of check names")
    found = {str(name): _entry(str(name), entry, f"{where}: {name}") for name, entry in data.items()}
    return found if path else _merged(found, "checks", _entry)


@functools.lru_cache(maxsize=None)
def registry() -> dict[str, Entry]:
    """The packaged registry, read once per process."""
    return load()


def lookup(name: str) -> Entry:
    return registry().get(name) or unregistered(name)


def family(benchmark: Entry, figure: str) -> str:
    """The registered figure `figure` is one of: a sized figure's curve (bandwidth_1024: bandwidth), a
    per-process-count figure's (speedup_p4: speedup), else `figure` itself."""
    sized = split_sized(benchmark, figure)
    if sized:
        return sized[0]
    match = _PER_PROCS_NAME.match(figure) if benchmark.per_procs else None
    return match["figure"] if match is not None and match["figure"] in benchmark.figures else figure


def split_sized(benchmark: Entry, figure: str) -> tuple[str, int] | None:
    """('bandwidth', 1024) for 'bandwidth_1024' of a sized check; None for any other figure."""
    if not benchmark.sized:
        return None
    match = _SIZED_NAME.match(figure)
    if match is None or match["figure"] not in benchmark.figures:
        return None
    return match["figure"], int(match["size"])


# --- quantities (scalebench/data/quantities.yaml) ----------------------------------------------------

@dataclass(frozen=True)
class Quantity:
    """What a measured value of one physical quantity can be."""

    name: str
    unit: str  # the unit `maximum` is in
    factors: Mapping[str, float]  # each unit of the quantity -> how many `unit` one of it is (unit: 1)
    maximum: float = math.inf  # the largest value that can be a measurement, in `unit`
    per_process_max: float | None = None  # the largest value one process reaches, in `unit`

    def convert(self, value: float, unit: str, to: str) -> float:
        """`value` in `unit` expressed in `to` (both units of this quantity)."""
        return value if unit == to else value * self.factors[unit] / self.factors[to]

    def largest(self, unit: str) -> float:
        """The largest measurement in `unit`."""
        return self.maximum / self.factors[unit]


_QUANTITY_KEYS = {"unit", "units", "max", "per_process_max"}


def _bound(value: object, where: str) -> float:
    if not is_number(value) or not 0 < value < math.inf:  # type: ignore[operator]
        raise InputError(f"{where}: must be a positive number, got {excerpt(value)}")
    return float(value)  # type: ignore[arg-type]


def load_quantities(path: Path | None = None) -> dict[str, Quantity]:
    """Quantities by name; InputError naming the key of a malformed entry or a unit listed twice."""
    path = path or paths.PACKAGE_DATA / "quantities.yaml"
    data = loaders.load_yaml(path, "quantity registry")
    if not isinstance(data, dict) or not data:
        raise InputError(f"{path}: expected a mapping of quantity names")
    found: dict[str, Quantity] = {}
    owner: dict[str, str] = {}
    for name, entry in data.items():
        where = f"{path}: {name}"
        entry = _mapping(entry, _QUANTITY_KEYS, where)
        unit, others = entry.get("unit"), entry.get("units") or {}
        if not isinstance(unit, str) or not unit:
            raise InputError(f"{where}.unit: expected the unit of its bounds")
        if not isinstance(others, dict):
            raise InputError(f"{where}.units: expected a mapping of units to factors")
        factors = {unit: 1.0, **{str(u): _bound(f, f"{where}.units.{u}") for u, f in others.items()}}
        for each in factors:
            if each in owner:
                raise InputError(f"{where}: unit {each!r} is {owner[each]}'s already")
            owner[each] = str(name)
        per_process = entry.get("per_process_max")
        found[str(name)] = Quantity(str(name), unit, factors,
                                    _bound(entry["max"], f"{where}.max") if "max" in entry else math.inf,
                                    None if per_process is None else _bound(per_process, f"{where}.per_process_max"))
    return found


@functools.lru_cache(maxsize=None)
def quantities() -> dict[str, Quantity]:
    """The packaged quantity registry, read once per process."""
    return load_quantities()


@functools.lru_cache(maxsize=None)
def units() -> dict[str, Quantity]:
    """Every unit of the packaged quantity registry -> its quantity."""
    return {unit: quantity for quantity in quantities().values() for unit in quantity.factors}


def quantity_of(unit: str) -> Quantity | None:
    """The quantity `unit` measures; None for a unit the registry does not list."""
    return units().get(unit) if isinstance(unit, str) else None


# --- provenance fields (scalebench/data/provenance.yaml) ---------------------------------------------

@dataclass(frozen=True)
class Field:
    """A name a result records besides its figures."""

    name: str
    label: str
    type: str  # str | int | list | dict
    perflog: str | None = None  # case | provenance: a column of every perflog line
    check: str | None = None  # base | a check class name: the check records it in a variable declared from here
    into: str | None = None  # provenance | a Case field: where ingest keeps it
    sources: tuple[str, ...] = ()  # the names it is read from, the first recorded wins; () = its own
    run: bool = False  # also read from the run directory's provenance.json


@dataclass(frozen=True)
class Provenance:
    fields: Mapping[str, Field]
    appendix: tuple[Field, ...]  # the report's provenance columns
    csv: tuple[tuple[str, Field], ...]  # (CSV column, field): the tidy CSV's provenance columns

    def perflog_columns(self) -> tuple[str, ...]:
        """The header of a scalebench perflog: the case's fields, the figure's, the provenance."""
        def placed(where: str) -> tuple[str, ...]:
            return tuple(f.name for f in self.fields.values() if f.perflog == where)
        return (*placed("case"), *PERFLOG_FIGURE_COLUMNS, *placed("provenance"))

    def in_provenance(self) -> tuple[str, ...]:
        """Fields ingest copies into a case's provenance, by name."""
        return tuple(f.name for f in self.fields.values() if f.into == "provenance")

    def derived(self) -> tuple[Field, ...]:
        """Fields read from other names (a Case field of their own)."""
        return tuple(f for f in self.fields.values() if f.sources)

    def recorded_by(self, check: str) -> tuple[Field, ...]:
        """The variables `check` declares from here (base: every check)."""
        return tuple(f for f in self.fields.values() if f.check == check)


def _name_list(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise InputError(f"{where}: expected a list of names")
    return tuple(value)


def _field(name: str, entry: object, where: str) -> Field:
    entry = _mapping(entry, _FIELD_KEYS, where)
    label = entry.get("label")
    if not isinstance(label, str) or not label:
        raise InputError(f"{where}.label: expected the report's name for it")
    perflog = entry.get("perflog")
    for key in ("check", "into"):
        if entry.get(key) is not None and not isinstance(entry[key], str):
            raise InputError(f"{where}.{key}: {excerpt(entry[key])} is not a name")
    if not isinstance(entry.get("run", False), bool):
        raise InputError(f"{where}.run: expected true or false")
    sources = _name_list(entry["from"], f"{where}.from") if "from" in entry else ()
    if sources and (perflog or entry.get("check")):
        raise InputError(f"{where}: a field read from other names is neither in the perflog nor declared by a check")
    return Field(name, label, _choice(entry.get("type"), FIELD_TYPES, f"{where}.type"),
                 None if perflog is None else _choice(perflog, PERFLOG_PLACES, f"{where}.perflog"),
                 entry.get("check"), entry.get("into"), sources, entry.get("run", False))


def _folder_field(name: str, entry: object, where: str) -> Field:
    """A benchmark folder's field: its check records it, and it is no perflog column (the perflog's columns are
    every check's)."""
    found = _field(name, entry, where)
    if found.perflog:
        raise InputError(f"{where}.perflog: a benchmark's own field is no perflog column (provenance.yaml lists those)")
    return found


def load_provenance(path: Path | None = None) -> Provenance:
    """A provenance file's fields; the packaged one's (no path) with the benchmark folders' after them."""
    packaged, path = path is None, path or paths.PACKAGE_DATA / "provenance.yaml"
    data = loaders.load_yaml(path, "provenance registry")
    if not isinstance(data, dict) or not isinstance(data.get("fields"), dict) or not data["fields"]:
        raise InputError(f"{path}: expected fields, a mapping of field names")
    unknown = sorted(set(data) - {"fields", "appendix", "csv"})
    if unknown:
        raise InputError(f"{path}: {unknown[0]}: unknown key")
    fields = {str(name): _field(str(name), entry, f"{path}: fields.{name}") for name, entry in data["fields"].items()}
    if packaged:
        fields = _merged(fields, "provenance", _folder_field)
    appendix = tuple(fields[_choice(n, fields, f"{path}: appendix")]
                     for n in _name_list(data.get("appendix"), f"{path}: appendix"))
    csv = data.get("csv")
    if not isinstance(csv, dict) or not csv:
        raise InputError(f"{path}: csv: expected a mapping of CSV columns to fields")
    return Provenance(fields, appendix,
                      tuple((str(column), fields[_choice(name, fields, f"{path}: csv.{column}")])
                            for column, name in csv.items()))


@functools.lru_cache(maxsize=None)
def provenance() -> Provenance:
    """The packaged provenance registry, read once per process."""
    return load_provenance()
