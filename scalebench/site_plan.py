"""The plan of a whole site: every case the checks of reframe_tests/ would submit, or why not.

`CHECKS` holds every check's scalebench.check.CheckSpec (the benchmarks' of scalebench.benchmarks, and screening's):
its parameters (the check's ReFrame parameters are declared from them: reframe_tests/base.py
planned_test), the features a partition and a stack need, which partitions can run a variant at all
(`valid`: otherwise ReFrame does not generate the case) and the plan of a case (`plan`: LeftOut says why
it is skipped). The checks call the same functions, so `scalebench plan` and a real run never disagree.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence

from scalebench.check import CasePlan, CheckSpec, Params, Settings
from scalebench.errors import InputError
from scalebench.benchmarks import BENCHMARKS
from scalebench.screening import jobs as screening_jobs
from scalebench.site import reframe_config
from scalebench.site.facts import SystemFacts
from scalebench.site.jobs import LeftOut
from scalebench.site.partition import SCREEN_MIN_NODES, PartitionSpec, Reservation, StackSpec
from scalebench.units import parse_duration
from scalebench.validation import check_name


def asked_reservation(name: str, time_limit: str = "") -> Reservation | None:
    """-S reservation=NAME [-S reservation_time_limit=72h]: every job of the run in that reservation."""
    if not name:
        if time_limit:
            raise InputError("reservation_time_limit: set with reservation=NAME, the reservation it is the length of")
        return None
    check_name("reservation", name)
    return Reservation(name, parse_duration(time_limit, "reservation_time_limit") if time_limit else None)


# --- screening ----------------------------------------------------------------------------------

def _screen_chunks(partitions: Sequence[PartitionSpec]) -> dict[str, list[Any]]:
    """The `chunk` parameter: 1 to the most jobs any partition's nodes take."""
    counts = [screening_jobs.planned_chunks(p) for p in partitions if p.max_nodes >= SCREEN_MIN_NODES]
    return {"chunk": list(range(1, max(counts, default=1) + 1))}


