"""The plan of a whole site: every case the checks of reframe_tests/ would submit, or why not.

`CHECKS` names each check, its parameters (the check's ReFrame parameters are declared from them:
reframe_tests/base.py planned_test), the features a partition and a stack need, which partitions can
run a variant at all (`valid`: otherwise ReFrame does not generate the case) and the plan of a case
(`plan`: LeftOut says why it is skipped). The checks call the same functions, so `scalebench plan`
and a real run never disagree.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from scalebench import room
from scalebench.errors import InputError
from scalebench.hpl.case_plan import HplPlan
from scalebench.knobs import knob
from scalebench.screening import jobs as screening_jobs
from scalebench.site import reframe_config
from scalebench.site.facts import SystemFacts
from scalebench.site.jobs import JobPlan, LeftOut, job_plan
from scalebench.site.partition import SCREEN_MIN_NODES, PartitionSpec, Reservation, StackSpec
from scalebench.site.scales import SCALING_MODES, Scale, scale_names
from scalebench.units import parse_duration
from scalebench.validation import check_name

Params = Mapping[str, Any]
RoomSettings = TypeVar("RoomSettings")


@dataclass(frozen=True)
class CasePlan:
    job: JobPlan | None  # None: a check that runs no job (it compares other cases)
    hpl: HplPlan | None = None
    note: str = ""
    args: tuple[str, ...] = ()  # the program's arguments the plan decides (OSU's -d cuda D D)
    screening: screening_jobs.ScreeningJob | None = None


@dataclass(frozen=True)
class Settings:
    """What changes a plan. Its knobs and the rooms' (HPL's among them) are the checks' variables and plan's
    -S names (scalebench.knobs); the other fields are read from variables of other forms (a node list, a
    reservation) or the run."""

    threads_per_rank: int | None = knob(None, recorded=True)  # None: 1 (HPL's: HplSettings.threads_per_rank)
    ranks_per_node: int | None = knob(None, recorded=True)  # None: fill the cores
    sweep_nbs: tuple[int, ...] | None = None  # the tuning sweep's NBs; None: scalebench.hpl.tune's
    screen_nodes: tuple[str, ...] = ()  # the nodes to screen (a node list, or the scheduler's); (): max_nodes
    # The submitting shell's variables: what it sets of OpenMP's placement or the BLAS kernel is kept.
    environ: Mapping[str, str] = field(default_factory=dict)
    reservation: Reservation | None = None  # -S reservation=NAME [-S reservation_time_limit=72h]: every job in it
    rooms: tuple[Any, ...] = ()  # the rooms' settings as the run set them (scalebench.room: a room's knobs)

    def of(self, kind: type[RoomSettings]) -> RoomSettings:
        """A room's settings (a dataclass of its knobs): as the run set them, or their defaults."""
        return next((found for found in self.rooms if type(found) is kind), None) or kind()


@dataclass(frozen=True)
class CheckSpec:
    name: str
    axes: tuple[str, ...]  # parameter names, in the order of the check's display name
    stack_features: tuple[str, ...]
    partition_features: tuple[str, ...]
    values: Callable[[Sequence[PartitionSpec]], Mapping[str, Sequence[Any]]]
    valid: Callable[[PartitionSpec, Params, Settings], bool]
    plan: Callable[[PartitionSpec, StackSpec, Params, Settings], CasePlan]
    directory: str = "reframe_tests"  # tuning checks run only when named: reframe_tests/tuning
    needs: str = ""  # what `valid` asks of a partition, in words (plan says it when no partition has it)


def asked_reservation(name: str, time_limit: str = "") -> Reservation | None:
    """-S reservation=NAME [-S reservation_time_limit=72h]: every job of the run in that reservation."""
    if not name:
        if time_limit:
            raise InputError("reservation_time_limit: set with reservation=NAME, the reservation it is the length of")
        return None
    check_name("reservation", name)
    return Reservation(name, parse_duration(time_limit, "reservation_time_limit") if time_limit else None)


