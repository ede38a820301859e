"""A partition and a stack as plain data: what the plan of every case needs from a site file.

`load_site` validates a site file and writes these values into the ReFrame configuration (partition
and environment extras); `PartitionSpec.from_config` and `StackSpec.from_config` read them back, in
the checks (from ReFrame's objects) and in `scalebench plan` (from the configuration dict) alike.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from scalebench.energy.site import EnergySpec
from scalebench.errors import InputError
from scalebench.site import launch, spack_lock
from scalebench.site.container import ContainerSpec
from scalebench.site.scales import Scale, ScaleSpec
from scalebench.units import format_size, parse_duration, parse_size, parse_slurm_size
from scalebench.validation import require_count

# Slurm-like schedulers: the plan writes their options (--nodes, --mem) itself.
SLURM_SCHEDULERS = ("slurm", "squeue")
SCREEN_MIN_NODES = 3  # node screening: fewer nodes have no median to be behind


@dataclass(frozen=True)
class JobOptions:
    """Node sharing for HPL and every multi-node case (site file `job_options:`)."""

    exclusive: bool = True  # --exclusive
    # whole: all of each node's memory (--mem=0, or MaxMemPerNode where the partition sets one); a Slurm
    # --mem value (e.g. 256000M); None: Slurm's default
    memory: str | None = "whole"
    hyperthreads: bool = False  # False: --hint=nomultithread
    constraint: str = ""  # --constraint of every job: one kind of node_kinds, say

    @classmethod
    def from_site(cls, data: Mapping[str, Any] | None, where: str, node_memory: int,
                  max_memory: int | None = None) -> JobOptions:
        """From a site file's `job_options:` (its shape checked by the site schema) or from to_json();
        node_memory: the node's memory in bytes; max_memory: the partition's MaxMemPerNode (None:
        unlimited), which Slurm refuses to exceed and `--mem=0` is refused under."""
        data = data or {}
        memory = data.get("memory", "whole")
        if memory == "whole" and max_memory is not None:
            memory = f"{max_memory // 2**20}M"
        elif memory not in (None, "whole"):
            size = parse_slurm_size(memory, f"{where}.memory")
            bound, named = (max_memory, "max_mem_per_node") if max_memory is not None else (node_memory, "memory_per_node")
            if size < 2**20 or size > bound:
                raise InputError(f"{where}.memory: {format_size(size)} is not between 1 MiB and the partition's "
                                 f"{named} ({format_size(bound)}); 'whole' asks for all of it"
                                 + ("" if max_memory is not None else ", max_mem_per_node (MaxMemPerNode) allows more"))
            memory = f"{size // 2**20}M"  # Slurm takes MiB (and reads 0 as the whole node)
        return cls(data.get("exclusive", True), memory, data.get("hyperthreads", False), data.get("constraint", ""))

    def to_json(self) -> dict[str, Any]:
        found = {"exclusive": self.exclusive, "memory": self.memory, "hyperthreads": self.hyperthreads}
        return {**found, "constraint": self.constraint} if self.constraint else found


@dataclass(frozen=True)
class GpuSpec:
    count: int  # per node
    memory: int  # bytes per GPU
    fp64_gflops: float  # nominal FP64 peak per GPU (the vendor's data sheet)
    arch: str = ""
    model: str = ""
    gres_type: str = ""  # slurm.conf's GRES type (h100): '' asks for any GPU
    request: str = "gres"  # gres: --gres=gpu[:type]:N; gpus-per-node: --gpus-per-node=[type:]N
    policy: str = "gpu-jobs"  # gpu-jobs: only jobs that use GPUs ask for them; every-job: every job does
    # the ReFrame resource a job asks for them through (ReFrame's _rfm_gpu takes num_gpus_per_node); "":
    # the job's own option (request); "access": the partition's access options ask for them already
    resource: str = "gpu"

    @classmethod
    def from_site(cls, data: Mapping[str, Any] | None) -> GpuSpec | None:
        """From a site file's `gpus:` (its shape checked by the site schema) or from to_json()."""
        if data is None:
            return None
        return cls(data["count"], parse_size(data["memory"]), float(data["fp64_tflops"]) * 1000,
                   str(data.get("arch", "")), str(data.get("model", "")), str(data.get("type", "")),
                   str(data.get("request", "gres")), str(data.get("policy", "gpu-jobs")),
                   str(data.get("resource", "gpu")))

    def requested(self, used: int, whole_nodes: bool) -> int:
        """GPUs a job asks for per node when it uses `used` of them: where every job must ask for some,
        all of a whole node's and one of a shared node's."""
        if used or self.policy != "every-job":
            return used
        return self.count if whole_nodes else 1

    @property
    def runtime(self) -> str:
        """The device runtime of OSU's device buffers (-d cuda|rocm): from the arch, '' when it says none."""
        return "cuda" if self.arch.startswith("sm_") else "rocm" if self.arch.startswith("gfx") else ""

    def slurm_option(self, count: str) -> str:
        """The job's GPU request, for `count` GPUs per node (a number, or ReFrame's placeholder)."""
        typed = f"{self.gres_type}:" if self.gres_type else ""
        return f"--gres=gpu:{typed}{count}" if self.request == "gres" else f"--gpus-per-node={typed}{count}"

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "memory": self.memory, "fp64_tflops": self.fp64_gflops / 1000,
                "arch": self.arch, "model": self.model, "type": self.gres_type, "request": self.request,
                "policy": self.policy, "resource": self.resource}