def _valid_screening(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    names = settings.screen_nodes if settings else ()
    return partition.max_nodes >= SCREEN_MIN_NODES and params["chunk"] <= screening_jobs.chunks_for(partition, names)


def _plan_screening(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
    job, screening = screening_jobs.plan_screening(partition, stack, params["chunk"], settings.screen_nodes,
                                                   environ=settings.environ, reservation=settings.reservation)
    return CasePlan(job, screening)


# Every check: a leading benchmark's (HPL's), screening's (one job per chunk of nodes; hpcc's NodeHealthCheck is
# the form for sites that prefer a job per node), then every other benchmark's (scalebench.benchmarks).
CHECKS: dict[str, CheckSpec] = {spec.name: spec for spec in (
    *(spec for found in BENCHMARKS if found.leads for spec in found.checks),
    CheckSpec("ScreeningCheck", ("chunk",), ("screen",), (), _screen_chunks, _valid_screening, _plan_screening,
              needs=f"a partition of at least {SCREEN_MIN_NODES} nodes"),
    *(spec for found in BENCHMARKS if not found.leads for spec in found.checks),
)}


def check_features() -> list[str]:
    """Every feature a check asks of a stack: a stack with none of them serves no check."""
    return sorted({feature for spec in CHECKS.values() for feature in spec.stack_features})


# --- the site -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlannedCase:
    check: str
    params: Mapping[str, Any]
    partition: PartitionSpec
    stack: StackSpec
    plan: CasePlan | None
    left_out: str | None = None

    @property
    def display_name(self) -> str:
        return display_name(self.check, self.params)


def display_name(check: str, params: Mapping[str, Any]) -> str:
    """ReFrame's display name of a variant: 'HPLCheck %scale=2_nodes'."""
    return " ".join([check, *(f"%{name}={value}" for name, value in params.items())])


def variants(spec: CheckSpec, partitions: Sequence[PartitionSpec]) -> Iterator[dict[str, Any]]:
    values = spec.values(partitions)
    for combination in itertools.product(*(values[axis] for axis in spec.axes)):
        yield dict(zip(spec.axes, combination))


def valid_partitions(spec: CheckSpec, params: Params, partitions: Iterable[PartitionSpec],
                     settings: Settings | None = None) -> list[PartitionSpec]:
    """The partitions on which ReFrame generates the variant (features, geometry, opt-in cases)."""
    settings = settings or Settings()
    return [p for p in partitions
            if set(spec.partition_features) <= set(p.features) and spec.valid(p, params, settings)]


@dataclass(frozen=True)
class Filters:
    """ReFrame's selection: -n/-x on the display name without spaces, -p on the environment,
    --system on system[:partition]."""

    names: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()
    environs: tuple[str, ...] = ()
    system: str | None = None

    def __post_init__(self) -> None:
        for pattern in (*self.names, *self.excluded, *self.environs):
            try:
                re.compile(pattern)
            except re.error as err:
                raise InputError(f"filter {pattern!r}: not a regular expression ({err})") from None

    def selects(self, name: str) -> bool:
        """-n and -x alone."""
        flat = name.replace(" ", "")
        if self.names and not any(re.search(p, flat) for p in self.names):
            return False
        return not any(re.search(p, flat) for p in self.excluded)

    def wants(self, name: str, partition: PartitionSpec, stack: StackSpec) -> bool:
        if not self.selects(name):
            return False
        if self.environs and not any(re.search(p, stack.name) for p in self.environs):
            return False
        if self.system:
            system, _, part = self.system.partition(":")
            if system != partition.system or (part and part != partition.name):
                return False
        return True


def plan_cases(partitions: Sequence[PartitionSpec], stacks: Mapping[str, StackSpec],
               environs: Mapping[str, Sequence[str]], settings: Settings | None = None,
               filters: Filters | None = None, checks: Iterable[str] | None = None) -> list[PlannedCase]:
    """Every case of the checks on the partitions (environs: partition name -> stack names), planned
    or left out with the reason, in check, variant, partition and stack order."""
    settings, filters = settings or Settings(), filters or Filters()
    cases = []
    names = checks or [name for name, spec in CHECKS.items() if spec.directory == "reframe_tests"]
    for spec in (CHECKS[name] for name in names):
        for params in variants(spec, partitions):
            name = display_name(spec.name, params)
            for partition in valid_partitions(spec, params, partitions, settings):
                for stack in (stacks[e] for e in environs[partition.name]):
                    if not set(spec.stack_features) <= set(stack.features):
                        continue
                    if not filters.wants(name, partition, stack):
                        continue
                    try:
                        cases.append(PlannedCase(spec.name, params, partition, stack,
                                                 spec.plan(partition, stack, params, settings)))
                    except LeftOut as why:
                        cases.append(PlannedCase(spec.name, params, partition, stack, None, str(why)))
    return cases


def site_specs(config: Mapping[str, Any], facts: SystemFacts | None = None
               ) -> tuple[list[PartitionSpec], dict[str, StackSpec], dict[str, list[str]]]:
    """Partitions, stacks and each partition's stacks from a ReFrame configuration dict (a site file's,
    scalebench.site.siteconf.site_systems, or a site's own with its facts: scalebench.site.reframe_config)."""
    described = reframe_config.describe(config["systems"][0], config["environments"], facts)
    return (list(described.partitions), dict(described.stacks),
            {name: list(stacks) for name, stacks in described.environs.items()})


@dataclass(frozen=True)
class Unplanned:
    """A check that -n/-x select but that has no case on the site: ReFrame would not generate it."""

    check: str
    needs: str  # what it needs, in words
    site_has: str  # what the site has instead


def unplanned_checks(partitions: Sequence[PartitionSpec], stacks: Mapping[str, StackSpec],
                     environs: Mapping[str, Sequence[str]], cases: Sequence[PlannedCase],
                     settings: Settings | None = None, filters: Filters | None = None,
                     checks: Iterable[str] | None = None) -> list[Unplanned]:
    """Every check that -n/-x select and that has no case at all, with what it needs that the
    partitions or their stacks do not have."""
    settings, filters = settings or Settings(), filters or Filters()
    planned = {case.check for case in cases}
    out = []
    for spec in (CHECKS[name] for name in checks or [n for n, s in CHECKS.items() if s.directory == "reframe_tests"]):
        selected = [params for params in variants(spec, partitions) if filters.selects(display_name(spec.name, params))]
        if spec.name in planned or not selected:
            continue
        able = [p for p in partitions if any(valid_partitions(spec, params, [p], settings) for params in selected)]
        if not able:
            need = spec.needs or f"a partition with the feature(s) {', '.join(spec.partition_features)}"
            has = "; ".join(f"{p.name}: {p.max_nodes} node(s), features {', '.join(p.features) or 'none'}"
                            for p in partitions)
            out.append(Unplanned(spec.name, need, has))
            continue
        features = set(spec.stack_features)
        if not any(features <= set(stacks[e].features) for p in able for e in environs[p.name]):
            has = "; ".join(f"{p.name}: " + ", ".join(f"{e} [{', '.join(stacks[e].features)}]"
                                                      for e in environs[p.name]) for p in able)
            out.append(Unplanned(spec.name, f"a stack with the feature(s) {', '.join(sorted(features))}",
                                 f"stacks {has} (a stack's `features:` in the site file say which programs it has)"))
            continue
        out.append(Unplanned(spec.name, "a partition and stack that -p and --system select", "none selected"))
    return out