def has_scale(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    return partition.scale(params["scale"]) is not None


def always(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    return True


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
    return CasePlan(job, screening=screening)


def case_job(partition: PartitionSpec, stack: StackSpec, scale: str | Scale, settings: Settings,
             **layout: Any) -> JobPlan:
    """job_plan with what the run's settings say of every job: the shell's variables, a reservation."""
    return job_plan(partition, stack, scale, environ=settings.environ, reservation=settings.reservation, **layout)


# --- applications -------------------------------------------------------------------------------

def _plan_app(partition: PartitionSpec, stack: StackSpec, params: Params, settings: Settings) -> CasePlan:
    job = case_job(partition, stack, params["scale"], settings, threads_per_rank=settings.threads_per_rank,
                   ranks_per_node=settings.ranks_per_node)
    if job.step_environment:  # LAMMPS's help probe and OpenFOAM's case preparation run in the batch shell
        raise LeftOut(f"stack {stack.stack} runs its programs where the batch shell does not see them "
                      f"({job.step_environment}): the application checks prepare their inputs in the batch "
                      "shell; not supported yet")
    return CasePlan(job)


@dataclass(frozen=True)
class _AppValues:
    """The `values` of an application check: every scale of the system, each input, both scaling modes
    (a value, not a closure, so that two declarations of one check compare equal)."""

    axis: str
    inputs: Callable[[], Iterable[str]]

    def __call__(self, partitions: Sequence[PartitionSpec]) -> dict[str, list[Any]]:
        return {**system_scales(partitions), self.axis: list(self.inputs()), "scaling": list(SCALING_MODES)}


def app_check(name: str, axis: str, inputs: Callable[[], Iterable[str]], feature: str,
              valid: Callable[..., bool] | None = None) -> CheckSpec:
    """An application check (a room's): each of its `axis` inputs at every scale of the system, strong and
    weak scaling, each case one job of the application layout; `valid` (default: the partition has the
    scale) may leave variants out."""
    return CheckSpec(name, ("scale", axis, "scaling"), (feature,), (), _AppValues(axis, inputs), valid or has_scale,
                     _plan_app)


def system_scales(partitions: Sequence[PartitionSpec]) -> dict[str, list[Any]]:
    """The `scale` parameter of the scaling checks: every scale of the system's partitions."""
    return {"scale": scale_names(p.scales() for p in partitions)}


def fixed_values(**values: Sequence[Any]) -> Callable[[Sequence[PartitionSpec]], Mapping[str, Sequence[Any]]]:
    """A check's `values` that are the same on every site."""
    return lambda partitions: {name: list(v) for name, v in values.items()}


# Every check: a leading room's (HPL's), screening's (one job per chunk of nodes; hpcc's NodeHealthCheck is
# the form for sites that prefer a job per node), then every other room's (scalebench.room).
CHECKS: dict[str, CheckSpec] = {spec.name: spec for spec in (
    *(spec for found in room.rooms() if found.leads for spec in found.checks()),
    CheckSpec("ScreeningCheck", ("chunk",), ("screen",), (), _screen_chunks, _valid_screening, _plan_screening,
              needs=f"a partition of at least {SCREEN_MIN_NODES} nodes"),
    *(spec for found in room.rooms() if not found.leads for spec in found.checks()),
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
    return [p for p in partitions if set(spec.partition_features) <= set(p.features) and spec.valid(p, params, settings)]


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
            has = "; ".join(f"{p.name}: " + ", ".join(f"{e} [{', '.join(stacks[e].features)}]" for e in environs[p.name])
                            for p in able)
            out.append(Unplanned(spec.name, f"a stack with the feature(s) {', '.join(sorted(features))}",
                                 f"stacks {has} (a stack's `features:` in the site file say which programs it has)"))
            continue
        out.append(Unplanned(spec.name, "a partition and stack that -p and --system select", "none selected"))
    return out
