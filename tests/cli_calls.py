"""The command line as the unit tests of bad input call it, in-process (cli: the exit status, stdout and
stderr of one `scalebench` command) or as a process (scalebench), and the one-line error a bad input
must give."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from scalebench.cli import main

SCALEBENCH = Path(sys.executable).with_name("scalebench")


def cli(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = main(list(args))
    except SystemExit as stop:
        status = stop.code
    out, err = capsys.readouterr()
    return status, out, err


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and len(lines[0]) < 1000, err[:2000]
    return lines[0]


def scalebench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCALEBENCH), *args], capture_output=True, text=True, env=env, timeout=120)


def error_line(proc: subprocess.CompletedProcess) -> str:
    """The failed command's only line on stderr."""
    assert proc.returncode != 0, proc.stdout
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]