@dataclass(frozen=True)
class Reservation:
    """A Slurm reservation a case's job runs in (sbatch --reservation), and how long its jobs may run."""

    name: str
    time_limit_s: int | None = None  # None: the partition's longest job
    from_nodes: int = 1  # cases of at least this many nodes use it

    @classmethod
    def from_site(cls, data: Mapping[str, Any] | None, max_nodes: int) -> Reservation | None:
        """From a partition's `reservation:` (shape checked by the site schema) or from to_json()."""
        if not data:
            return None
        limit = data.get("time_limit_s", data.get("time_limit"))
        return cls(str(data["name"]), None if limit is None else parse_duration(limit, "reservation.time_limit"),
                   int(data.get("from_nodes") or max_nodes))

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "time_limit_s": self.time_limit_s, "from_nodes": self.from_nodes}


@dataclass(frozen=True)
class PartitionHpl:
    """The partition's HPL defaults, the site keys hpl_* (what -S settings of HPLCheck override)."""

    time_budget_s: float | None = None  # None: memory alone sizes N
    trials: int = 1  # solves of the deck (scalebench.hpl.deck.check_trials bounds them)
    ranks_per_node: int | None = None  # None: fill the cores
    threads_per_rank: int | None = None  # None: 1
    max_grid_aspect: float | None = None  # None: the deck rules'

    @classmethod
    def from_site(cls, extras: Mapping[str, Any], where: str) -> PartitionHpl:
        given = {key[len("hpl_"):]: value for key, value in extras.items() if key.startswith("hpl_")}
        unknown = sorted(set(given) - {f.name for f in fields(cls)})
        if unknown:
            raise InputError(f"{where}: unknown HPL key(s) {', '.join('hpl_' + k for k in unknown)}")
        return cls(**given)


