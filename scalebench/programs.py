"""A benchmark program missing where the job runs, or a rank that died, is a named failure, not an
empty output.

Checks put `guard(program)` before their launch: the job then stops with exit code 127 and one line
naming the program, which `missing(stderr)` finds for the sanity message. The program is looked up
in the job (modules, Spack environments and views set PATH only there), not when ReFrame sets up.
A rank killed by a signal, or a job Slurm cancelled, is named from the launcher's own lines
(`ended_early(stderr)`) beside whatever output is missing.
"""
from __future__ import annotations

import os
import re
import shlex
from typing import Callable, Sequence, TypeVar

from scalebench import paths, textfile
from scalebench.errors import ScalebenchError

T = TypeVar("T")

MISSING_MARK = "scalebench: benchmark program not found:"


def guard(program: str) -> str:
    """A job-script line that ends the job, naming the program, unless it is on PATH (or a path)."""
    message = f"{MISSING_MARK} {program}"
    return f"command -v {shlex.quote(program)} >/dev/null || {{ echo {shlex.quote(message)} >&2; exit 127; }}"


def missing(stderr: str) -> str | None:
    """The guard's line in a job's stderr ('benchmark program not found: xhpl'), else None."""
    for line in stderr.splitlines():
        if line.startswith(MISSING_MARK):
            return line[len("scalebench: "):].strip()
    return None


def read_output(stderr_path: str, parse: Callable[[], T], what: str) -> tuple[T | None, str | None]:
    """What a check's sanity reads first: (None, the guard's line) when the program was missing, else
    (parse(), None), else (None, '[how the job ended early; ]<what>: <why it could not be read>')."""
    problem = missing_in(stderr_path)
    if problem:
        return None, problem
    try:
        return parse(), None
    except (OSError, ScalebenchError) as err:
        try:
            early = ended_early(textfile.read_tail(stderr_path, "job stderr", LAUNCHER_TAIL))
        except ScalebenchError:
            early = None
        return None, f"{early + '; ' if early else ''}{what}: {err}"


# Lines a scheduler or MPI launcher writes into a job's output when it ends a job or a rank (srun and
# slurmstepd, Open MPI's and MPICH's mpirun): they say what happened (cancelled, time limit, node
# failure, a rank killed by a signal), where a check's sanity only sees output missing. They come last.
_LAUNCHER_LINE = re.compile(r"^(?:slurmstepd\S*: error: .*|srun: error: .*"
                            r"|.*noticed that process rank \d+ with PID \d+ on node \S+ exited on signal .*"
                            r"|=\s+(?:BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES"
                            r"|RANK \d+ PID \d+ RUNNING AT \S+|KILLED BY SIGNAL: .*|EXIT CODE: \d+)\s*)$", re.M)
LAUNCHER_TAIL = 64 * 1024  # bytes of a job output's end to read them from
_SRUN_TASK = re.compile(r"^srun: error: (?P<node>\S+): tasks? (?P<tasks>[\d,\-]+): (?P<why>.+?)$")
_SRUN_SIGNALS = ("Segmentation fault", "Bus error", "Aborted", "Illegal instruction", "Floating point exception",
                 "Out Of Memory", "Killed")
_SLURM_CANCELLED = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON (?P<node>\S+) CANCELLED AT \S+(?: DUE TO (?P<why>[A-Z ]+?))?"
                              r"\s*\*\*\*")
_SRUN_NODE_FAILURE = re.compile(r"^srun: error: Node failure on (?P<node>\S+)$")
_SLURM_OOM = re.compile(r"Detected \d+ oom[_-]kill events? in StepId=\S+")
_OPEN_MPI = re.compile(r"process rank (?P<rank>\d+) with PID \d+ on node (?P<node>\S+) exited on signal "
                       r"(?P<signal>\d+ \([^)]*\))")
_HYDRA = re.compile(r"RANK (?P<rank>\d+) PID \d+ RUNNING AT (?P<node>\S+)$")
_HYDRA_WHY = re.compile(r"(?:KILLED BY SIGNAL: (?P<signal>\d+ \([^)]*\))|EXIT CODE: (?P<code>\d+))")


def launcher_lines(text: str) -> list[str]:
    """The scheduler's and launcher's lines of a job output, stripped, in order."""
    return [match.group(0).strip() for match in _LAUNCHER_LINE.finditer(text)]


