"""Runs cut short: a run directory that holds no run report, because ReFrame was killed with its checks
(SIGKILL, the OOM killer, a node lost) or is still running. report, accept, compare, screen and
references freeze name each one with what it was running and since when, and never count it as a run;
the figures of the cases it finished are still read from its perflogs (scalebench.reporting.store),
and accept cannot decide while a case it needs may be missing for that reason.

What it was running comes from ReFrame's log (reframe.log in the run directory): the cases with a RUN
line and no line that ends them. Whether it is still running comes from the directory's name,
<UTC time>-<host>-<pid> (scalebench.site.rundir): on this host, a process of that pid that is a
scalebench or a ReFrame is taken to be the run's.
"""
from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

from scalebench import loaders, textfile
from scalebench.errors import InputError
from scalebench.validation import excerpt_text

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# [2026-11-28T04:04:10.311516] info: reframe: [ RUN      ] HPLCheck %scale=1_core /100cb892 @local:default+openmpi-sm
_LINE = re.compile(r"^\[(?P<time>[^\]]+)\] \w+: [^:]*: \[\s*(?P<status>[A-Z]+)\s*\] (?:\(\s*\d+/\d+\) )?"
                   r"(?P<case>.+? /[0-9a-f]+ @(?P<system>[^:\s]+):\S+)\s*$", re.M)
_NAME = re.compile(r"(?P<stamp>\d{8}T\d{6}Z)-(?P<host>.+)-(?P<pid>\d+)")
_LOG_READ = 16 * 2**20  # the end of a longer log: a session's RUN lines are near its end when it stops
MAX_CASES_NAMED = 5


@dataclass(frozen=True)
class CutShort:
    run_dir: Path
    state: str  # killed | still running | killed or still running, with the process and host
    since: str  # when the run began
    running: tuple[tuple[str, str], ...]  # (case, when it began) for each case begun and not ended
    systems: tuple[str, ...]  # ReFrame systems of the cases it began: a criterion of another is not its
    logged: bool = True  # its reframe.log was read
    perflogs: bool = False  # the figures of the cases it finished were read from its perflogs

    def describe(self) -> str:
        if self.running:
            shown = [f"{case} (since {when})" for case, when in self.running[:MAX_CASES_NAMED]]
            more = f" and {len(self.running) - MAX_CASES_NAMED} more" if len(self.running) > MAX_CASES_NAMED else ""
            doing = f"it was running {', '.join(shown)}{more}"
        elif self.logged:
            doing = "no check was running"
        else:
            doing = "no reframe.log says what it was running"
        return (f"{self.run_dir}: cut short, no report.json ({self.state}; begun {self.since}): {doing}; "
                "not counted as a run")


def find(run_dir: Path) -> CutShort:
    """What the run directory `run_dir` (which holds no run report) says of itself."""
    log = _log(run_dir / "reframe.log")
    cases: dict[str, str] = {}
    systems: dict[str, None] = {}
    first = ""
    for match in _LINE.finditer(log or ""):
        first = first or match["time"]
        systems.setdefault(match["system"])
        if match["status"] == "RUN":
            cases[match["case"]] = match["time"]
        else:  # OK, FAIL, SKIP, ABORT, XFAIL, ...: the case ended
            cases.pop(match["case"], None)
    running = tuple((excerpt_text(case, 160), when) for case, when in cases.items())
    return CutShort(run_dir, _state(run_dir.name), _began(run_dir) or first or "at an unknown time", running,
                    tuple(systems), logged=log is not None)


def _log(path: Path) -> str | None:
    try:
        text = textfile.read_tail(path, "ReFrame log", _LOG_READ)
    except InputError:
        return None
    return _ANSI.sub("", text)


def _began(run_dir: Path) -> str:
    try:
        created = loaders.load_json(run_dir / "provenance.json", "provenance", 2**20).get("created_utc")
    except (InputError, AttributeError, json.JSONDecodeError):
        created = None
    if isinstance(created, str) and created:
        return excerpt_text(created, 40)
    match = _NAME.fullmatch(run_dir.name)
    return match["stamp"] if match else ""


def _state(name: str) -> str:
    match = _NAME.fullmatch(name)
    if not match:
        return "killed, or still running"
    host, pid = match["host"], int(match["pid"])
    if host != socket.gethostname():
        return f"killed, or still running on {excerpt_text(host, 80)}"
    return f"still running, process {pid}" if _runs_it(pid) else f"killed: its process {pid} is gone"


def _runs_it(pid: int) -> bool:
    """Whether process `pid` of this host is a scalebench or a ReFrame (a pid reused by another program
    is not the run's)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True  # no /proc: alive is all there is to know
    return b"scalebench" in command or b"reframe" in command
