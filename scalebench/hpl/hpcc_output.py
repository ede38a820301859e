"""Parser for HPC Challenge (HPCC 1.4.x/1.5.0) hpccoutf.txt files.

hpcc appends to hpccoutf.txt, so one file may hold several runs, each opened by the banner
line "This is the DARPA/DOE HPC Challenge Benchmark version ...", and the last run may be cut
short. A run's Summary counts only when its "End of Summary section." line was printed.

A text with no banner and no section markers at all (e.g. ``grep = hpccoutf.txt``) is read as
one run whose key=value lines are its Summary: nothing in it says the run was cut, and
such an excerpt is how sites often keep HPCC results.

Every measurement in a Summary (rates, times, latencies, process counts: SUMMARY_UNITS) must make
physical sense (scalebench.parse._common.refusal); hpcc prints -1 for a test it did not run, which
is kept. A value that cannot be is null, named in ``warnings``. The last run's Summary must agree
with its own HPL rows (hpcc's io.c: HPL_Tflops is the fastest row's Gflops / 1000 with its N, NB
and grid; Success=0 exactly when an HPL test failed or was skipped); a contradiction is a problem
of the HPL section (``hpl.problems()``, which the HPL check's sanity reads) and a warning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from scalebench.errors import ParseError
import math
from dataclasses import replace

from scalebench.hpl.output import HplOutput, parse_hpl
from scalebench.parse._common import TypedValue, complete_text, int_or_value, is_finite, lines_of, refusal, with_note

# int, finite float, or the text as printed (letters such as "f", "-", and "-nan"/"inf").
SummaryValue = TypedValue

# The headline metrics of each HPCC test, in the order HPCC's own summary tables use.
KEY_METRICS: tuple[str, ...] = (
    "HPL_Tflops",
    "HPL_N",
    "HPL_NB",
    "HPL_nprow",
    "HPL_npcol",
    "HPL_time",
    "CommWorldProcs",
    "Success",
    "MaxPingPongLatency_usec",
    "RandomlyOrderedRingLatency_usec",
    "MinPingPongBandwidth_GBytes",
    "NaturallyOrderedRingBandwidth_GBytes",
    "RandomlyOrderedRingBandwidth_GBytes",
    "StarDGEMM_Gflops",
    "SingleDGEMM_Gflops",
    "PTRANS_GBs",
    "MPIRandomAccess_GUPs",
    "StarRandomAccess_GUPs",
    "SingleRandomAccess_GUPs",
    "StarSTREAM_Triad",
    "SingleSTREAM_Triad",
    "StarFFT_Gflops",
    "SingleFFT_Gflops",
    "MPIFFT_Gflops",
)

# The unit of each Summary measurement, by the end of its key (hpcc's io.c prints them in these units).
_UNIT_BY_SUFFIX: tuple[tuple[str, str], ...] = (
    ("_Tflops", "Tflop/s"), ("_Gflops", "Gflop/s"), ("_GUPs", "GUP/s"), ("_GBytes", "GB/s"), ("_GBs", "GB/s"),
    ("_usec", "us"), ("_time", "s"), ("_CheckTime", "s"), ("_TimeBound", "s"))
_UNIT_BY_PREFIX: tuple[tuple[str, str], ...] = (("StarSTREAM_", "GB/s"), ("SingleSTREAM_", "GB/s"))
# Counts of processes and sizes: at least 1.
_COUNTS = frozenset(("CommWorldProcs", "HPLMaxProcs", "HPLMinProcs", "HPL_N", "HPL_NB", "HPL_nprow", "HPL_npcol",
                     "PTRANS_n", "PTRANS_nb", "PTRANS_nprow", "PTRANS_npcol", "MPIFFT_Procs", "DGEMM_N", "FFT_N",
                     "MPIFFT_N"))
NOT_MEASURED = -1  # what hpcc prints for a test it did not run
# Relative agreement of HPL_Tflops (%g: 6 digits) with the Gflops of its row (%.3e: 4 digits).
_TFLOPS_TOLERANCE = 1e-3


def summary_unit(key: str) -> str | None:
    """The unit of a Summary measurement ('N' for a count), None for any other key."""
    if key in _COUNTS:
        return "N"
    for suffix, unit in _UNIT_BY_SUFFIX:
        if key.endswith(suffix):
            return unit
    return next((unit for prefix, unit in _UNIT_BY_PREFIX if key.startswith(prefix)), None)


def _vetted(summary: dict[str, "SummaryValue"], where: str, refused: list[str]) -> dict[str, "SummaryValue"]:
    """The Summary with each measurement that cannot be (refusal; a count below 1, Success neither 0 nor
    1) set to None and named in `refused`; hpcc's -1 (not run) is kept."""
    for key, value in summary.items():
        if value == NOT_MEASURED and not isinstance(value, bool):
            continue
        if key == "Success":
            reason = None if value in (0, 1) and type(value) is int else f"Success {value} is neither 0 nor 1"
        else:
            unit = summary_unit(key)
            if unit is None:
                continue
            if unit == "N":
                reason = None if type(value) is int and value >= 1 else f"{key} {value} is not a count of at least 1"
            else:
                reason = refusal(value, unit, key)
        if reason is not None:
            summary[key] = None
            refused.append(f"{where}: {reason}: dropped")
    return summary


