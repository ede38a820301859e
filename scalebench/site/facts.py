"""Facts: what no ReFrame configuration holds of a site's system, given beside the configuration as it is.

A facts file names the system (its ReFrame name) and, by the configuration's own partition and
environment names, what scalebench needs and ReFrame has no place for: a partition's node count, the
memory that sizes HPL, the clock; an environment's benchmark programs and the checks they serve
(`features`). The keys are the site file's (site_configs/sites/example.yaml), less those a ReFrame
configuration holds (scalebench/data/schemas/facts.yaml). The same facts may sit in the configuration
itself, under `extras: {scalebench: {...}}` of a partition or an environment.

SCALEBENCH_FACTS names the facts files: a file, a directory of *.yaml files, or several of either
separated by ':'. The file whose `system` is the one ReFrame runs on is used; the others are not read
further. `scalebench facts slurm` writes what Slurm knows of a partition in this form.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from scalebench import loaders, schema
from scalebench.errors import InputError

FACTS_VARIABLE = "SCALEBENCH_FACTS"
EXTRAS_KEY = "scalebench"  # a partition's or environment's extras entry holding its facts
MAX_FACTS_FILES = 1000  # in one directory: a facts directory holds a file per system


@dataclass(frozen=True)
class SystemFacts:
    system: str
    source: str  # the file, for messages
    partitions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    environments: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


def facts_files(given: str, where: str = FACTS_VARIABLE) -> list[Path]:
    """The files SCALEBENCH_FACTS (or --facts, `where`) names, in order; InputError for one that does not exist."""
    files: list[Path] = []
    # ReFrame imports a check file from the file's own directory: a relative name is the shell's.
    launched_in = Path(os.environ.get("PWD") or os.getcwd())
    for part in filter(None, given.split(os.pathsep)):
        path = launched_in / Path(part).expanduser()
        if path.is_dir():
            found = sorted(p for p in path.glob("*.yaml") if p.is_file())
            if len(found) > MAX_FACTS_FILES:
                raise InputError(f"{where}: {path} holds {len(found)} YAML files; a facts directory holds one "
                                 f"per system (at most {MAX_FACTS_FILES})")
            files += found
        elif path.exists() or path.is_symlink():
            files.append(path)
        else:
            raise InputError(f"{where}: {part} does not exist (a facts file, or a directory of them)")
    return files


def read_facts(path: Path) -> SystemFacts:
    """One facts file, checked against scalebench/data/schemas/facts.yaml."""
    data = loaders.load_yaml(path, "facts file")
    schema.check(data, "facts.yaml", str(path))
    return SystemFacts(str(data["system"]), str(path), dict(data.get("partitions") or {}),
                       dict(data.get("environments") or {}))


def system_facts(system: str, given: str | None = None, where: str = FACTS_VARIABLE) -> SystemFacts | None:
    """The facts of `system` from the files `given` names (default: $SCALEBENCH_FACTS; `where` says which in
    messages); None when no file describes it. InputError when two do."""
    given = os.environ.get(FACTS_VARIABLE, "") if given is None else given
    found = [facts for facts in map(read_facts, facts_files(given, where)) if facts.system == system]
    if len(found) > 1:
        raise InputError(f"{where}: system {system} is described twice ({found[0].source} and "
                         f"{found[1].source}); keep one file per system")
    return found[0] if found else None


def described_systems(given: str | None = None) -> list[str]:
    """The systems the facts files describe (for the message when none is the one asked for)."""
    given = os.environ.get(FACTS_VARIABLE, "") if given is None else given
    return [read_facts(path).system for path in facts_files(given)]


def merged(kind: str, name: str, facts: SystemFacts | None, extras: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """({key: value}, where they were given) of a partition or an environment (`kind`): the facts file's
    and the configuration's extras' `scalebench` entry together; a key both give is an InputError.
    `where` is '' when neither lists it (one listed without a fact is described, and lacks them all)."""
    definition = "partition" if kind == "partitions" else "environment"
    inline = extras.get(EXTRAS_KEY)
    sources = []
    found: dict[str, Any] = {}
    if inline is not None:
        where = f"ReFrame configuration, {definition} {name}: extras.{EXTRAS_KEY}"
        schema.check({"system": "inline", kind: {name: inline}}, "facts.yaml", where)
        found.update(inline)
        sources.append(where)
    listed = facts is not None and name in getattr(facts, kind)
    given = (getattr(facts, kind).get(name) if facts else None) or {}
    if listed:
        twice = sorted(set(given) & set(found))
        if twice:
            raise InputError(f"{facts.source}: {kind}.{name}: {', '.join(twice)} also given in its extras.{EXTRAS_KEY} "  # type: ignore[union-attr]
                             "of the ReFrame configuration; give each fact once")
        found.update(given)
        sources.append(f"{facts.source}: {kind}.{name}")  # type: ignore[union-attr]
    return found, " and ".join(sources)
