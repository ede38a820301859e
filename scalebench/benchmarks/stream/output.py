"""Parser for STREAM's output, in the two forms its sources print.

- STREAM itself (McCalpin's stream.c 5.10, and stream_mpi.c), rates in MB/s (10^6 bytes) of the whole
  run (stream_mpi.c: its arrays are split over the ranks)::

      Function    Best Rate MB/s  Avg time     Min time     Max time
      Copy:           12345.6     0.013058     0.012960     0.013171

- hpcc's copy (STREAM/stream.c of hpcc 1.5.0, which build/bin/stream runs), rates in GB/s (10^9 bytes)
  of one rank, every rank having arrays of its own::

      Function      Rate (GB/s)   Avg time     Min time     Max time
      Copy:          26.0655       0.0125       0.0123       0.0127

Then one row each for Scale, Add and Triad; the rate is the bytes a kernel moves (Copy and Scale 2,
Add and Triad 3 words per element, as STREAM counts them) over its minimum time, times excluding the
first of the NTIMES runs. Before the table: `Array size = N` (stream_mpi.c: `Total Aggregate Array
size = N`), `Number of Threads requested = T` (`... for each MPI rank = T`), `Number of Threads counted
= T`, and `Number of MPI ranks = R` (build/bin/stream's driver; stream_mpi.c: `Data is distributed
across R MPI ranks`). After it, STREAM's verdict: `Solution Validates[: ...]`, or one `Failed Validation
on array x[] ...` per array and no such line.

Never trusted: a rate or time that cannot be (scalebench.parse._common.refusal), a minimum
time above the average or maximum, or a rate that is not the bytes over the minimum time as printed (within the
rounding of both) are named in `problems`. A last line cut while written is dropped with a warning.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from scalebench.errors import ParseError
from scalebench.parse._common import NUM, VALUE, complete_text, lines_of, parse_int, refusal, to_value, with_note

KERNELS = ("copy", "scale", "add", "triad")
# Bytes per array element each kernel moves, as STREAM counts them (no write-allocate traffic).
WORDS = {"copy": 2, "scale": 2, "add": 3, "triad": 3}
WORD_BYTES = 8  # STREAM_TYPE double, which both forms print ("8 bytes per ...")
FORM_STREAM, FORM_HPCC = "stream", "hpcc"
_RATE_UNITS = {FORM_STREAM: ("MB/s", 1e-3), FORM_HPCC: ("GB/s", 1.0)}  # (unit printed, GB/s per unit)
# Rates of one rank (hpcc) or of the whole run (STREAM).
RATES_PER = {FORM_STREAM: "run", FORM_HPCC: "rank"}

_HEADER = {
    FORM_STREAM: re.compile(r"Function\s+Best\s+Rate\s+MB/s\s+Avg\s+time\s+Min\s+time\s+Max\s+time"),
    FORM_HPCC: re.compile(r"Function\s+Rate\s+\(GB/s\)\s+Avg\s+time\s+Min\s+time\s+Max\s+time"),
}
_ROW = re.compile(rf"(Copy|Scale|Add|Triad):\s+({VALUE})\s+({VALUE})\s+({VALUE})\s+({VALUE})")
_COUNTS = (
    ("array_elements", re.compile(r"(?:Total Aggregate )?Array size = (\d{1,18})\b.*")),
    ("threads", re.compile(r"Number of Threads requested(?: for each MPI rank)? = (\d{1,9})")),
    ("threads_counted", re.compile(r"Number of Threads counted = (\d{1,9})")),
    ("ranks", re.compile(r"(?:Number of MPI ranks = (\d{1,9})|Data is distributed across (\d{1,9}) MPI ranks)")),
)
# STREAM 5.x adds ": avg error less than <epsilon> on all three arrays"; STREAM 5.8 and hpcc 1.4 print none.
_VALIDATES = re.compile(rf"Solution Validates(?:: avg error less than {NUM} on all three arrays)?")
_FAILED = re.compile(r"Failed Validation on array [abc]\[\].*")


@dataclass(frozen=True)
class Kernel:
    rate: float | str  # as printed, in the form's unit (a non-finite token stays text)
    avg_s: float | str
    min_s: float | str
    max_s: float | str
    rate_gbs: float | None  # in GB/s; None when the rate cannot be (see problems)

    def to_dict(self) -> dict[str, Any]:
        return {"rate": self.rate, "rate_gbs": self.rate_gbs, "avg_time_s": self.avg_s, "min_time_s": self.min_s,
                "max_time_s": self.max_s}


@dataclass(frozen=True)
class StreamOutput:
    form: str  # stream | hpcc
    kernels: dict[str, Kernel]  # of the first table, in print order
    validated: bool | None  # None: no verdict (the output was cut before it)
    failures: tuple[str, ...] = ()  # STREAM's Failed Validation lines
    array_elements: int | None = None
    threads: int | None = None
    threads_counted: int | None = None
    ranks: int | None = None
    tables: int = 1  # more than one: several runs in one output
    problems: tuple[str, ...] = ()
    cut_line: str | None = None

    @property
    def rate_unit(self) -> str:
        return _RATE_UNITS[self.form][0]

    @property
    def rates_per(self) -> str:
        return RATES_PER[self.form]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "form": self.form, "rate_unit": self.rate_unit, "rates_per": self.rates_per,
            "kernels": {name: kernel.to_dict() for name, kernel in self.kernels.items()},
            "validated": self.validated, "validation_failures": list(self.failures),
            "array_elements": self.array_elements, "threads": self.threads, "threads_counted": self.threads_counted,
            "ranks": self.ranks, "tables": self.tables,
        }
        if self.problems:
            out["problems"] = list(self.problems)
        if self.cut_line:
            out["warnings"] = [self.cut_line]
        return out


def _decimals(token: str) -> int:
    mantissa = token.lower().partition("e")[0]
    return len(mantissa.partition(".")[2])


def _half_unit(token: str) -> float:
    """Half a unit in the last place printed: what rounding to print may have moved the value."""
    exponent = token.lower().partition("e")[2]
    return 0.5 * 10.0 ** (-_decimals(token) + (int(exponent) if exponent else 0))


def _rate_matches(kernel: str, rate: str, min_time: str, elements: int, gbs_per_unit: float) -> bool:
    """Whether the printed rate is the kernel's bytes over the printed minimum time, within the rounding
    of both."""
    t, half_t = float(min_time), _half_unit(min_time)
    r, half_r = float(rate) * gbs_per_unit, _half_unit(rate) * gbs_per_unit
    moved = WORDS[kernel] * WORD_BYTES * elements * 1e-9  # GB
    lowest = moved / (t + half_t)
    highest = moved / (t - half_t) if t > half_t else math.inf
    return r + half_r >= lowest * (1 - 1e-9) and r - half_r <= highest * (1 + 1e-9)


def _vet(name: str, tokens: tuple[str, str, str, str], form: str, elements: int | None,
         problems: list[str]) -> Kernel:
    unit, gbs_per_unit = _RATE_UNITS[form]
    rate, avg, low, high = (to_value(token) for token in tokens)
    why = refusal(rate, unit, f"{name} rate", positive=True)
    times = [refusal(value, "s", f"{name} {which} time", positive=True)
             for which, value in (("average", avg), ("minimum", low), ("maximum", high))]
    problems += [reason for reason in (why, *times) if reason]
    # Not avg <= max: a real hpcc 1.4.2 output prints an average above its maximum (tests/data/stream).
    if not any(times) and not (low <= avg and low <= high):  # type: ignore[operator]
        problems.append(f"{name} minimum time {tokens[2]} s is above its average {tokens[1]} or maximum {tokens[3]} s")
    if why is None and not any(times) and elements and not _rate_matches(name, tokens[0], tokens[2], elements,
                                                                         gbs_per_unit):
        problems.append(f"{name} rate {tokens[0]} {unit} is not {WORDS[name] * WORD_BYTES} bytes x {elements} "
                        f"elements over the minimum time {tokens[2]} s")
    gbs = float(rate) * gbs_per_unit if why is None else None  # type: ignore[arg-type]
    return Kernel(rate, avg, low, high, gbs)


def parse_stream(text: str) -> StreamOutput:
    """Parse STREAM's output (either form); ParseError when it holds no STREAM table."""
    text, cut = complete_text(text)
    form: str | None = None
    tables = 0
    rows: dict[str, tuple[str, str, str, str]] = {}
    counts: dict[str, int] = {}
    validated: bool | None = None
    failures: list[str] = []
    in_table = False
    for line in lines_of(text):
        header = next((name for name, pattern in _HEADER.items() if pattern.fullmatch(line)), None)
        if header is not None:
            tables += 1
            form = form or header
            in_table = tables == 1
            continue
        if in_table:
            row = _ROW.fullmatch(line)
            if row:
                rows.setdefault(row.group(1).lower(), row.groups()[1:])  # type: ignore[arg-type]
                continue
            in_table = False
        if tables > 1:
            continue  # a later run's lines: only counted
        if _VALIDATES.fullmatch(line):
            validated = validated is not False
            continue
        if _FAILED.fullmatch(line):
            validated = False
            failures.append(line[:200])
            continue
        for name, pattern in _COUNTS:
            match = pattern.fullmatch(line)
            if match and name not in counts:
                counts[name] = parse_int(next(g for g in match.groups() if g is not None)) or 0
    if form is None or not rows:
        raise ParseError(with_note("no STREAM table found (a 'Function ... Rate ... Min time' line and its Copy, "
                                   "Scale, Add, Triad rows)", cut))
    problems: list[str] = []
    elements = counts.get("array_elements") or None
    for name in ("threads", "threads_counted", "ranks"):
        if counts.get(name) == 0:
            problems.append(f"{name.replace('_', ' ')}: 0 printed")
    kernels = {name: _vet(name, rows[name], form, elements, problems) for name in KERNELS if name in rows}
    missing = [name for name in KERNELS if name not in rows]
    if missing:
        problems.append(f"the table has no {', '.join(missing)} row (the output was cut?)")
    if tables > 1:
        problems.append(f"{tables} STREAM tables in one output (runs appended, or copies started by a launcher of "
                        f"another MPI); the first is read")
    return StreamOutput(form, kernels, validated, tuple(failures), elements, counts.get("threads") or None,
                        counts.get("threads_counted") or None, counts.get("ranks") or None, tables, tuple(problems),
                        cut)
