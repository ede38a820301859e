"""Parser for HPL (High-Performance Linpack) output, HPL 1.0a to 2.3 plus Intel MKL and NVIDIA builds.

The parser reads line by line and recognises only four kinds of line: a result row, a scaled
residual line, the end-of-run summary and the header facts (version banner, eps, threshold).
Everything else (parameter echo, MPI/NCCL/UCX noise, progress lines) is ignored. Every
regular expression is anchored and has no nested unbounded repetition, so parsing stays
linear in the size of the text even on hostile input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Tuple

from scalebench.errors import ParseError
from scalebench.parse._common import (
    FINITE,
    NONFINITE,
    Value,  # a finite float, or the token as printed ("-nan", "inf", "1.#QNAN")
    complete_text,
    finite_max,
    finite_values,
    is_finite,
    lines_of,
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

THREE_RESIDUAL_VERSION = "1.0 (three-residual format)"
# HPL.dat's threshold when the output states none (HPL's sample HPL.dat and every build's default).
DEFAULT_THRESHOLD = 16.0


def _plural_tests(count: int) -> str:
    return f"{count} test" if count == 1 else f"{count} tests"


@dataclass(frozen=True)
class HplRow:
    """One test: the result row and its scaled residual check.

    ``residual`` and ``status`` are None when the output stops before the residual line.
    ``residuals`` holds all three values of the HPL 1.0/1.0a format (None for 2.x). ``status`` is
    HPL's, except that a row HPL says PASSED is FAILED here, with a ``reason``, when a field makes no
    physical sense or a residual is not at or below the threshold the output states (see _verdict).
    """

    tv: str
    n: int
    nb: int
    p: int
    q: int
    time_s: Value
    gflops: Value
    residual: Optional[Value]
    status: Optional[str]
    residuals: Optional[Tuple[Value, ...]] = None
    reason: Optional[str] = None  # why scalebench fails a row HPL passed

    def label(self, index: int) -> str:
        return f"row {index} (N={self.n} NB={self.nb} {self.p}x{self.q})"

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
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

    def to_dict(self) -> Dict[str, int]:
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
    last values printed. ``cut_line`` says why a last line without its line end was dropped.
    """

    rows: Tuple[HplRow, ...]
    counts: Optional[HplCounts]
    end_of_tests: bool
    hpl_version: Optional[str] = None
    eps: Optional[float] = None
    threshold: Optional[float] = None
    cut_line: Optional[str] = None

    @property
    def rmax_gflops(self) -> Optional[float]:
        return finite_max(r.gflops for r in self.rows if r.status == "PASSED")

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
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

    def problems(self, expected_cases: Optional[int] = None) -> List[str]:
        """Reasons why this is not a clean, complete, residual-checked run; [] when it is."""
        found: List[str] = [self.cut_line] if self.cut_line else []
        for index, row in enumerate(self.rows, 1):
            found.extend(_row_problems(index, row, self.threshold))
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


def _row_problems(index: int, row: HplRow, threshold: Optional[float]) -> List[str]:
    label = row.label(index)
    if row.reason is not None:
        return [f"{label} FAILED: {row.reason}"]
    found: List[str] = []
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
        limit = f" > threshold {threshold:g}" if threshold is not None else ""
        found.append(f"{label} FAILED the residual check: {max(finite):.3g}{limit}")
    return found


def _count_problems(counts: HplCounts, n_rows: int) -> List[str]:
    found: List[str] = []
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

    __slots__ = ("row", "residuals", "statuses", "three_residual")

    def __init__(self, row: HplRow) -> None:
        self.row = row
        self.residuals: List[Value] = []
        self.statuses: List[str] = []
        self.three_residual = False

    def wants_residual(self) -> bool:
        return len(self.residuals) < (3 if self.three_residual else 1)

    def add_residual(self, label: str, value: Value, status: str) -> None:
        # HPL 2.x has one check whose label ends in ||b||_oo; HPL 1.0 has three others.
        if not self.residuals:
            self.three_residual = "||b||_oo" not in label
        self.residuals.append(value)
        self.statuses.append(status)

    def freeze(self) -> HplRow:
        status: Optional[str] = None
        if self.statuses:
            status = "FAILED" if "FAILED" in self.statuses else "PASSED"
        return replace(
            self.row,
            residual=self.residuals[0] if self.residuals else None,
            status=status,
            residuals=tuple(self.residuals) if self.three_residual else None,
        )


