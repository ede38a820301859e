"""What a check is to the plan: its CheckSpec (parameters, the features it needs, which partitions run a
variant, the plan of a case), the CasePlan of one case, the Settings that change plans, and the rules
every benchmark's checks are written with. Beneath both the benchmarks (scalebench.benchmarks), which
declare their checks with it, and scalebench.site_plan, which gathers them into CHECKS.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from scalebench.knobs import knob
from scalebench.site.jobs import JobPlan, LeftOut, job_plan
from scalebench.site.partition import PartitionSpec, Reservation, StackSpec
from scalebench.site.scales import SCALING_MODES, Scale, scale_names

Params = Mapping[str, Any]
BenchmarkSettings = TypeVar("BenchmarkSettings")


@dataclass(frozen=True)
class CasePlan:
    job: JobPlan | None  # None: a check that runs no job (it compares other cases)
    # The benchmark's own plan beside the job (HPL's deck and grid, a screening job's chunk): plan --json
    # gives its to_json() under its PLAN_KEY.
    detail: Any = None
    note: str = ""
    args: tuple[str, ...] = ()  # the program's arguments the plan decides (OSU's -d cuda D D)


@dataclass(frozen=True)
class Settings:
    """What changes a plan. Its knobs and the benchmarks' (HPL's among them) are the checks' variables and plan's
    -S names (scalebench.knobs); the other fields are read from variables of other forms (a node list, a
    reservation) or the run."""

    threads_per_rank: int | None = knob(None, recorded=True)  # None: 1 (HPL's: HplSettings.threads_per_rank)
    ranks_per_node: int | None = knob(None, recorded=True)  # None: fill the cores
    sweep_nbs: tuple[int, ...] | None = None  # the tuning sweep's NBs; None: scalebench.hpl.tune's
    screen_nodes: tuple[str, ...] = ()  # the nodes to screen (a node list, or the scheduler's); (): max_nodes
    # The submitting shell's variables: what it sets of OpenMP's placement or the BLAS kernel is kept.
    environ: Mapping[str, str] = field(default_factory=dict)
    reservation: Reservation | None = None  # -S reservation=NAME [-S reservation_time_limit=72h]: every job in it
    benchmarks: tuple[Any, ...] = ()  # the benchmarks' settings (their knobs) as the run set them

    def of(self, kind: type[BenchmarkSettings]) -> BenchmarkSettings:
        """A benchmark's settings (a dataclass of its knobs): as the run set them, or their defaults."""
        return next((found for found in self.benchmarks if type(found) is kind), None) or kind()


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


def has_scale(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    return partition.scale(params["scale"]) is not None


def always(partition: PartitionSpec, params: Params, settings: Settings | None = None) -> bool:
    return True


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
    """An application check (a benchmark's): each of its `axis` inputs at every scale of the system, strong and
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