def ended_early(stderr: str) -> str | None:
    """How the launcher or Slurm says the job ended before its ranks did ('task 0 on n1: Segmentation
    fault; job cancelled: time limit'), from the job's stderr; None when they say nothing of the kind."""
    said: list[str] = []
    hydra_rank = None
    for line in launcher_lines(stderr):
        task = _SRUN_TASK.match(line)
        if task and (task["why"] in _SRUN_SIGNALS or task["why"].startswith("Exited with exit code")):
            plural = "s" if "," in task["tasks"] or "-" in task["tasks"] else ""
            said.append(f"task{plural} {task['tasks']} on {task['node']}: {task['why']}")
        elif (failed := _SRUN_NODE_FAILURE.match(line)):
            said.append(f"node {failed['node']} failed")
        elif (cancelled := _SLURM_CANCELLED.search(line)):
            said.append(f"job cancelled{': ' + cancelled['why'].lower() if cancelled['why'] else ''}")
        elif _SLURM_OOM.search(line):
            said.append("the OOM killer ended a task")
        elif (died := _OPEN_MPI.search(line)):
            said.append(f"rank {died['rank']} on {died['node']}: signal {died['signal']}")
        elif (rank := _HYDRA.search(line)):
            hydra_rank = rank
        elif hydra_rank and (why := _HYDRA_WHY.search(line)):
            how = f"signal {why['signal']}" if why["signal"] else f"exit code {why['code']}"
            said.append(f"rank {hydra_rank['rank']} on {hydra_rank['node']}: {how}")
            hydra_rank = None
    # The first task death or cancellation is the cause; the task deaths and bare cancellations after it
    # follow from it (srun --kill-on-bad-exit ends the step, scancel's SIGTERM ends a task with 143).
    # A cancellation with its reason (a time limit, a node failure) is always kept.
    ends = [index for index, fact in enumerate(said) if fact.startswith("task") or fact == "job cancelled"]
    kept = dict.fromkeys(fact for index, fact in enumerate(said) if index not in ends[1:])
    return "; ".join(list(kept)[:3]) or None


def missing_in(path: str) -> str | None:
    """missing() of a job's stderr file; None when it cannot be read."""
    try:
        return missing(textfile.read_text(path, "job stderr"))
    except ScalebenchError:
        return None


PROGRAM_VARIABLE = "SCALEBENCH_PROGRAM"


def locate(program: str, directories: Sequence[str] = ()) -> str:
    """A job-script line that sets $SCALEBENCH_PROGRAM to the first executable `program` under the
    directories (searched recursively, as OSU installs into libexec/osu-micro-benchmarks/mpi/<group>/),
    else on PATH; or ends the job naming the program, as guard() does."""
    message = f"{MISSING_MARK} {program}"
    found = "".join(f"{PROGRAM_VARIABLE}=${{{PROGRAM_VARIABLE}:-$(find {shlex.quote(d)} -type f -name "
                    f"{shlex.quote(program)} -perm -u+x 2>/dev/null | head -n 1)}}; " for d in directories)
    return (f"{PROGRAM_VARIABLE}=; {found}{PROGRAM_VARIABLE}=${{{PROGRAM_VARIABLE}:-$(command -v "
            f"{shlex.quote(program)})}}; [ -n \"${PROGRAM_VARIABLE}\" ] || "
            f"{{ echo {shlex.quote(message)} >&2; exit 127; }}")


def resolve_binary(binary: str) -> str:
    """A relative path (one with a '/') is under the repository, as a stack's spack_env is: project
    files name build/bin/xhpl, never this machine's directories. A bare name stays a name, looked up
    on PATH where the job runs (modules and Spack views set PATH only there)."""
    if "/" in binary and not os.path.isabs(binary):
        return str(paths.REPO_ROOT / binary)
    return binary


def missing_binary(binary: str, what: str) -> str | None:
    """Why a binary of the repository cannot run (e.g. build/bin/xhpl not built yet), else None.
    Other paths and names are the job's to find: its guard names a missing one."""
    if "/" not in binary or os.path.isabs(binary):
        return None
    path = paths.REPO_ROOT / binary
    if path.is_file() and os.access(path, os.X_OK):
        return None
    hint = " (built by scripts/install.sh, which make run calls)" if binary.startswith("build/") else ""
    return f"{what} {binary}: no executable file at that path in the repository{hint}"
