"""The command line called in-process, as the unit tests of bad input call it: the exit status, stdout and
stderr of one `scalebench` command, and the one-line error a bad input must give."""
from __future__ import annotations

from scalebench.cli import main


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
