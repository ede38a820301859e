"""How a check launches its program: where the job looks for it, and what the launch line runs.

The batch shell loads the stack's modules and exports its variables, and the launched step inherits
them: there the job looks for the program before launching it, and a missing one ends the job with
exit 127 and the line scalebench.programs names. When the step's environment is not the batch shell's
(a container, or a launcher option that may change it: scalebench/data/launch.yaml), the launched
command looks for the program itself, inside the step, then runs it (`sh -c`), so that the same line
comes from where the program would have run.

Variables some ranks only need (the transport evidence, printed by a job's first and last rank) are
exported by the launched command in those ranks, chosen by the rank number the launcher sets. Such a
step also starts later (its image pulled or mounted on every node): its jobs' time limits count it.
"""
from __future__ import annotations

import functools
import math
import shlex
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from scalebench import loaders, paths, programs
from scalebench.site.container import ContainerSpec

# The name the launched `sh -c` script runs as ($0): what ps and a shell's errors show.
SCRIPT_NAME = "scalebench"


@functools.lru_cache(maxsize=None)
def _table() -> dict[str, Any]:
    return loaders.load_yaml(paths.PACKAGE_DATA / "launch.yaml", "launch table")


@functools.lru_cache(maxsize=None)
def _keeps_environment() -> frozenset[str]:
    return frozenset(map(str, _table()["keeps_environment"]))


def environment_options(launcher_options: Sequence[str]) -> tuple[str, ...]:
    """The options (names, as given) of a launch line that may change its step's environment: every
    option but those launch.yaml says keep it; a word without a leading '-' is the previous one's value."""
    names = (word.split("=", 1)[0] for word in launcher_options if word.startswith("-"))
    return tuple(dict.fromkeys(name for name in names if name not in _keeps_environment()))


def step_environment(container: ContainerSpec | None, launcher_options: Sequence[str]) -> str:
    """Why the launched step's environment may not be the batch shell's ('' when it is the same)."""
    if container is not None:
        return f"container ({container.runtime})"
    changing = environment_options(launcher_options)
    return f"launcher option(s) {', '.join(changing)}" if changing else ""


def end_on_dead_rank(launcher: str, stack_options: Sequence[str]) -> tuple[str, ...]:
    """srun's option that ends a step when one of its ranks dies (a segfault, the OOM killer), where
    the others would wait in their next collective until the time limit: the job fails at once, naming
    the rank and its node. Open MPI's and MPICH's mpirun abort so already; a stack that sets it keeps
    its own."""
    own = any(word.split("=", 1)[0] == "--kill-on-bad-exit" or word in ("-K", "-K0", "-K1") for word in stack_options)
    if launcher != "srun" or own:
        return ()
    return ("--kill-on-bad-exit=1",)


@dataclass(frozen=True)
class Startup:
    """How long a step takes to start where its environment is not the batch shell's (its image pulled
    or mounted on every node): what each of its jobs' time limits adds (launch.yaml startup)."""

    base_s: float
    per_node_s: float

    def seconds(self, nodes: int) -> int:
        return math.ceil(self.base_s + self.per_node_s * nodes)


def startup(given: Mapping[str, Any] | None = None) -> Startup:
    """A stack's `startup:` (its shape checked by the site schema), key by key over launch.yaml's default."""
    data = {**_table()["startup"], **(given or {})}
    return Startup(float(data["base_s"]), float(data["per_node_s"]))


@dataclass(frozen=True)
class RankVariables:
    """Variables the launched command exports in some of its ranks only (the transport evidence's, in a
    job's first and last rank), by the rank number its launcher sets (launch.yaml rank_variables)."""

    variables: Mapping[str, str]
    ranks: tuple[int, ...]

    def shell(self) -> str:
        """The `sh` line that exports them in those ranks, e.g.
        case ${OMPI_COMM_WORLD_RANK:-...:-0} in 0|16383) export UCX_LOG_LEVEL=info;; esac"""
        number = functools.reduce(lambda inner, name: f"${{{name}:-{inner}}}",
                                  reversed(_table()["rank_variables"]), "0")
        exports = " ".join(f"{name}={shlex.quote(str(value))}" for name, value in self.variables.items())
        return f"case {number} in {'|'.join(map(str, self.ranks))}) export {exports};; esac"


@dataclass(frozen=True)
class Launch:
    executable: str  # the launch line's program part, ready for the job script
    args: tuple[str, ...]
    prerun: tuple[str, ...]  # job-script lines before the launch


def launch(program: str, args: Sequence[str], *, in_step: bool = False, container: ContainerSpec | None = None,
           directories: Sequence[str] = (), gpu_runtime: str = "", rank_variables: RankVariables | None = None
           ) -> Launch:
    """How a check launches `program` with `args`: looked up (under `directories`, then on PATH) by the
    job in the batch shell, or, in_step (always in a container), by the launched command itself;
    rank_variables exported first, in their ranks only (then the launch is an `sh -c` in any case)."""
    quoted = tuple(shlex.quote(str(arg)) for arg in args)
    first = f"{rank_variables.shell()}; " if rank_variables else ""
    if in_step or container is not None:
        script = f'{first}{programs.locate(program, directories)}; exec "${programs.PROGRAM_VARIABLE}" "$@"'
        wrapper = container.wrapper(gpu_runtime) if container else []
        return Launch(" ".join([*wrapper, "sh", "-c", shlex.quote(script), SCRIPT_NAME]), quoted, ())
    if directories:
        found, prerun = f'"${programs.PROGRAM_VARIABLE}"', programs.locate(program, directories)
    else:
        found, prerun = shlex.quote(program), programs.guard(program)
    if not first:
        return Launch(found, quoted, (prerun,))
    return Launch(" ".join(["sh", "-c", shlex.quote(f'{first}exec "$@"'), SCRIPT_NAME, found]), quoted, (prerun,))