_BANNER_RE = re.compile(r"This is the DARPA/DOE HPC Challenge Benchmark version[ \t]+(\S+)")
_SECTION_RE = re.compile(r"(Begin|End) of ([A-Za-z0-9_]+) section\.")
_ALL_DONE = "End of HPC Challenge tests."
_HOST_RE = re.compile(r"Hostname:[ \t]*'([^']*)'")
_KV_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)")


def summary_value(raw: str) -> SummaryValue:
    """Type a Summary value: int, finite float, else the original string."""
    return int_or_value(raw, signed=True)


@dataclass(frozen=True)
class HpccRun:
    """One run in the file; ``completed`` is None when the text has no markers to tell."""

    banner_version: str | None
    hostname: str | None
    completed: bool | None
    sections_completed: tuple[str, ...]
    summary: dict[str, SummaryValue] | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "banner_version": self.banner_version,
            "hostname": self.hostname,
            "completed": self.completed,
            "sections_completed": list(self.sections_completed),
            "summary": dict(self.summary) if self.summary is not None else None,
        }


@dataclass(frozen=True)
class HpccOutput:
    """All runs of an hpccoutf.txt; ``hpl`` is the HPL section of the LAST run (None if no rows)."""

    runs: tuple[HpccRun, ...]
    hpl: HplOutput | None
    cut_line: str | None = None  # complete_text's warning
    problems: tuple[str, ...] = ()  # values dropped, and the Summary against its HPL rows

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    @property
    def n_complete_summaries(self) -> int:
        return sum(1 for run in self.runs if run.summary is not None)

    @property
    def last_summary(self) -> dict[str, SummaryValue] | None:
        for run in reversed(self.runs):
            if run.summary is not None:
                return run.summary
        return None

    @property
    def key_metrics(self) -> dict[str, SummaryValue]:
        summary = self.last_summary or {}
        return {key: summary[key] for key in KEY_METRICS if key in summary}

    def to_dict(self) -> dict[str, Any]:
        last = self.last_summary
        return {
            "n_runs": self.n_runs,
            "n_complete_summaries": self.n_complete_summaries,
            "key_metrics": self.key_metrics,
            "last_summary": dict(last) if last is not None else None,
            "runs": [run.to_dict() for run in self.runs],
            "hpl": self.hpl.to_dict() if self.hpl is not None else None,
        } | ({"warnings": warnings} if (warnings := [self.cut_line] * bool(self.cut_line) + list(self.problems)) else {})


class _RunBuilder:
    """A run being read, section by section."""

    __slots__ = ("version", "hostname", "completed", "sections", "open", "pending", "summary", "hpl")

    def __init__(self, version: str | None) -> None:
        self.version = version
        self.hostname: str | None = None
        self.completed = False
        self.sections: list[str] = []
        self.open: str | None = None
        self.pending: dict[str, SummaryValue] | None = None
        self.summary: dict[str, SummaryValue] | None = None
        self.hpl: list[str] | None = None

    def marker(self, edge: str, name: str) -> None:
        if edge == "Begin":
            self.open = name
            if name == "Summary":
                self.pending = {}
            elif name == "HPL":
                self.hpl = []
            return
        self.sections.append(name)
        if name == "Summary" and self.pending is not None:
            self.summary, self.pending = self.pending, None
        self.open = None

    def line(self, line: str) -> None:
        if self.open == "HPL" and self.hpl is not None:
            self.hpl.append(line)
        elif self.open == "Summary" and self.pending is not None:
            _add_pair(self.pending, line)
        elif self.open is None and self.hostname is None:
            match = _HOST_RE.match(line)
            if match:
                self.hostname = match.group(1)

    def freeze(self) -> HpccRun:
        return HpccRun(self.version, self.hostname, self.completed, tuple(self.sections), self.summary)


def _add_pair(summary: dict[str, SummaryValue], line: str) -> None:
    match = _KV_RE.fullmatch(line)
    if match:
        summary[match.group(1)] = summary_value(match.group(2).strip())


