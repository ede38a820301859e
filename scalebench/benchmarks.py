"""The benchmark registry (scalebench/data/benchmarks.yaml): which report section a check belongs to,
its scaling axis, its figure of merit and which way each figure is better. Data, not code: a new
check gets a report section by adding an entry."""
from __future__ import annotations

import difflib
import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from scalebench import loaders, paths
from scalebench.errors import InputError
from scalebench.validation import excerpt, is_number

SECTIONS = ("hpl", "application", "microbenchmark", "screening")
DIRECTIONS = ("higher", "lower", "none")
CURVE_KINDS = ("bandwidth", "latency")
# What a value of a figure may be (scalebench.results.records checks every case at ingest).
RANGES = ("positive", "non_negative", "any")
_ENTRY_KEYS = {"title", "section", "x", "fom", "figures", "kind", "sized", "series_params", "time", "weak", "suite"}
_SIZED_NAME = re.compile(r"^(?P<figure>.+)_(?P<size>\d+)$")


@dataclass(frozen=True)
class FigureSpec:
    name: str
    direction: str  # higher | lower | none
    label: str
    kind: str | None = None  # bandwidth | latency: a point-to-point curve (n1/2, latency surprise)
    range: str = "any"  # positive | non_negative | any; in % also at most 100
    maximum: float | None = None  # the largest value that can be (registry `max`; default 100 in %)


@dataclass(frozen=True)
class Benchmark:
    name: str  # the check's class name
    title: str
    section: str  # hpl | application | microbenchmark | other
    x: str  # nodes | procs | a parameter name
    fom: str | None
    figures: Mapping[str, FigureSpec]
    kind: str | None = None  # bandwidth | latency: the kind of the figure of merit (microbenchmarks)
    sized: bool = False
    series_params: tuple[str, ...] = ("scale",)
    time: str | None = None  # the run time bake-offs sum
    weak: tuple[str, str] | None = None  # (parameter, value) of weak-scaling cases
    suite: str = ""  # checks whose curves are read together (one for latency, one for bandwidth)

    def figure(self, name: str) -> FigureSpec:
        """A registered figure, or an undirected one for figures the registry does not list."""
        return self.figures.get(name) or FigureSpec(name, "none", name)


def unregistered(name: str) -> Benchmark:
    """What a check missing from the registry is read as: a table under "Other results"."""
    return Benchmark(name, name, "other", "procs", None, {})


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest choice, '' when nothing is close."""
    close = difflib.get_close_matches(str(value)[:100], sorted(set(choices)), n=1)  # a long value: slow, never close
    return f" (did you mean {close[0]!r}?)" if close else ""


def _choice(value: object, allowed: Iterable[str], where: str) -> str:
    allowed = tuple(allowed)
    if value not in allowed:
        raise InputError(f"{where}: {excerpt(value)} is not one of {', '.join(allowed)}"
                         f"{did_you_mean(str(value), allowed)}")
    return str(value)


def _entry(name: str, entry: object, where: str) -> Benchmark:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a mapping")
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise InputError(f"{where}.{unknown[0]}: unknown key{did_you_mean(unknown[0], _ENTRY_KEYS)}")
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
        if not isinstance(spec, dict) or set(spec) - {"direction", "label", "kind", "range", "max"}:
            raise InputError(f"{where}.figures.{figure}: expected direction, label and optionally kind, range "
                             f"and max")
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
        parsed[str(figure)] = FigureSpec(str(figure), direction, str(spec.get("label") or figure), figure_kind,
                                         value_range, None if maximum is None else float(maximum))
    if fom is not None:
        _choice(fom, parsed, f"{where}.fom")
    time = entry.get("time")
    if time is not None:
        _choice(time, parsed, f"{where}.time")
    weak = entry.get("weak")
    if weak is not None and (not isinstance(weak, dict) or len(weak) != 1):
        raise InputError(f"{where}.weak: expected one parameter and its value, e.g. {{scaling: weak}}")
    return Benchmark(
        name=name, title=str(entry.get("title") or name),
        section=_choice(entry.get("section"), SECTIONS, f"{where}.section"),
        x=str(entry.get("x") or "procs"), fom=fom, figures=parsed, kind=kind,
        sized=bool(entry.get("sized", False)),
        series_params=tuple(entry.get("series_params") or ("scale",)), time=time,
        weak=tuple(map(str, next(iter(weak.items())))) if weak else None,  # type: ignore[arg-type]
        suite=str(entry.get("suite") or entry.get("title") or name))


def load(path: Path | None = None) -> dict[str, Benchmark]:
    path = path or paths.PACKAGE_DATA / "benchmarks.yaml"
    data = loaders.load_yaml(path, "benchmark registry") or {}
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of check names")
    return {str(name): _entry(str(name), entry, f"{path}: {name}") for name, entry in data.items()}


@functools.lru_cache(maxsize=None)
def registry() -> dict[str, Benchmark]:
    """The packaged registry, read once per process."""
    return load()


def lookup(name: str) -> Benchmark:
    return registry().get(name) or unregistered(name)


def split_sized(benchmark: Benchmark, figure: str) -> tuple[str, int] | None:
    """('bandwidth', 1024) for 'bandwidth_1024' of a sized check; None for any other figure."""
    if not benchmark.sized:
        return None
    match = _SIZED_NAME.match(figure)
    if match is None or match["figure"] not in benchmark.figures:
        return None
    return match["figure"], int(match["size"])
