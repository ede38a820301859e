"""What a benchmark is here: its parser, plan rules, outcome (sanity and figures) and report section
live together in one package, scalebench/benchmarks/<name>/. Its figures and provenance names stay data
(scalebench/data/benchmarks.yaml, provenance.yaml, or its folder's own benchmark.yaml, which
scalebench.registry merges after them); its check is a class of reframe_tests/ (the benchmark's
docstring names the file).

A benchmark is a package of scalebench/benchmarks/ whose __init__.py builds its BENCHMARK, a Benchmark,
from what it imports: its parser (output.py; HPL's and hpcc's: the HPL library's), its CheckSpecs
(rules.CHECKS), its knobs, if it has any (a settings dataclass), and its section, if it has one
(section.py). scalebench.benchmarks imports every benchmark by name and lists them in BENCHMARKS, which
the central places read: scalebench.site_plan (the benchmarks' checks join CHECKS), plan's -S names and
the checks' knobs (their settings), `scalebench parse` (their output kinds) and the report (their
sections). A benchmark's site keys are data, its site.yaml: the site file's schema and scalebench.site
read them here, beneath the benchmarks' code (which plans on the site).

HPL's benchmark (scalebench/benchmarks/hpl) holds its checks' rules and its section; what the rest of the
harness reads of HPL by name (the site's HPL settings, its two programs' outputs, decks, the case plan,
the outcome, the scalability model, tuning) is the library beneath it, scalebench.hpl, from which it
and hpcc's benchmark take their parsers. It leads: its checks open a plan, its section the report.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from scalebench import loaders


@dataclass(frozen=True)
class JobOutput:
    """What a benchmark's outcome may read of a finished job: its standard output and the geometry it ran."""

    stdout: str
    nodes: int
    ranks: int
    threads: int | None  # per rank
    args: tuple[str, ...]  # the program's arguments (the plan's)
    partition: Mapping[str, Any]  # the partition's site keys (a benchmark's own among them)


# A benchmark's site.yaml: {partition: {key: JSON schema}, stack: {key: JSON schema}}; stack keys name programs
# (a stack key's `x-under-spack-view: PATH` is its default under a Spack stack: <view>/PATH).
SITE_PLACES = ("partition", "stack")


@dataclass(frozen=True)
class Benchmark:
    name: str  # its folder, its output kind (`scalebench parse NAME`), its report section when it has one
    parser: Callable[[str], Any]  # an output's text -> its parse (to_dict()); ParseError when it holds no result
    checks: Sequence[Any]  # its scalebench.check.CheckSpec(s)
    # (results Table, every Series, its name) -> report blocks; None: its checks report in a shared section
    # (benchmarks.yaml `section`, e.g. application), not one of the benchmark's own
    section: Callable[[Any, Sequence[Any], str], list[Any]] | None = None
    leads: bool = False  # its checks and its section come before the shared ones (HPL's), not after them
    # its knobs (scalebench.knobs: -S name=value), a frozen dataclass its rules read through
    # scalebench.check.Settings.of; None: it has none
    settings: type | None = None

    def parse(self, text: str) -> dict:
        """An output's text -> a JSON-ready dict; ParseError when it holds no result."""
        return self.parser(text).to_dict()

    def site_keys(self) -> Mapping[str, Mapping[str, Any]]:
        """{partition|stack: {key: JSON schema}} from the benchmark's site.yaml; {} without one."""
        return _site_keys_of(FOLDER / self.name / "site.yaml")


FOLDER = Path(__file__).with_name("benchmarks")  # the package scalebench.benchmarks, one package per benchmark


def folder_files(name: str) -> list[Path]:
    """Every benchmark's data file `name` (its site.yaml, its benchmark.yaml), in folder order: data that the
    code beneath the benchmarks (scalebench.site, scalebench.registry) reads without importing them
    (scalebench.benchmarks lists the same folders: a unit test holds them together)."""
    return sorted(FOLDER.glob(f"*/{name}"))


def _site_keys_of(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    data = loaders.load_yaml(path, "benchmark site keys")
    unknown = set(data) - set(SITE_PLACES)
    if unknown:
        raise ValueError(f"{path}: {', '.join(sorted(unknown))}: a benchmark's site keys are under "
                         f"{' or '.join(SITE_PLACES)}")
    return {place: dict(data.get(place) or {}) for place in SITE_PLACES}


@functools.cache
def site_keys(place: str) -> dict[str, Any]:
    """The site-file keys every benchmark adds to a partition or a stack, with their JSON schemas; a key
    two benchmarks declare, or one the site schema has already, is a programming error found by the tests.
    Read from the benchmarks' folders, not from their code, which sits above the site file's reading."""
    keys: dict[str, Any] = {}
    for path in folder_files("site.yaml"):
        for key, schema in _site_keys_of(path).get(place, {}).items():
            if key in keys:
                raise ValueError(f"site key {place}.{key} is declared by two benchmarks")
            keys[key] = schema
    return keys
