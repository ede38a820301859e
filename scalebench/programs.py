"""A benchmark program missing where the job runs is a named failure, not an empty output.

Checks put `guard(program)` before their launch: the job then stops with exit code 127 and one line
naming the program, which `missing(stderr)` finds for the sanity message. The program is looked up
in the job (modules, Spack environments and views set PATH only there), not when ReFrame sets up.
"""
from __future__ import annotations

import shlex
from typing import Callable, TypeVar

from scalebench.errors import ParseError

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
    except (OSError, ParseError) as err:
        return None, f"{what}: {err}"


def missing_in(path: str) -> str | None:
    """missing() of a job's stderr file; None when it cannot be read."""
    try:
        with open(path, errors="replace") as handle:
            return missing(handle.read())
    except OSError:
        return None