def _impossible(row: HplRow, threshold: float, stated: bool) -> Optional[str]:
    """Why a row HPL passed cannot stand, or None. HPL prints Time with two decimals (0.00 for a tiny
    N) and Gflops = (2/3 N^3 + 3/2 N^2) / Time from the unrounded time."""
    for name, value in (("N", row.n), ("NB", row.nb), ("P", row.p), ("Q", row.q)):
        if not 1 <= value <= C_INT_MAX:
            return f"{name}={value}: HPL takes 1 to {C_INT_MAX}"
    if not is_finite(row.time_s):
        return f"time is not finite ({row.time_s})"
    if not is_finite(row.gflops):
        return f"Gflops is not finite ({row.gflops})"
    time_s, gflops = float(row.time_s), float(row.gflops)  # type: ignore[arg-type]
    if time_s < 0:
        return f"time {time_s:g} s is negative"
    if gflops <= 0:
        return f"Gflops {gflops:g} is not positive"
    for value in row.residuals if row.residuals is not None else (row.residual,):
        if not is_finite(value):
            return f"residual is not finite ({value})"
        if value < 0 or value > threshold:  # type: ignore[operator]
            side = "negative" if value < 0 else f"above the threshold {threshold:g}"  # type: ignore[operator]
            return f"residual {value:g} is {side}" + ("" if stated else " (HPL's default; the output states none)")
    if time_s > 0:
        expected = (2 / 3 * row.n**3 + 1.5 * row.n**2) / time_s / 1e9
        if abs(gflops / expected - 1) > 0.02 + 0.006 / time_s:
            return (f"Gflops {gflops:g} does not follow from N={row.n} and time {time_s:g} s "
                    f"(HPL would print {expected:.4g})")
    return None


def _verdict(row: HplRow, threshold: Optional[float]) -> HplRow:
    """`row`, FAILED with the reason when HPL passed it and it cannot stand (see _impossible)."""
    if row.status != "PASSED":
        return row
    reason = _impossible(row, threshold if threshold is not None else DEFAULT_THRESHOLD, threshold is not None)
    return row if reason is None else replace(row, status="FAILED", reason=reason)


def _bare_row(match: re.Match[str]) -> HplRow:
    tv, n, nb, p, q, time_s, gflops = match.groups()
    return HplRow(tv, int(n), int(nb), int(p), int(q), to_value(time_s), to_value(gflops), None, None)


class _Summary:
    """A 'Finished N tests' block being read; complete once its three count lines are seen."""

    __slots__ = ("passed", "failed", "skipped")

    def __init__(self) -> None:
        self.passed: Optional[int] = None
        self.failed: Optional[int] = None
        self.skipped: Optional[int] = None

    def feed(self, line: str) -> Optional[HplCounts]:
        """Take a count line; the counts once passed, failed and skipped are all known."""
        for attr, regex in (("passed", _PASSED_RE), ("failed", _FAILED_RE), ("skipped", _SKIPPED_RE)):
            match = regex.match(line)
            if match:
                setattr(self, attr, int(match.group(1)))
        if self.passed is None or self.failed is None or self.skipped is None:
            return None
        return HplCounts(self.passed, self.failed, self.skipped)


def _add(total: Optional[HplCounts], more: HplCounts) -> HplCounts:
    if total is None:
        return more
    return HplCounts(total.passed + more.passed, total.failed + more.failed, total.skipped + more.skipped)


class _Header:
    """Facts from the banner and the parameter header; the last value printed wins."""

    __slots__ = ("version", "eps", "threshold")

    def __init__(self) -> None:
        self.version: Optional[str] = None
        self.eps: Optional[float] = None
        self.threshold: Optional[float] = None

    def feed(self, line: str) -> None:
        if line.startswith("HPL"):
            match = _BANNER_RE.match(line)
            if match:
                self.version = match.group(1)
        elif line.startswith("-"):
            match = _EPS_RE.match(line)
            if match:
                self.eps = _finite_or(match.group(1), self.eps)
            match = _THRESHOLD_RE.match(line)
            if match:
                self.threshold = _finite_or(match.group(1), self.threshold)


def parse_hpl(text: str) -> HplOutput:
    """Parse the whole text of an HPL output; ParseError if it holds no result row. A last line
    without its line end is dropped (and named in ``problems()``): HPL was still writing it."""
    text, cut = complete_text(text)
    tests: List[_Test] = []
    current: Optional[_Test] = None
    summary: Optional[_Summary] = None
    counts: Optional[HplCounts] = None
    rows_at_end: Optional[int] = None
    header = _Header()

    for line in lines_of(text):
        first = line[0]
        if first == "W":
            match = _ROW_RE.fullmatch(line)
            if match:
                current = _Test(_bare_row(match))
                tests.append(current)
                continue
        if first == "|":
            match = _RESID_RE.match(line)
            if match and current is not None and current.wants_residual():
                label, value, status = match.groups()
                current.add_residual(label, to_value(value), status)
            continue
        done = summary.feed(line) if summary is not None else None
        if done is not None:
            counts, summary = _add(counts, done), None
        elif _FINISHED_RE.match(line):
            summary = _Summary()
        elif _END_RE.fullmatch(line):
            rows_at_end = len(tests)
        else:
            header.feed(line)

    if not tests:
        raise ParseError(with_note("no HPL result row (T/V N NB P Q Time Gflops) found", cut))
    rows = tuple(_verdict(test.freeze(), header.threshold) for test in tests)
    version = header.version
    if version is None and any(row.residuals is not None for row in rows):
        version = THREE_RESIDUAL_VERSION
    return HplOutput(
        rows=rows,
        counts=counts,
        end_of_tests=rows_at_end == len(rows),
        hpl_version=version,
        eps=header.eps,
        threshold=header.threshold,
        cut_line=cut,
    )


def _finite_or(token: str, default: Optional[float]) -> Optional[float]:
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
