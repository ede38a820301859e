"""When HPL solved: the core phase Green500 measures power over, as HPL's own output dates it.

- HPL 2.1 to 2.3 (and the embedded xhpl) print, after each result row, the wall-clock start and end
  of that HPL_pdgesv() as ctime(3) does, in the local time of rank 0's node, to the second:

      HPL_pdgesv() start time Wed Dec 11 15:32:05 2019
      HPL_pdgesv() end time   Wed Dec 11 15:32:14 2019

- HPL 2.0 and 1.0 print no time of day: no window.
- hpcc prints "Current time (<epoch>) is ..." at the end of each section: its HPL section runs from
  the one before "Begin of HPL section." to the one before "End of HPL section.", which includes
  matrix generation and the residual checks of every HPL test of the section.

Separate from scalebench.hpl.output (the result rows), which reads none of these lines.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from scalebench.parse._common import lines_of

CORE_PHASE = "HPL_pdgesv"  # one solve, as HPL 2.1+ dates it
HPCC_SECTION = "hpcc HPL section"  # matrix generation and residual checks included

_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov",
                                       "Dec"), start=1)}
_STAMP_RE = re.compile(r"HPL_pdgesv\(\) (start|end) time[ \t]+[A-Z][a-z]{2}[ \t]+([A-Z][a-z]{2})[ \t]+(\d{1,2})"
                       r"[ \t]+(\d{2}):(\d{2}):(\d{2})[ \t]+(\d{4})[ \t]*")
_HPCC_TIME_RE = re.compile(r"Current time \((\d{1,12})\) is .*")


@dataclass(frozen=True)
class Stamp:
    """A time of day as HPL printed it: local to rank 0's node, zone not printed."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int

    def epoch(self, utc_offset_s: int) -> float:
        """Seconds since the epoch, given the node's offset from UTC (seconds east)."""
        local = datetime(self.year, self.month, self.day, self.hour, self.minute, self.second,
                         tzinfo=timezone(timedelta(seconds=utc_offset_s)))
        return local.timestamp()


@dataclass(frozen=True)
class SolveWindow:
    """When one solve (HPL 2.1+) or hpcc's HPL section ran. Epoch seconds when the output gives them
    (hpcc), else the local stamps (HPL), to be placed with the node's UTC offset."""

    kind: str  # CORE_PHASE | HPCC_SECTION
    start: Stamp | float
    end: Stamp | float

    def epochs(self, utc_offset_s: int) -> tuple[float, float]:
        return tuple(t if isinstance(t, float) else t.epoch(utc_offset_s) for t in (self.start, self.end))  # type: ignore[return-value]


def _stamp(match: re.Match[str]) -> Stamp | None:
    month = _MONTHS.get(match[2])
    day, hour, minute, second, year = (int(match[i]) for i in range(3, 8))
    if month is None or not (1 <= day <= 31 and hour < 24 and minute < 60 and second < 61 and 1970 <= year <= 9999):
        return None
    try:
        datetime(year, month, day, hour, minute, min(second, 59))
    except ValueError:  # 31 February
        return None
    return Stamp(year, month, day, hour, minute, min(second, 59))


def solve_windows(text: str) -> list[SolveWindow]:
    """Every dated solve, in output order: one per result row of HPL 2.1+ (a start without its end,
    or an end before its start, is no window), or hpcc's HPL section; [] when the output dates none."""
    windows: list[SolveWindow] = []
    start: Stamp | None = None
    hpcc_last: float | None = None
    hpcc_begin: float | None = None
    for line in lines_of(text):
        line = line.strip()
        match = _STAMP_RE.fullmatch(line)
        if match:
            stamp = _stamp(match)
            if match[1] == "start":
                start = stamp
            elif start is not None and stamp is not None and stamp.epoch(0) >= start.epoch(0):
                windows.append(SolveWindow(CORE_PHASE, start, stamp))
                start = None
            continue
        hpcc = _HPCC_TIME_RE.fullmatch(line)
        if hpcc:
            hpcc_last = float(hpcc[1])
        elif line == "Begin of HPL section.":
            hpcc_begin, hpcc_last = hpcc_last, None
        elif line == "End of HPL section." and hpcc_begin is not None and hpcc_last is not None:
            if hpcc_last >= hpcc_begin:
                windows.append(SolveWindow(HPCC_SECTION, hpcc_begin, hpcc_last))
            hpcc_begin = None
    return windows
