"""The `scalebench` command's entry point. Ctrl-C, SIGTERM or SIGHUP while Python is still importing the
command line end it as scalebench.interrupts does once the command runs: one line and 128 + the signal,
not a traceback out of an import (nothing is written yet, so nothing is left to clean). Once the command
is done, a signal while Python shuts down is ignored: the exit status is the command's."""
from __future__ import annotations

import os
import signal


def _early(signum: int, frame: object) -> None:
    os.write(2, b"scalebench: interrupted\n")
    os._exit(128 + signum)


_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def main() -> int:
    for sig in _SIGNALS:
        signal.signal(sig, _early)
    from scalebench.cli import main as command_line

    status = command_line()
    for sig in _SIGNALS:  # the command is done: a signal while Python shuts down changes nothing
        signal.signal(sig, signal.SIG_IGN)
    return status
