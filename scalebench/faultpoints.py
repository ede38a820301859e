"""Named moments at which a test stops this process, to kill or interrupt it there and nowhere else.

SCALEBENCH_STOP_AT=<pattern> (fnmatch, against the names passed to `reached`) makes the process stop
itself with SIGSTOP at a matching point; the test sees it stopped (state T in /proc/<pid>/stat), sends
its signal and SIGCONT. Unset, as everywhere but in the tests, a point costs one lookup.
"""
from __future__ import annotations

import fnmatch
import os
import signal

VARIABLE = "SCALEBENCH_STOP_AT"


def reached(name: str) -> None:
    pattern = os.environ.get(VARIABLE)
    if pattern and fnmatch.fnmatchcase(name, pattern):
        os.kill(os.getpid(), signal.SIGSTOP)
