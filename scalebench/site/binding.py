"""How every MPI job binds its ranks to cores, and its threads within them.

Unbound, HPL at 8 ranks x 24 threads lets threads of different ranks share cores (1 rank x 2 BLAS
threads under Open MPI's default one-core binding ran at 50 Gflop/s here, 90 unbound, 92 as 2 bound
ranks). So each rank gets its own `threads_per_rank` cores, as its launcher and MPI spell it
(scalebench/data/mpis.yaml): srun --cpu-bind=cores whatever the MPI (ReFrame's srun launcher passes
--cpus-per-task, which srun no longer takes from sbatch since Slurm 22.05); an MPI's own mpirun as that
MPI binds: Open MPI's --map-by slot:PE=T --bind-to core, MPICH Hydra's -bind-to core:T -map-by core:T,
Intel MPI's I_MPI_PIN_DOMAIN=T:compact of cores, HPE MPT's omplace -nt T. OpenMP threads stay on their
rank's cores (OMP_PLACES=cores, OMP_PROC_BIND=close) unless a placement program places them.

A site overrides: `cpu_bind: none` on a partition leaves binding to its own defaults (Slurm's
TaskPluginParam, say), a stack's own binding flags in `launcher_options` or binding variables of its MPI
in `env_vars` replace these, and OMP_PLACES / OMP_PROC_BIND set by the stack or in the submitting shell
are kept.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Mapping

from scalebench import loaders, paths

CPU_BIND = ("cores", "threads", "none")  # a partition's cpu_bind; the first is the default
# OpenMP's placement of threads: preferences a stack or the user may set themselves.
OPENMP_PLACEMENT = ("OMP_PLACES", "OMP_PROC_BIND")
MPIRUNS = ("mpirun", "mpiexec")  # an MPI's own launcher, by either name


@dataclass(frozen=True)
class Binding:
    launcher_options: tuple[str, ...] = ()
    env_vars: Mapping[str, str] = field(default_factory=dict)
    summary: str = ""


@dataclass(frozen=True)
class Launch:
    """How one launcher binds ranks: its words and variables ({threads} and {unit} to fill in)."""

    options: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)  # cpu_bind -> the launcher's word; absent: cannot
    placed_by: str = ""  # a program that places the OpenMP threads itself

    @classmethod
    def from_table(cls, entry: Mapping[str, Any]) -> Launch:
        return cls(tuple(str(o) for o in entry.get("options", ())),
                   {str(k): str(v) for k, v in (entry.get("env") or {}).items()},
                   {str(k): str(v) for k, v in (entry.get("units") or {}).items()}, str(entry.get("placed_by", "")))

    def filled(self, cpu_bind: str, threads: int) -> tuple[tuple[str, ...], dict[str, str]]:
        """(options, variables) binding `threads` of cpu_bind's unit per rank."""
        unit = self.units[cpu_bind]
        return (tuple(o.format(threads=threads, unit=unit) for o in self.options),
                {k: v.format(threads=threads, unit=unit) for k, v in self.env.items()})


@dataclass(frozen=True)
class Mpi:
    name: str
    family: str  # openmpi, mpich (and its derivatives) or mpt
    features: tuple[str, ...]  # the spellings a stack's features may give it
    srun: Launch  # what it needs besides Slurm's binding
    mpirun: Launch | None  # its own mpirun/mpiexec; None: scalebench cannot bind one
    refused: str = ""  # the fix, when it has no mpirun scalebench binds
    variables: tuple[str, ...] = ()  # binding variables it reads: set by the stack, the stack binds itself


@functools.lru_cache(maxsize=1)
def _table() -> dict:
    return loaders.load_yaml(paths.PACKAGE_DATA / "mpis.yaml", "MPI table")


@functools.lru_cache(maxsize=1)
def mpis() -> dict[str, Mpi]:
    """The MPIs of scalebench/data/mpis.yaml, in the order a stack's features are matched."""
    return {name: Mpi(name, str(entry["family"]), tuple(entry["features"]), Launch.from_table(entry.get("srun") or {}),
                      Launch.from_table(entry["mpirun"]) if entry.get("mpirun") else None,
                      str(entry.get("refused", "")), tuple(entry.get("variables", ())))
            for name, entry in _table()["mpis"].items()}


def stack_mpi(features: tuple[str, ...]) -> Mpi | None:
    """The stack's MPI as its features name it, or None."""
    return next((mpi for mpi in mpis().values() if set(mpi.features) & set(features)), None)


def mpi_flavour(features: tuple[str, ...]) -> str | None:
    """The name of the stack's MPI (intelmpi, mpt, cray-mpich, openmpi, mpich), or None."""
    mpi = stack_mpi(features)
    return mpi.name if mpi else None


def stack_binds(launcher_options: tuple[str, ...]) -> bool:
    return any(option.split("=")[0] in _table()["binding_options"] for option in launcher_options)


