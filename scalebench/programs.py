"""A benchmark program missing where the job runs is a named failure, not an empty output.

Checks put `guard(program)` before their launch: the job then stops with exit code 127 and one line
naming the program, which `missing(stderr)` finds for the sanity message. The program is looked up
in the job (modules, Spack environments and views set PATH only there), not when ReFrame sets up.
"""
from __future__ import annotations

import os
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
    (parse(), None), else (None, '<what>: <why it could not be read>')."""
    problem = missing_in(stderr_path)
    if problem:
        return None, problem
    try:
        return parse(), None
    except (OSError, ScalebenchError) as err:
        return None, f"{what}: {err}"


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
