"""Parser for NetPIPE 3.7 output (Debian's NPtcp, NPopenmpi, NPmpich2 ...), in either form.

NetPIPE 3.7 writes each measured point twice (src/netpipe.c):

* to its output file (np.out, or ``-o file``) as ``fprintf(out, "%8d %lf %12.8lf", bytes,
  Mbps, seconds)``, e.g. ``     131 25.317380   0.00003948``, where seconds is the
  round-trip time divided by two;
* to the screen (stderr) as ``"%3d: %7d bytes %6d times --> "`` then
  ``" %8.2lf Mbps in %10.2lf usec"``, e.g.
  ``  0:       1 bytes   1653 times -->      0.61 Mbps in      12.53 usec``.

Both give ``rows`` of {bytes, mbps, usec}. NetPIPE's "Mbps" is 2**20 bits per second
(bits / (t * 1024 * 1024)); it is kept as printed, not converted. In bi-directional mode (-2)
the file's bytes column counts both directions while the screen shows one message. When a
text holds both forms (screen and file captured together), the screen rows are used.
Integrity-check runs (-i) print no throughput and give no rows. A throughput or time that cannot be
(not finite, negative, beyond its quantity's bound: scalebench.parse._common.refusal; a time of 0,
which NetPIPE prints with its rate infinite) is null in its row and named in ``warnings``: no peak or
latency is made of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scalebench.errors import ParseError
from scalebench.parse._common import (VALUE, Value, complete_text, finite_max, finite_min, lines_of, refused_or,
                                      shift_decimal, to_value, with_note)

_FILE_ROW_RE = re.compile(rf"(\d{{1,18}})[ \t]+({VALUE})[ \t]+({VALUE})")
_SCREEN_ROW_RE = re.compile(
    rf"\d{{1,9}}:[ \t]*(\d{{1,18}})[ \t]+bytes[ \t]+\d{{1,18}}[ \t]+times[ \t]+-->[ \t]*"
    rf"({VALUE})[ \t]+Mbps[ \t]+in[ \t]+({VALUE})[ \t]+usec\b"
)

FORM_FILE = "np.out"
FORM_SCREEN = "stdout"


def _seconds_to_usec(token: str) -> Value:
    """Seconds as printed -> microseconds, rounded once (0.00003948 -> 39.48 exactly)."""
    value = to_value(token)
    return shift_decimal(token, 6) if isinstance(value, float) else value


@dataclass(frozen=True)
class NetpipeRow:
    bytes: int
    mbps: Value | None  # None: a value that cannot be (see warnings)
    usec: Value | None

    def to_dict(self) -> dict[str, Any]:
        return {"bytes": self.bytes, "mbps": self.mbps, "usec": self.usec}


@dataclass(frozen=True)
class NetpipeOutput:
    """The measured points in print order and the form they were read from.

    ``peak_mbps`` is the best throughput and ``min_latency_usec`` the smallest one-way time
    (normally that of the smallest message); both ignore non-finite values.
    """

    rows: tuple[NetpipeRow, ...]
    form: str
    cut_line: str | None = None  # complete_text's warning
    problems: tuple[str, ...] = ()  # values refused

    @property
    def peak_mbps(self) -> float | None:
        return finite_max(r.mbps for r in self.rows)

    @property
    def min_latency_usec(self) -> float | None:
        return finite_min(r.usec for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rows": [row.to_dict() for row in self.rows],
            "n_rows": len(self.rows),
            "peak_mbps": self.peak_mbps,
            "min_latency_usec": self.min_latency_usec,
            "form": self.form,
        }
        warnings = ([self.cut_line] if self.cut_line else []) + list(self.problems)
        if warnings:
            out["warnings"] = warnings
        return out


def _vetted(rows: list[NetpipeRow], form: str, cut: str | None) -> NetpipeOutput:
    """The output with each throughput and time that cannot be set to None and named."""
    refused: list[str] = []
    kept = [NetpipeRow(row.bytes,
                       refused_or(row.mbps, "Mbit/s", f"throughput at {row.bytes} bytes", refused),  # 2**20 bits: near
                       refused_or(row.usec, "us", f"time at {row.bytes} bytes", refused, positive=True))
            for row in rows]
    return NetpipeOutput(tuple(kept), form, cut, tuple(refused))


def parse_netpipe(text: str) -> NetpipeOutput:
    """Parse NetPIPE 3.7 screen output or np.out; ParseError when neither form has a row. A last line
    without its line end is dropped, with a warning."""
    text, cut = complete_text(text)
    screen: list[NetpipeRow] = []
    file_rows: list[NetpipeRow] = []
    for line in lines_of(text):
        if not line[0].isdigit():
            continue
        match = _SCREEN_ROW_RE.match(line)
        if match:
            size, mbps, usec = match.groups()
            screen.append(NetpipeRow(int(size), to_value(mbps), to_value(usec)))
            continue
        match = _FILE_ROW_RE.fullmatch(line)
        if match:
            size, mbps, seconds = match.groups()
            file_rows.append(NetpipeRow(int(size), to_value(mbps), _seconds_to_usec(seconds)))
    if screen:
        return _vetted(screen, FORM_SCREEN, cut)
    if file_rows:
        return _vetted(file_rows, FORM_FILE, cut)
    raise ParseError(with_note("no NetPIPE result line (np.out 'bytes Mbps seconds' or '... Mbps in ... usec') found",
                               cut))