@dataclass(frozen=True)
class PartitionSpec:
    system: str
    name: str
    scheduler: str
    launcher: str
    max_nodes: int
    cores_per_node: int
    memory_per_node: int
    microarch: str
    clock_ghz: float
    flops_per_cycle: int
    features: tuple[str, ...] = ()
    rpeak_derivation: tuple[str, ...] = ()
    time_limit_s: int | None = None  # the partition's default for a job
    max_time_limit_s: int | None = None  # the longest job it grants
    scale_spec: ScaleSpec = field(default_factory=ScaleSpec)
    job_options: JobOptions = field(default_factory=JobOptions)
    gpus: GpuSpec | None = None
    hpl: PartitionHpl = field(default_factory=PartitionHpl)
    screen: Mapping[str, Any] = field(default_factory=dict)  # screen_* extras: chunk_nodes
    cpu_bind: str = "cores"  # how ranks are bound (scalebench.site.binding): cores | threads | none
    reservation: Reservation | None = None  # where its largest cases run (a full-system HPL)
    energy: EnergySpec = field(default_factory=EnergySpec)  # where its energy figures come from
    node_sizing: str = ""  # how HPL is sized where the nodes differ (node_kinds), for plan to say
    extras: Mapping[str, Any] = field(default_factory=dict, compare=False)  # every site key, benchmarks' among them

    def reservation_for(self, nodes: int, asked: Reservation | None = None) -> Reservation | None:
        """The reservation a job of `nodes` nodes runs in: the one asked for on the command line, else
        the partition's for cases of at least its from_nodes."""
        if asked is not None:
            return asked
        return self.reservation if self.reservation and nodes >= self.reservation.from_nodes else None

    @property
    def fullname(self) -> str:
        return f"{self.system}:{self.name}"

    @property
    def slurm_like(self) -> bool:
        return self.scheduler in SLURM_SCHEDULERS

    def scales(self) -> list[Scale]:
        return self.scale_spec.scales(self.max_nodes, self.cores_per_node)

    def scale(self, name: str) -> Scale | None:
        return next((s for s in self.scales() if s.name == name), None)

    def rpeak_gflops(self, nodes: int = 1, cores_per_node: int | None = None) -> float:
        """Nominal CPU Rpeak of `nodes` nodes using `cores_per_node` cores each (default: all)."""
        cores = self.cores_per_node if cores_per_node is None else cores_per_node
        return nodes * cores * self.clock_ghz * self.flops_per_cycle

    @classmethod
    def from_config(cls, system: str, name: str, scheduler: str, launcher: str, extras: Mapping[str, Any],
                    features: tuple[str, ...] = ()) -> PartitionSpec:
        """From the extras `load_site` wrote (see site_configs/sites/example.yaml for their meaning)."""
        where = f"{system}:{name} extras"
        try:
            return cls(
                system=system, name=name, scheduler=scheduler, launcher=launcher,
                max_nodes=require_count(f"{where}.max_nodes", extras["max_nodes"]),
                cores_per_node=require_count(f"{where}.cores_per_node", extras["cores_per_node"]),
                memory_per_node=parse_size(extras["memory_per_node"], f"{where}.memory_per_node"),
                microarch=str(extras.get("microarch", "unknown")),
                clock_ghz=float(extras["clock_ghz"]), flops_per_cycle=int(extras["flops_per_cycle"]),
                features=tuple(features), rpeak_derivation=tuple(extras.get("rpeak_derivation", ())),
                time_limit_s=extras.get("time_limit_s"), max_time_limit_s=extras.get("max_time_limit_s"),
                scale_spec=ScaleSpec.from_site(extras.get("scales")),
                job_options=JobOptions.from_site(extras.get("job_options"), f"{where}.job_options",
                                                 parse_size(extras["memory_per_node"], f"{where}.memory_per_node"),
                                                 extras.get("max_mem_per_node")),
                node_sizing=str(extras.get("node_sizing", "")),
                gpus=GpuSpec.from_site(extras.get("gpus")), cpu_bind=str(extras.get("cpu_bind", "cores")),
                reservation=Reservation.from_site(extras.get("reservation"), extras["max_nodes"]),
                hpl=PartitionHpl.from_site(extras, where),
                screen={key[len("screen_"):]: value for key, value in extras.items() if key.startswith("screen_")},
                energy=EnergySpec.from_json(extras.get("energy")), extras=dict(extras))
        except KeyError as err:
            raise InputError(f"{where}: missing {err.args[0]!r} (describe the partition in a site file)") from None


@dataclass(frozen=True)
class StackSpec:
    name: str  # the ReFrame environment
    stack: str  # the stack name results carry
    features: tuple[str, ...]
    extras: Mapping[str, Any]
    env_vars: Mapping[str, str] = field(default_factory=dict)  # what the stack exports in its jobs
    # (digest, concrete programs) of its spack.lock (extras spack_lock), read as the stack is loaded
    # (once per run: scalebench.site.spack_lock.describe), never while a case is planned
    lock: tuple[str, str] = field(default=("", ""), compare=False)

    def __post_init__(self) -> None:
        path = self.extras.get("spack_lock")
        if path and self.lock == ("", ""):
            object.__setattr__(self, "lock", spack_lock.describe(path))

    @property
    def launcher_options(self) -> tuple[str, ...]:
        return tuple(str(option) for option in self.extras.get("launcher_options", ()))

    @property
    def container(self) -> ContainerSpec | None:
        return ContainerSpec.from_site(self.extras.get("container"))

    @property
    def startup(self) -> launch.Startup:
        """Its step's start-up where the step's environment is not the batch shell's (scalebench.site.launch)."""
        return launch.startup(self.extras.get("startup"))

    @classmethod
    def from_config(cls, name: str, features: tuple[str, ...], extras: Mapping[str, Any],
                    env_vars: Mapping[str, Any] | Any = ()) -> StackSpec:
        """env_vars: ReFrame's mapping or the configuration's [name, value] pairs."""
        pairs = env_vars.items() if isinstance(env_vars, Mapping) else env_vars
        return cls(name, str(extras.get("stack", name)), tuple(features), dict(extras),
                   {str(k): str(v) for k, v in pairs})
