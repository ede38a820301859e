"""The `scalebench` command's entry point. Ctrl-C, SIGTERM or SIGHUP while Python is still importing the
command line end it as scalebench.interrupts does once the command runs: one line and 128 + the signal,
not a traceback out of an import (nothing is written yet, so nothing is left to clean)."""
from __future__ import annotations

import os
import signal


def _early(signum: int, frame: object) -> None:
    os.write(2, b"scalebench: interrupted\n")
    os._exit(128 + signum)


def main() -> int:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _early)
    from scalebench.cli import main as command_line

    return command_line()
