"""Benchmark rooms: a benchmark whose parser, plan rules, outcome (sanity and figures) and report
section live together in one package, scalebench/rooms/<name>/, found here (when first asked for, by
looking into that folder) without being named anywhere else. Its figures and provenance names stay
data (scalebench/data/benchmarks.yaml, provenance.yaml). A room whose check runs as every such check
does (the stack's program on the plan's job, its output read by the room's outcome) declares a Program
and has no code in reframe_tests/: reframe_tests/rooms.py makes its check; other rooms' checks are
written out in reframe_tests/ (the room's docstring names the file).

A room is a package of scalebench/rooms/ defining ROOM, a Room, usually `declare`d: its parser in
output.py (HPL's and hpcc's: the HPL library's), its CheckSpec(s) from rules.checks(), its knobs, if it
has any, in a settings dataclass there, its Program, if it has one, there too, and its section, if it
has one, in section.py. The central places ask this module, never a room by name: scalebench.site_plan
(the room's checks join CHECKS, its settings Settings.rooms), scalebench.parse (its output kind joins
KINDS), reframe_tests/rooms.py (its check, from its Program), the site file (the keys its site.yaml
declares for partitions and stacks join the schema and the partition and environment extras), plan's
-S names (its knobs), scalebench.benchmarks (its report section name) and the report (its section). A
Room's callables import the room's code when called, so that a room may use scalebench.site_plan,
.parse and .reporting, which in turn read the rooms.

HPL's room (scalebench/rooms/hpl) holds its checks' rules and its section; what the rest of the
harness reads of HPL by name (the site's HPL settings, its two programs' outputs, decks, the case plan,
the outcome, the scalability model, tuning) is the library beneath it, scalebench.hpl, from which it
and hpcc's room take their parsers. It leads: its checks open a plan, its section the report.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from scalebench import loaders


@dataclass(frozen=True)
class JobOutput:
    """What a room's outcome reads of a finished job: its standard output and the geometry it ran."""

    stdout: str
    nodes: int
    ranks: int
    threads: int | None  # per rank
    args: tuple[str, ...]  # the program's arguments (the plan's)
    partition: Mapping[str, Any]  # the partition's site keys (a room's own among them)


@dataclass(frozen=True)
class Program:
    """How a room's check runs when it runs as every such check does (reframe_tests/rooms.py): the
    stack's program, launched on the plan's job with the plan's arguments; the room's outcome reads the
    job's standard output. Its outcome has `problems` (sanity: every reason not to trust the figures),
    `figures` ({name: (value, unit)}, named as the check's in scalebench/data/benchmarks.yaml) and
    `recorded` ({variable: value}, of the check's fields in scalebench/data/provenance.yaml)."""

    check: str  # the name of the room's CheckSpec this runs
    descr: str
    stack_key: str  # the stack's key naming the program (the room's site.yaml)
    default: str  # the program when the stack names none, found on PATH where the job runs
    outcome: Callable[[JobOutput], Any]
    output_description: str  # sanity's message when the output holds no result


# A room's site.yaml: {partition: {key: JSON schema}, stack: {key: JSON schema}}; stack keys name programs
# (a stack key's `x-under-spack-view: PATH` is its default under a Spack stack: <view>/PATH).
SITE_PLACES = ("partition", "stack")


