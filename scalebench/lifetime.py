"""Children die with their parent: a scalebench killed outright (SIGKILL, the OOM killer) leaves no
process behind, and so no pipe held open for whoever reads its output.

Linux's PR_SET_PDEATHSIG sends a child a signal when the thread that started it ends. `spawn` starts a
program through a few lines of Python that ask for it and then exec the program (a preexec_fn could
deadlock in a process with threads: polars runs some); a Python child of scalebench's own asks for it
itself (`die_with_parent`). Either checks that the parent is still there once it has asked, so a parent
gone in between is not missed. Elsewhere (not Linux) the children are left as they were: the chart
worker still ends when its input pipe closes.

What a child starts in turn, in sessions of its own (ReFrame's local jobs: mpirun and its ranks), is
found by its environment: `end_marked` ends every process whose environment has a variable scalebench
set for it alone (SCALEBENCH_RUN_DIR=<the run directory>).
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from scalebench import interrupts

_PR_SET_PDEATHSIG = 1

# argv: the signal, the parent's pid, the program's path, then its argv; exit 127 as a shell's when the
# program cannot be run (its reason on stderr). It starts with the signals that end a command blocked
# (`spawn`): one sent meanwhile ends it as it would the program, quietly, when they are unblocked just
# before the exec, never as a traceback of these lines.
_TRAMPOLINE = """import ctypes, os, signal, sys
ending = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
for sig in ending:
    signal.signal(sig, signal.SIG_DFL)
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, int(sys.argv[1]), 0, 0, 0)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[2]):
    os._exit(128 + int(sys.argv[1]))
signal.pthread_sigmask(signal.SIG_UNBLOCK, ending)
try:
    os.execv(sys.argv[3], sys.argv[4:])
except OSError as err:
    sys.stderr.write(f"{sys.argv[3]}: {err.strerror}\\n")
    os._exit(127)
"""
_ENDING = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


def die_with_parent(parent: int, sig: int = signal.SIGKILL) -> None:
    """In a child of `parent`: get `sig` when the parent ends; end now if it has already."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    if os.getppid() != parent:
        os._exit(128 + int(sig))


def spawn(argv: Sequence[str], *, parent_death: int = signal.SIGTERM, env: dict[str, str] | None = None,
          **popen: Any) -> subprocess.Popen:
    """subprocess.Popen(argv, env=env, **popen), the child getting `parent_death` when this process ends.
    FileNotFoundError, as Popen's, when the program is not found."""
    program = argv[0] if os.sep in argv[0] else shutil.which(argv[0], path=(env or os.environ).get("PATH"))
    if program is None or not os.access(program, os.X_OK):
        raise FileNotFoundError(2, "No such file or directory", argv[0])
    command = [sys.executable, "-I", "-S", "-c", _TRAMPOLINE, str(int(parent_death)), str(os.getpid()), program,
               *argv]
    with interrupts.deferred():  # an interruption inside Popen could lose the child or close a pipe twice
        held = signal.pthread_sigmask(signal.SIG_BLOCK, _ENDING)  # inherited: see _TRAMPOLINE
        try:
            return subprocess.Popen(command, env=env, **popen)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _marked(variable: str, value: str) -> list[int]:
    """The processes (of this user, or all for root) whose environment holds variable=value."""
    wanted = f"{variable}={value}".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = Path(entry.path, "environ").read_bytes()
        except OSError:  # gone, or another user's
            continue
        if wanted in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def end_marked(variable: str, value: str, grace: float = 5.0) -> list[int]:
    """End the processes whose environment holds variable=value: SIGTERM, then SIGKILL to those still
    there after `grace` seconds; the pids found. Nothing where there is no /proc."""
    if not os.path.isdir("/proc"):
        return []
    found = _marked(variable, value)
    for pid in found:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    left = found
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _marked(variable, value)  # a zombie's environment reads empty: it is gone
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return found
