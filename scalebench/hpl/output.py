"""Parser for HPL (High-Performance Linpack) output, HPL 1.0a to 2.3 plus Intel MKL and NVIDIA builds.

The parser reads line by line, in one pass, and recognises only four kinds of line: a result row,
a scaled residual line, the end-of-run summary and the header facts (version banner, eps,
threshold), telling them apart by their first character. Everything else (parameter echo,
MPI/NCCL/UCX noise, progress lines) is skipped after that one look. Every regular expression is
anchored and has no nested unbounded repetition, so parsing stays linear in the size of the text
even on hostile input (100 MB in a few seconds: scripts/bench/parse_speed.py).

A row HPL passed counts only when it makes physical sense (see _impossible): its fields within
HPL's C ints, a finite time and rate within scalebench/data/quantities.yaml's bounds, its Gflops
what HPL computes from N and the time as printed (a time printed 0.00 is under 0.005 s, so the
rate has a floor), and its residuals at or below the threshold its own run stated: several runs
appended to one file (HPL and hpcc append) each keep theirs.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from scalebench.errors import ParseError
from scalebench.registry import quantity_of
from scalebench.parse._common import (
    FINITE,
    NONFINITE,
    Value,  # a finite float, or the token as printed ("-nan", "inf", "1.#QNAN")
    complete_text,
    finite_max,
    finite_values,
    is_finite,
    lines_of,
    refusal,
    to_value,
    with_note,
)
from scalebench.validation import C_INT_MAX, excerpt

# T/V code, then N NB P Q Time Gflops positionally; anything after Gflops (NVIDIA's
# "( per-GPU Gflops )" column) is ignored. The T/V code is W, R|C (process order), a digit
# (depth), then the rest of the variant ("WR11C2R4", MKL "WC00C2R2", NVIDIA "WC0").
_ROW_RE = re.compile(
    r"(W[RC]\d[0-9A-Za-z]*)[ \t]+(\d{1,18})[ \t]+(\d{1,18})[ \t]+(\d{1,18})[ \t]+(\d{1,18})"
    rf"[ \t]+({FINITE}|{NONFINITE})[ \t]+({FINITE}|{NONFINITE})(?:[ \t].*)?"
)
# "||Ax-b||_oo/(eps*(...)*N)=   1.18e-03 ...... PASSED" (2.x) or the three HPL 1.0 lines.
_RESID_RE = re.compile(r"\|\|Ax-b\|\|_oo([^=]*)=[ \t]*(\S+)[ \t]+\.+[ \t]*(PASSED|FAILED)\b")
# "tests with" (no comma) keeps HPCC's PTRANS summary ("5 tests, with ...") out.
_FINISHED_RE = re.compile(r"Finished[ \t]+(\d{1,18})[ \t]+tests?[ \t]+with the following results")
_PASSED_RE = re.compile(r"(\d{1,18})[ \t]+tests?[ \t]+completed and passed residual checks")
_FAILED_RE = re.compile(r"(\d{1,18})[ \t]+tests?[ \t]+completed and failed residual checks")
_SKIPPED_RE = re.compile(r"(\d{1,18})[ \t]+tests?[ \t]+skipped because of illegal input values")
_END_RE = re.compile(r"End of Tests\.?[ \t]*")
_EPS_RE = re.compile(rf"-?[ \t]*The relative machine precision \(eps\) is taken to be[ \t]+({FINITE})")
_THRESHOLD_RE = re.compile(
    rf"-?[ \t]*Computational tests pass if scaled residuals are less than[ \t]+({FINITE})"
)
_BANNER_RE = re.compile(
    r"HPL(?:inpack)?[ \t]+v?(\d{1,4}(?:\.\d{1,4}){1,3}[A-Za-z0-9]{0,8})[ \t]+-{1,2}[ \t]+"
    r"High-Performance Linpack"
)

# First characters of the other lines the parser reads (summary counts, header facts).
_OTHER_FIRSTS = frozenset("0123456789FEH-")

THREE_RESIDUAL_VERSION = "1.0 (three-residual format)"
# HPL.dat's threshold when the output states none (HPL's sample HPL.dat and every build's default).
DEFAULT_THRESHOLD = 16.0


def _plural_tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"


class HplRow(NamedTuple):
    """One test: the result row and its scaled residual check (a NamedTuple: a sweep holds millions).

    ``residual`` and ``status`` are None when the output stops before the residual line.
    ``residuals`` holds all three values of the HPL 1.0/1.0a format (None for 2.x). ``status`` is
    HPL's, except that a row HPL says PASSED is FAILED here, with a ``reason``, when a field makes no
    physical sense or a residual is not at or below the threshold its run states (see _impossible).
    ``threshold`` is that threshold (None: the run states none; HPL's default 16 applies).
    """

    tv: str
    n: int
    nb: int
    p: int
    q: int
    time_s: Value
    gflops: Value
    residual: Value | None
    status: str | None
    residuals: tuple[Value, ...] | None = None
    reason: str | None = None  # why scalebench fails a row HPL passed
    threshold: float | None = None  # the residual threshold its run stated

    def label(self, index: int) -> str:
        return f"row {index} (N={self.n} NB={self.nb} {self.p}x{self.q})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tv": self.tv,
            "n": self.n,
            "nb": self.nb,
            "p": self.p,
            "q": self.q,
            "time_s": self.time_s,
            "gflops": self.gflops,
            "residual": self.residual,
            "status": self.status,
        }
        if self.residuals is not None:
            out["residuals"] = list(self.residuals)
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class HplCounts:
    passed: int
    failed: int
    skipped: int

    def to_dict(self) -> dict[str, int]:
        return {"passed": self.passed, "failed": self.failed, "skipped": self.skipped}


@dataclass(frozen=True)
class HplOutput:
    """Everything one HPL output says about its tests.

    Several runs appended to one file (HPL opens its output file in append mode) are read
    as one sequence: ``rows`` holds every run's rows in order and ``counts`` is the SUM of
    all complete ``Finished N tests`` summaries, so that counts and rows describe the same
    tests; a run cut short before its summary then shows up in ``problems()`` as a
    mismatch. ``end_of_tests`` is true only when an ``End of Tests.`` line follows the last
    row, i.e. when the last run finished. ``hpl_version``, ``eps`` and ``threshold`` are the
    last values printed (each row keeps its own run's threshold). ``cut_line`` says why a last
    line without its line end was dropped; ``notes`` are contradictions found around the rows (an
    hpcc Summary against its own HPL rows: scalebench.hpl.hpcc_output).
    """

    rows: tuple[HplRow, ...]
    counts: HplCounts | None
    end_of_tests: bool
    hpl_version: str | None = None
    eps: float | None = None
    threshold: float | None = None
    cut_line: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def rmax_gflops(self) -> float | None:
        return finite_max(r.gflops for r in self.rows if r.status == "PASSED")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rows": [row.to_dict() for row in self.rows],
            "counts": self.counts.to_dict() if self.counts else None,
            "end_of_tests": self.end_of_tests,
            "rmax_gflops": self.rmax_gflops,
            "problems": self.problems(),
        }
        for key in ("hpl_version", "eps", "threshold"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out

    def problems(self, expected_cases: int | None = None) -> list[str]:
        """Reasons why this is not a clean, complete, residual-checked run; [] when it is."""
        found: list[str] = [self.cut_line] if self.cut_line else []
        for index, row in enumerate(self.rows, 1):
            found.extend(_row_problems(index, row))
        found.extend(self.notes)
        if not self.end_of_tests:
            found.append("no 'End of Tests.' line: the run stopped early")
        if self.counts is None:
            found.append("no 'Finished ... tests' summary")
        else:
            found.extend(_count_problems(self.counts, len(self.rows)))
        if expected_cases is not None:
            passed = (
                self.counts.passed
                if self.counts is not None
                else sum(1 for r in self.rows if r.status == "PASSED")
            )
            if passed != expected_cases:
                found.append(f"{_plural_tests(passed)} passed but {expected_cases} expected")
        return found


def _row_problems(index: int, row: HplRow) -> list[str]:
    label = row.label(index)
    if row.reason is not None:
        return [f"{label} FAILED: {row.reason}"]
    found: list[str] = []
    for name, value in (("time", row.time_s), ("Gflops", row.gflops)):
        if not is_finite(value):
            found.append(f"{name} of {label} is not finite ({value})")
    if row.status is None:
        found.append(f"residual of {label} is missing: the output stops before its check")
        return found
    values = row.residuals if row.residuals is not None else (row.residual,)
    finite = finite_values(values)
    if len(finite) < len(values):
        bad = next(v for v in values if not is_finite(v))
        found.append(f"residual of {label} is not finite ({bad})")
    elif row.status == "FAILED":
        limit = f" > threshold {row.threshold:g}" if row.threshold is not None else ""
        found.append(f"{label} FAILED the residual check: {max(finite):.3g}{limit}")
    return found


def _count_problems(counts: HplCounts, n_rows: int) -> list[str]:
    found: list[str] = []
    if counts.failed:
        found.append(f"{_plural_tests(counts.failed)} failed")
    if counts.skipped:
        found.append(f"{_plural_tests(counts.skipped)} skipped")
    completed = counts.passed + counts.failed
    if completed != n_rows:
        found.append(
            f"the 'Finished' summary counts {_plural_tests(completed)} completed"
            f" but {n_rows} result rows were found"
        )
    return found


class _Test:
    """A row being read, waiting for its residual line(s)."""

    __slots__ = ("fields", "threshold", "residuals", "statuses", "three_residual")

    def __init__(self, fields: tuple[str, ...], threshold: float | None) -> None:
        self.fields = fields  # T/V, N, NB, P, Q, Time, Gflops as printed
        self.threshold = threshold  # its run's, when stated
        self.residuals: list[Value] = []
        self.statuses: list[str] = []
        self.three_residual = False

    def wants_residual(self) -> bool:
        return len(self.residuals) < (3 if self.three_residual else 1)

    def add_residual(self, label: str, value: Value, status: str) -> None:
        # HPL 2.x has one check whose label ends in ||b||_oo; HPL 1.0 has three others.
        if not self.residuals:
            self.three_residual = "||b||_oo" not in label
        self.residuals.append(value)
        self.statuses.append(status)

    def row(self) -> HplRow:
        """The row as HPL printed it, FAILED with a reason when HPL passed it and it cannot stand."""
        tv, n, nb, p, q, time_s, gflops = self.fields
        status: str | None = None
        if self.statuses:
            status = "FAILED" if "FAILED" in self.statuses else "PASSED"
        values = tuple(self.residuals)
        row = HplRow(tv, int(n), int(nb), int(p), int(q), _number(time_s), _number(gflops),
                     values[0] if values else None, status, values if self.three_residual else None,
                     None, self.threshold)
        if status != "PASSED":
            return row
        reason = _impossible(row, _half_step(time_s))
        return row if reason is None else row._replace(status="FAILED", reason=reason)


# Slack on HPL's own Gflops formula: builds count the flops of the same solve slightly differently.
_RATE_SLACK = 0.02
_TIME_MAX = quantity_of("s").largest("s")  # type: ignore[union-attr]
_FLOP_RATE = quantity_of("Gflop/s")
_RATE_MAX = _FLOP_RATE.largest("Gflop/s")  # type: ignore[union-attr]
_RATE_PER_PROCESS = _FLOP_RATE.per_process_max or math.inf  # type: ignore[union-attr]


def hpl_flops(n: int) -> float:
    """The flops HPL credits a solve of order N with: 2/3 N^3 + 3/2 N^2."""
    return 2 / 3 * n**3 + 1.5 * n**2


def rate_bounds(n: int, time_s: float, half_step: float) -> tuple[float, float]:
    """(lowest, highest) Gflops HPL can print for N and a time printed as `time_s`, the true time
    being within `half_step` of it (0.005 s for HPL's two decimals): a time printed 0.00 has no
    upper bound on the rate, but a floor."""
    low_time, high_time = time_s - half_step, time_s + half_step
    flops = hpl_flops(n) / 1e9
    highest = flops / low_time * (1 + _RATE_SLACK) if low_time > 0 else math.inf
    return flops / high_time * (1 - _RATE_SLACK), highest


def _number(token: str) -> Value:
    """to_value of a token _ROW_RE or _RESID_RE matched as a number or a non-finite word (faster)."""
    value = float(token)
    return value if value - value == 0 else token  # inf - inf and nan - nan are nan


def _residual(token: str) -> Value:
    """to_value of a residual token (anything but blanks), with float() first: one per row."""
    if "_" in token:  # float() reads 1_000, printf never prints it
        return to_value(token)
    try:
        value = float(token)
    except ValueError:
        return token
    return value if value - value == 0 else token


def _half_step(token: str) -> float:
    """Half the last printed digit of a number token: 0.005 for '6.50', 0.5 for '7', 5e-06 for '1.0e-05'."""
    if "e" not in token and "E" not in token:  # HPL's %f
        point = token.find(".")
        return 0.5 * 10.0 ** -(len(token) - point - 1 if point >= 0 else 0)
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    try:
        return 0.5 * 10.0 ** (int(exponent or 0) - decimals)
    except (ValueError, OverflowError):
        return 0.0


def _impossible(row: HplRow, half_step: float) -> str | None:
    """Why a row HPL passed cannot stand, or None: N, NB, P, Q beyond HPL's C ints, a time or rate that
    is not finite, negative or beyond what any machine reaches (scalebench/data/quantities.yaml, the
    rate also per process), a residual not finite, negative or above the threshold its run states, or
    Gflops that do not follow from N and the time as printed."""
    if not (1 <= row.n <= C_INT_MAX and 1 <= row.nb <= C_INT_MAX and 1 <= row.p <= C_INT_MAX
            and 1 <= row.q <= C_INT_MAX):
        name, value = next((k, v) for k, v in (("N", row.n), ("NB", row.nb), ("P", row.p), ("Q", row.q))
                           if not 1 <= v <= C_INT_MAX)
        return f"{name}={value}: HPL takes 1 to {C_INT_MAX}"
    time_s, gflops = row.time_s, row.gflops
    if not (type(time_s) is float and 0 <= time_s <= _TIME_MAX):  # refusal says why (one registry)
        return refusal(time_s, "s", "time")
    if not (type(gflops) is float and 0 < gflops <= _RATE_MAX):
        return refusal(gflops, "Gflop/s", "Gflops", positive=True)
    processes = row.p * row.q
    if gflops > _RATE_PER_PROCESS * processes:
        return (f"Gflops {gflops:g} on {processes} process(es) is beyond {_RATE_PER_PROCESS:g} Gflop/s per "
                f"process, more than any processor reaches")
    threshold = row.threshold if row.threshold is not None else DEFAULT_THRESHOLD
    for value in row.residuals if row.residuals is not None else (row.residual,):
        if not is_finite(value):
            return f"residual is not finite ({value})"
        if value < 0 or value > threshold:  # type: ignore[operator]
            side = "negative" if value < 0 else f"above the threshold {threshold:g}"  # type: ignore[operator]
            return f"residual {value:g} is {side}" + ("" if row.threshold is not None else
                                                        " (HPL's default; the output states none)")
    low, high = rate_bounds(row.n, time_s, half_step)
    if not low <= gflops <= high:
        would = f"at least {low / (1 - _RATE_SLACK):.4g}" if high == math.inf else f"{hpl_flops(row.n) / time_s / 1e9:.4g}"
        return f"Gflops {gflops:g} does not follow from N={row.n} and time {time_s:g} s (HPL would print {would})"
    return None


class _Summary:
    """A 'Finished N tests' block being read; complete once its three count lines are seen."""

    __slots__ = ("passed", "failed", "skipped")

    def __init__(self) -> None:
        self.passed: int | None = None
        self.failed: int | None = None
        self.skipped: int | None = None

    def feed(self, line: str) -> HplCounts | None:
        """Take a count line; the counts once passed, failed and skipped are all known."""
        for attr, regex in (("passed", _PASSED_RE), ("failed", _FAILED_RE), ("skipped", _SKIPPED_RE)):
            match = regex.match(line)
            if match:
                setattr(self, attr, int(match.group(1)))
        if self.passed is None or self.failed is None or self.skipped is None:
            return None
        return HplCounts(self.passed, self.failed, self.skipped)


def _add(total: HplCounts | None, more: HplCounts) -> HplCounts:
    if total is None:
        return more
    return HplCounts(total.passed + more.passed, total.failed + more.failed, total.skipped + more.skipped)


class _Header:
    """Facts from the banner and the parameter header of the run being read; a banner starts a run."""

    __slots__ = ("version", "eps", "threshold")

    def __init__(self) -> None:
        self.version: str | None = None
        self.eps: float | None = None
        self.threshold: float | None = None

    def feed(self, line: str) -> bool:
        """Read a line starting with H or -; True when it was a header fact."""
        if line[0] == "H":
            match = _BANNER_RE.match(line)
            if match:
                self.version = match.group(1)
                self.eps = self.threshold = None  # an appended run states its own
            return match is not None
        match = _EPS_RE.match(line)
        if match:
            self.eps = _finite_or(match.group(1), self.eps)
            return True
        match = _THRESHOLD_RE.match(line)
        if match:
            self.threshold = _finite_or(match.group(1), self.threshold)
        return match is not None


def parse_hpl(text: str) -> HplOutput:
    """Parse the whole text of an HPL output; ParseError if it holds no result row. A last line
    without its line end is dropped (and named in ``problems()``): HPL was still writing it."""
    text, cut = complete_text(text)
    rows: list[HplRow] = []  # each test becomes its row once the next one starts: no test is kept longer
    current: _Test | None = None
    tested = 0
    summary: _Summary | None = None
    counts: HplCounts | None = None
    rows_at_end: int | None = None
    header = _Header()
    last = (None, None, None)  # the version, eps and threshold of the latest run that printed them

    for line in lines_of(text):
        first = line[0]
        if first == "W":
            match = _ROW_RE.fullmatch(line)
            if match:
                if current is not None:
                    rows.append(current.row())
                current = _Test(match.groups(), header.threshold)
                tested += 1
        elif first == "|":
            match = _RESID_RE.match(line)
            if match and current is not None and current.wants_residual():
                label, value, status = match.groups()
                current.add_residual(label, _residual(value), status)
        elif first not in _OTHER_FIRSTS:
            continue  # noise: one look
        elif first == "F":
            if _FINISHED_RE.match(line):
                summary = _Summary()
        elif first == "E":
            if _END_RE.fullmatch(line):
                rows_at_end = tested
        elif first == "H" or (first == "-" and line[1:2] != "-"):  # "----" is a rule, no fact
            if header.feed(line):
                last = tuple(new if new is not None else old  # type: ignore[assignment]
                             for new, old in zip((header.version, header.eps, header.threshold), last))
        elif summary is not None and first != "-":  # a count line of a 'Finished' block starts with a digit
            done = summary.feed(line)
            if done is not None:
                counts, summary = _add(counts, done), None

    if current is None:
        raise ParseError(with_note("no HPL result row (T/V N NB P Q Time Gflops) found", cut))
    rows.append(current.row())
    version, eps, threshold = last
    if version is None and any(row.residuals is not None for row in rows):
        version = THREE_RESIDUAL_VERSION
    return HplOutput(
        rows=tuple(rows),
        counts=counts,
        end_of_tests=rows_at_end == len(rows),
        hpl_version=version,
        eps=eps,
        threshold=threshold,
        cut_line=cut,
    )


def _finite_or(token: str, default: float | None) -> float | None:
    value = to_value(token)
    return value if isinstance(value, float) else default


# HPL.dat's encodings of its algorithm choices (HPL 2.x HPL.dat comments and HPL_pdinfo.c).
PFACT_CODES = {"left": 0, "crout": 1, "right": 2}
BCAST_CODES = {"1ring": 0, "1ringM": 1, "2ring": 2, "2ringM": 3, "long": 4, "longM": 5}
SWAP_CODES = {"binary-exchange": 0, "long": 1, "mix": 2}
PMAP_CODES = {"row": 0, "column": 1}


# HPL 2.x HPL_pdtest.c prints "W%c%1d%c%c%1d%c%1d": W (wall time), process mapping R|C, DEPTH,
# BCAST digit, RFACT L|C|R, NDIV, PFACT L|C|R, NBMIN. %1d is a minimum width: a value >= 10
# prints more digits; BCAST is then the last digit before the RFACT letter.
_TV_RE = re.compile(r"W([RC])([0-9]+)([0-9])([LCR])([0-9]+)([LCR])([0-9]+)")
_TV_LAYOUT = ("W, R|C (process mapping), DEPTH, BCAST digit 0-5, RFACT L|C|R, NDIV, PFACT L|C|R, "
              "NBMIN (HPL's W%c%1d%c%c%1d%c%1d, e.g. WR11C2R4)")
_TV_PMAP = {"R": "row", "C": "column"}
_TV_FACT = {"L": "left", "C": "crout", "R": "right"}
_TV_BCAST = {str(code): name for name, code in BCAST_CODES.items()}
TV_KEYS = ("pmap", "depth", "bcast", "rfact", "ndiv", "pfact", "nbmin")


def decode_tv(tv: str) -> dict[str, Any]:
    """The HPL.dat settings a T/V code encodes, named as in rules.yaml's algorithm section."""
    match = _TV_RE.fullmatch(tv) if isinstance(tv, str) else None
    if match is None:
        raise ParseError(f"T/V code {excerpt(tv)}: not HPL's encoded variant ({_TV_LAYOUT}); builds that print "
                         f"other codes (e.g. NVIDIA HPL's 'WC0') cannot be decoded into HPL.dat settings")
    pmap, depth, bcast, rfact, ndiv, pfact, nbmin = match.groups()
    if bcast not in _TV_BCAST:
        raise ParseError(f"T/V code {excerpt(tv)}: BCAST digit {bcast} is not one of HPL's 0-5 "
                         f"({', '.join(f'{k}={v}' for k, v in _TV_BCAST.items())})")
    if int(ndiv) < 2 or int(nbmin) < 1:
        raise ParseError(f"T/V code {excerpt(tv)}: NDIV {ndiv} / NBMIN {nbmin} outside HPL's NDIV >= 2, NBMIN >= 1")
    return {"pmap": _TV_PMAP[pmap], "depth": int(depth), "bcast": _TV_BCAST[bcast],
            "rfact": _TV_FACT[rfact], "ndiv": int(ndiv), "pfact": _TV_FACT[pfact], "nbmin": int(nbmin)}