@dataclass(frozen=True)
class Room:
    name: str  # its output kind (`scalebench parse NAME`), and its report section when it has one
    parse: Callable[[str], dict]  # an output's text -> a JSON-ready dict; ParseError when it holds no result
    checks: Callable[[], Sequence[Any]]  # its scalebench.site_plan.CheckSpec(s)
    directory: Path  # the room's package directory, holding its site.yaml when it has site keys
    # (results Table, every Series) -> report blocks; None: its checks report in a shared section
    # (benchmarks.yaml `section`, e.g. application), not one of the room's own
    section: Callable[[Any, Sequence[Any]], list[Any]] | None = None
    leads: bool = False  # its checks and its section come before the shared ones (HPL's), not after them
    # its knobs (scalebench.knobs: -S name=value), a frozen dataclass its rules read through
    # scalebench.site_plan.Settings.of; None: it has none
    settings: Callable[[], type] | None = None
    program: Callable[[], Program] | None = None  # None: its checks are written out in reframe_tests/

    def site_keys(self) -> Mapping[str, Mapping[str, Any]]:
        """{partition|stack: {key: JSON schema}} from the room's site.yaml; {} without one."""
        path = self.directory / "site.yaml"
        if not path.is_file():
            return {}
        data = loaders.load_yaml(path, "room site keys")
        unknown = set(data) - set(SITE_PLACES)
        if unknown:
            raise ValueError(f"{path}: {', '.join(sorted(unknown))}: a room's site keys are under "
                             f"{' or '.join(SITE_PLACES)}")
        return {place: dict(data.get(place) or {}) for place in SITE_PLACES}


ROOMS = Path(__file__).with_name("rooms")  # the package scalebench.rooms, one package per room


def declare(package: str, parser: str, section: str | None = None, *, leads: bool = False,
            settings: str | None = None, program: str | None = None) -> Room:
    """The Room of the package `package` (a room's __name__): its output kind is the package's name,
    parsed by `parser` (a function of the room's output.py, or "module.function" of the library)
    returning an object with to_dict(); its checks are rules.checks(), its settings, if it has knobs,
    the dataclass rules.<settings>, its Program, if its check runs as every such check does,
    rules.<program>; its report section, if it has one, is section.<section>(results,
    every series, the section's name). Each module is imported when first called."""
    name = package.rsplit(".", 1)[-1]

    def parser_of(where: str) -> Callable[[str], dict]:
        module, function = where.rsplit(".", 1) if "." in where else (f"{package}.output", where)

        def parse(text: str) -> dict:
            return getattr(importlib.import_module(module), function)(text).to_dict()
        return parse

    def checks() -> Sequence[Any]:
        return importlib.import_module(f"{package}.rules").checks()

    def report(results: Any, all_series: Sequence[Any]) -> list[Any]:
        return getattr(importlib.import_module(f"{package}.section"), str(section))(results, all_series, name)

    def settings_class() -> type:
        return getattr(importlib.import_module(f"{package}.rules"), str(settings))

    def program_of() -> Program:
        return getattr(importlib.import_module(f"{package}.rules"), str(program))

    return Room(name, parser_of(parser), checks, ROOMS / name, report if section else None, leads=leads,
                settings=settings_class if settings else None, program=program_of if program else None)


@functools.cache
def rooms() -> tuple[Room, ...]:
    """Every room, by name. Found in the folder rather than imported by name: a room depends on this
    interface, never the reverse."""
    found = [importlib.import_module(f"scalebench.rooms.{module.name}").ROOM
             for module in pkgutil.iter_modules([str(ROOMS)]) if module.ispkg]
    return tuple(sorted(found, key=lambda room: room.name))


@functools.cache
def site_keys(place: str) -> dict[str, Any]:
    """The site-file keys every room adds to a partition or a stack, with their JSON schemas; a key
    two rooms declare, or one the site schema has already, is a programming error found by the tests."""
    keys: dict[str, Any] = {}
    for room in rooms():
        for key, schema in room.site_keys().get(place, {}).items():
            if key in keys:
                raise ValueError(f"site key {place}.{key} is declared by two rooms")
            keys[key] = schema
    return keys


def settings_classes() -> tuple[type, ...]:
    """The settings dataclasses of the rooms that have knobs, by room name."""
    return tuple(found.settings() for found in rooms() if found.settings is not None)


def section_names(leading: bool) -> tuple[str, ...]:
    """The report sections rooms add, of the leading rooms or of the others: one per room with a
    section of its own."""
    return tuple(room.name for room in rooms() if room.section is not None and room.leads == leading)