def _read_runs(lines: list[str]) -> list[_RunBuilder]:
    """Split marked-up text into runs; [] when the text has no banner or marker at all."""
    runs: list[_RunBuilder] = []
    for line in lines:
        banner = _BANNER_RE.match(line)
        if banner:
            runs.append(_RunBuilder(banner.group(1)))
            continue
        section = _SECTION_RE.fullmatch(line)
        if section is None and line != _ALL_DONE:
            if runs:
                runs[-1].line(line)
            continue
        if not runs:  # the text starts inside a run whose banner is missing
            runs.append(_RunBuilder(None))
        if section is not None:
            runs[-1].marker(section.group(1), section.group(2))
        else:
            runs[-1].completed = True
    return runs


def _try_hpl(lines: list[str]) -> HplOutput | None:
    try:
        return parse_hpl("".join(f"{line}\n" for line in lines))
    except ParseError:
        return None


def _contradictions(summary: dict[str, SummaryValue], hpl: HplOutput) -> list[str]:
    """What a run's Summary says against its own HPL section (hpcc's io.c and HPL_pddriver.c)."""
    found: list[str] = []
    rows = [row for row in hpl.rows if is_finite(row.gflops)]
    tflops = summary.get("HPL_Tflops")
    if isinstance(tflops, (int, float)) and tflops != NOT_MEASURED and rows:
        best = max(rows, key=lambda row: row.gflops)  # type: ignore[arg-type, return-value]
        if not math.isclose(tflops * 1000, best.gflops, rel_tol=_TFLOPS_TOLERANCE):  # type: ignore[arg-type]
            found.append(f"the Summary's HPL_Tflops={tflops:g} ({tflops * 1000:g} Gflop/s) is not the fastest HPL row "
                         f"of its run ({best.gflops:g} Gflop/s): hpcc prints that row's rate")
        else:
            for key, value in (("HPL_N", best.n), ("HPL_NB", best.nb), ("HPL_nprow", best.p), ("HPL_npcol", best.q)):
                if summary.get(key) not in (None, NOT_MEASURED, value):
                    found.append(f"the Summary's {key}={summary[key]} is not that of the fastest HPL row ({value})")
    procs = summary.get("CommWorldProcs")
    if isinstance(procs, int) and procs >= 1:
        wider = next((row for row in hpl.rows if row.p * row.q > procs), None)
        if wider is not None:
            found.append(f"an HPL row on a {wider.p}x{wider.q} grid needs {wider.p * wider.q} processes, the Summary's "
                         f"CommWorldProcs={procs}")
    success = summary.get("Success")
    failed = sum(1 for row in hpl.rows if row.status == "FAILED" and row.reason is None)  # by HPL itself
    if hpl.counts is not None:
        failed = max(failed, hpl.counts.failed + hpl.counts.skipped)
    if success == 1 and failed:
        found.append(f"the Summary says Success=1 but {failed} HPL test(s) failed or were skipped")
    elif success == 0 and not failed and all(row.status for row in hpl.rows):
        found.append("the Summary says Success=0 but every HPL test passed (hpcc fails a run only for a failed "
                     "or skipped HPL test)")
    return found


def parse_hpcc(text: str) -> HpccOutput:
    """Parse a whole hpccoutf.txt; ParseError when it has neither a complete Summary nor an HPL row.
    A last line without its line end is dropped, with a warning."""
    text, cut = complete_text(text)
    lines = list(lines_of(text))  # blank lines say nothing in any section
    builders = _read_runs(lines)
    problems: list[str] = []
    if builders:
        for index, builder in enumerate(builders, 1):
            if builder.summary is not None:
                where = "the Summary" if len(builders) == 1 else f"the Summary of run {index}"
                _vetted(builder.summary, where, problems)
        runs = tuple(b.freeze() for b in builders)
        last_hpl = builders[-1].hpl
        hpl = _try_hpl(last_hpl) if last_hpl is not None else None
        own_summary = builders[-1].summary  # the HPL section and Summary of one run
    else:
        pairs: dict[str, SummaryValue] = {}
        for line in lines:
            _add_pair(pairs, line)
        _vetted(pairs, "the Summary", problems)
        hpl = _try_hpl(lines)
        runs = (HpccRun(None, None, None, (), pairs or None),) if pairs or hpl else ()
        own_summary = pairs or None
    if hpl is not None and own_summary is not None:
        contradictions = _contradictions(own_summary, hpl)
        problems += contradictions
        hpl = replace(hpl, notes=hpl.notes + tuple(contradictions))
    output = HpccOutput(runs=runs, hpl=hpl, cut_line=cut, problems=tuple(problems))
    if output.last_summary is None and hpl is None:
        raise ParseError(with_note("no complete HPCC Summary section and no HPL result row found", cut))
    return output
