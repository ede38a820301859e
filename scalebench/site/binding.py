"""How every MPI job binds its ranks to cores, and its threads within them.

Unbound, HPL at 8 ranks x 24 threads lets threads of different ranks share cores (1 rank x 2 BLAS
threads under Open MPI's default one-core binding ran at 50 Gflop/s here, 90 unbound, 92 as 2 bound
ranks). So each rank gets its own `threads_per_rank` cores: srun --cpu-bind=cores (ReFrame's srun
launcher passes --cpus-per-task, which srun no longer takes from sbatch since Slurm 22.05), Open MPI's
--map-by slot:PE=T --bind-to core, MPICH Hydra's -bind-to core:T -map-by core:T; and OpenMP threads
stay on their rank's cores (OMP_PLACES=cores, OMP_PROC_BIND=close).

A site overrides: `cpu_bind: none` on a partition leaves binding to its own defaults (Slurm's
TaskPluginParam, say), a stack's own binding flags in `launcher_options` replace these, and
OMP_PLACES / OMP_PROC_BIND set by the stack or in the submitting shell are kept.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

CPU_BIND = ("cores", "threads", "none")
# Flags that already bind: a stack that passes one binds its ranks itself.
BINDING_FLAGS = ("--cpu-bind", "--cpu_bind", "--bind-to", "-bind-to", "--map-by", "-map-by", "--report-bindings")
# OpenMP's placement of threads: preferences a stack or the user may set themselves.
OPENMP_PLACEMENT = ("OMP_PLACES", "OMP_PROC_BIND")


@dataclass(frozen=True)
class Binding:
    launcher_options: tuple[str, ...] = ()
    env_vars: Mapping[str, str] = field(default_factory=dict)
    summary: str = ""


def mpi_flavour(features: tuple[str, ...]) -> str | None:
    """The stack's MPI as its features name it: 'openmpi', 'mpich' (and its derivatives), or None."""
    return next((f for f in ("openmpi", "mpich") if f in features), None)


def stack_binds(launcher_options: tuple[str, ...]) -> bool:
    return any(option.split("=")[0] in BINDING_FLAGS for option in launcher_options)


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
    unit = "core" if cpu_bind == "cores" else "hwthread"
    placement = {name: value for name, value in (("OMP_PLACES", cpu_bind), ("OMP_PROC_BIND", "close"))
                 if name not in kept}
    openmp = " ".join(f"{k}={kept.get(k, v)}" for k, v in (("OMP_PLACES", cpu_bind), ("OMP_PROC_BIND", "close")))
    if stack_binds(stack_options):
        return Binding((), {**threads, **placement},
                       f"the stack's launcher_options ({' '.join(stack_options)}); {openmp}")
    flavour = mpi_flavour(features)
    if launcher == "srun":
        options: tuple[str, ...] = (f"--cpu-bind={cpu_bind}",)
    elif launcher in ("mpirun", "mpiexec") and flavour == "openmpi":
        options = ("--map-by", f"slot:PE={threads_per_rank}", "--bind-to", unit)
    elif launcher in ("mpirun", "mpiexec") and flavour == "mpich":
        options = ("-bind-to", f"{unit}:{threads_per_rank}", "-map-by", f"{unit}:{threads_per_rank}")
    else:  # the local launcher starts one process; the site check refuses an mpirun of unknown MPI
        return Binding((), {**threads, **placement}, f"none (launcher {launcher}); {openmp}")
    shown = " ".join(options)
    each = f"{threads_per_rank} {cpu_bind.removesuffix('s') if threads_per_rank == 1 else cpu_bind} per rank"
    return Binding(options, {**threads, **placement}, f"{shown} ({each}); {openmp}")