def own_binding(features: tuple[str, ...], launcher_options: tuple[str, ...], env: Mapping[str, str]) -> str:
    """How a stack binds its ranks itself: binding words in its launcher_options, or binding variables of
    its MPI set in `env` (the stack's, or the submitting shell's); '' when it does not."""
    if stack_binds(launcher_options):
        return f"the stack's launcher_options ({' '.join(launcher_options)})"
    mpi = stack_mpi(features)
    own = [f"{name}={env[name]}" for name in (mpi.variables if mpi else ()) if name in env]
    return f"the stack's or shell's {' '.join(own)}" if own else ""


def launch(launcher: str, mpi: Mpi | None) -> Launch | None:
    """How `launcher` binds the ranks of `mpi`: srun as Slurm does (with what the MPI adds), an mpirun
    as its MPI does; None when scalebench cannot say (the local launcher, an mpirun of no known MPI)."""
    if launcher == "srun":
        slurm = Launch.from_table(_table()["srun"])
        extra = mpi.srun if mpi else Launch()
        return Launch(slurm.options + extra.options, extra.env, slurm.units)
    return mpi.mpirun if launcher in MPIRUNS and mpi else None


def mpirun_refusal(features: tuple[str, ...], cpu_bind: str) -> str | None:
    """Why scalebench cannot bind the ranks an mpirun of this stack's MPI starts, with the fix (the
    clause after 'partition P launches with mpirun, '); None when it can."""
    mpi = stack_mpi(features)
    if mpi is None:
        return (f"whose rank binding depends on the MPI: name it in the features ({', '.join(mpis())}), or give "
                "the binding flags in launcher_options, or set the partition's cpu_bind: none")
    if mpi.mpirun is None:
        return f"which scalebench does not bind for {mpi.name}: {mpi.refused}, or cpu_bind: none"
    if cpu_bind not in mpi.mpirun.units:
        return (f"whose binding of {mpi.name} has no cpu_bind: {cpu_bind}: set the partition's cpu_bind to "
                f"{' or '.join([*mpi.mpirun.units, 'none'])}")
    return None


def gpu_binding(launcher: str, ranks_per_node: int, gpus_per_node: int) -> tuple[tuple[str, ...], str]:
    """(launcher options, summary) binding each rank to its own GPU: local rank i to GPU i (srun's
    --gpu-bind=map_gpu, which sets CUDA_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES per rank)."""
    if not gpus_per_node:
        return (), ""
    if launcher == "srun" and ranks_per_node == gpus_per_node:
        option = f"--gpu-bind=map_gpu:{','.join(str(i) for i in range(gpus_per_node))}"
        return (option,), f"; GPUs: one per rank ({option})"
    if launcher == "srun":
        return (), f"; GPUs: {gpus_per_node} per node shared by {ranks_per_node} rank(s), none bound"
    return (), f"; GPUs: {launcher} binds none, the binary chooses (hpl.sh binds by local rank)"


def binding(launcher: str, cpu_bind: str, features: tuple[str, ...], stack_options: tuple[str, ...],
            threads_per_rank: int, kept: Mapping[str, str], ranks_per_node: int = 1,
            gpus_per_node: int = 0) -> Binding:
    """The binding of a job of `threads_per_rank` threads per rank (and of its GPUs). `kept`: variables
    the stack or the submitting shell set already (their OpenMP placement wins)."""
    gpu_options, gpu_summary = gpu_binding(launcher, ranks_per_node, gpus_per_node)
    cores = _cpu_binding(launcher, cpu_bind, features, stack_options, threads_per_rank, kept)
    return Binding(cores.launcher_options + gpu_options, cores.env_vars, cores.summary + gpu_summary)


def _cpu_binding(launcher: str, cpu_bind: str, features: tuple[str, ...], stack_options: tuple[str, ...],
                 threads_per_rank: int, kept: Mapping[str, str]) -> Binding:
    threads = {"OMP_NUM_THREADS": str(threads_per_rank)}  # the geometry: never left to the shell
    if cpu_bind == "none":
        return Binding((), threads, "the partition's own (cpu_bind: none)")
    placement = {name: value for name, value in (("OMP_PLACES", cpu_bind), ("OMP_PROC_BIND", "close"))
                 if name not in kept}
    openmp = " ".join(f"{k}={kept.get(k, v)}" for k, v in (("OMP_PLACES", cpu_bind), ("OMP_PROC_BIND", "close")))
    own = own_binding(features, stack_options, kept)
    if own:
        return Binding((), {**threads, **placement}, f"{own}; {openmp}")
    how = launch(launcher, stack_mpi(features))
    if how is None or cpu_bind not in how.units:  # the site check refuses an mpirun it cannot bind
        return Binding((), {**threads, **placement}, f"none (launcher {launcher}); {openmp}")
    options, env = how.filled(cpu_bind, threads_per_rank)
    if how.placed_by:  # it pins each thread: OpenMP's own binding would move them again
        placement, openmp = {}, f"OpenMP threads placed by {how.placed_by}"
    shown = " ".join([*options, *(f"{k}={v}" for k, v in env.items())])
    each = f"{threads_per_rank} {cpu_bind.removesuffix('s') if threads_per_rank == 1 else cpu_bind} per rank"
    return Binding(options, {**threads, **env, **placement}, f"{shown} ({each}); {openmp}")
