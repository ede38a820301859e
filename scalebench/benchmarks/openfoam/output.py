"""Parser for OpenFOAM solver logs (OpenFOAM 2.x to v2312, Foundation and ESI releases).

A solver log is a banner (``Build  :``, ``Exec   :``, ``nProcs :`` ...), then one block per
time step: ``Time = 0.005`` (``Time = 0.005s`` in recent Foundation releases), the linear
solver lines ``Solving for Ux, Initial residual = ..., Final residual = ..., No Iterations N``
and ``ExecutionTime = 0.11 s  ClockTime = 0 s``, and at the end ``End`` (plus
``Finalising parallel run`` for parallel runs). ExecutionTime is cumulative CPU time since the
start, so seconds per step come from the differences between successive values.

The banner's ``Time   : 16:10:47`` (with a colon) is the wall-clock start, never a time step.
When several runs are appended to one file, the last banner starts the run reported. Lines
are matched with anchored, bounded expressions, so parsing is linear in the text size.

An ExecutionTime or ClockTime that cannot be (not finite, negative, beyond its quantity's bound:
scalebench.parse._common.refusal) is null and never counted, and a cumulative time that falls, or an
nProcs of 0, is named too: all in ``problems`` (``warnings`` in the JSON).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field, replace
from typing import Any

from scalebench.errors import ParseError
from scalebench.parse._common import NUM, Value, complete_text, is_finite, lines_of, refusal, to_value, with_note

# A residual: one value, or one per component for coupled (vector) solvers "(1 0.5 0)".
Residual = Value | list[Value]

_BANNER_RE = re.compile(r"(Build|Exec|nProcs)[ \t]*:[ \t]*(.*)")
_NPROCS_RE = re.compile(r"\d{1,9}")
_TIME_RE = re.compile(rf"Time = ({NUM})s?")
_EXEC_TIME_RE = re.compile(
    rf"ExecutionTime[ \t]*=[ \t]*({NUM})[ \t]*s(?:[ \t]+ClockTime[ \t]*=[ \t]*({NUM})[ \t]*s)?"
)
_RESIDUAL_RE = re.compile(
    r"([A-Za-z0-9_:<>]{1,60}):[ \t]+Solving for ([^,]{1,100}), Initial residual = ([^,]{1,300}),"
    r" Final residual = ([^,]{1,300}), No Iterations (\d{1,18})"
)


def _residual(token: str) -> Residual:
    token = token.strip()
    if token.startswith("(") and token.endswith(")"):
        return [to_value(part) for part in token[1:-1].split()]
    return to_value(token)


def _finite_or_none(value: float) -> float | None:
    """None for a derived figure that overflowed (differences of printed values near 1e308)."""
    return value if is_finite(value) else None


def _finite(value: Residual) -> bool:
    values = value if isinstance(value, list) else [value]
    return all(is_finite(v) for v in values)


@dataclass(frozen=True)
class SolverResidual:
    """The last linear solve of one field."""

    solver: str
    initial: Residual
    final: Residual
    iterations: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "solver": self.solver,
            "initial": self.initial,
            "final": self.final,
            "iterations": self.iterations,
        }


@dataclass(frozen=True)
class OpenfoamLog:
    """What one solver run says about itself.

    ``nprocs`` is the banner's nProcs; 1 for a serial run whose banner omits it (Foundation
    releases print it only in parallel), None for a parallel run without it.
    ``final_*`` come from the last ExecutionTime line (its ClockTime may be missing if the log
    is cut there); ``last_complete_pair`` is the last line that has both values.
    ``seconds_per_step_mean`` is (last - first ExecutionTime) / (lines - 1), which leaves out
    the start-up cost folded into the first value; the median is robust to write steps.
    """

    build: str | None
    exec: str | None
    nprocs_line: int | None
    exec_times: tuple[float, ...]
    final_execution_time_s: Value | None
    final_clock_time_s: Value | None
    n_execution_time_lines: int
    last_complete_pair: tuple[Value, Value] | None
    n_time_steps: int
    first_time: Value | None
    last_time: Value | None
    finished: bool
    finalising_parallel_run: bool
    fatal_error: bool
    last_residuals: dict[str, SolverResidual]
    first_nonfinite_time: Value | None
    nonfinite_residuals: bool
    cut_line: str | None = None  # complete_text's warning
    problems: tuple[str, ...] = ()  # times refused or falling, an nProcs of 0

    @property
    def application(self) -> str | None:
        if not self.exec:
            return None
        return self.exec.split()[0]

    @property
    def parallel(self) -> bool:
        flagged = bool(self.exec) and "-parallel" in self.exec.split()
        return flagged or (self.nprocs_line or 1) > 1

    @property
    def nprocs(self) -> int | None:
        if self.nprocs_line is not None:
            return self.nprocs_line
        return None if self.parallel else 1

    @property
    def step_deltas(self) -> list[float]:
        times = self.exec_times
        # Rounded to 1e-9 s: the printed values have at most a few decimals, and the
        # difference of two binary floats would otherwise show as 0.03000000000000025.
        return [round(b - a, 9) for a, b in zip(times, times[1:])]

    @property
    def seconds_per_step_mean(self) -> float | None:
        times = self.exec_times
        if len(times) < 2 or self._falls:
            return None
        return _finite_or_none((times[-1] - times[0]) / (len(times) - 1))

    @property
    def seconds_per_step_median(self) -> float | None:
        deltas = self.step_deltas
        return _finite_or_none(statistics.median(deltas)) if deltas and not self._falls else None

    @property
    def _falls(self) -> bool:
        """A cumulative time that falls: no time per step can be made of it (named in problems)."""
        return any(b < a for a, b in zip(self.exec_times, self.exec_times[1:]))

    def to_dict(self) -> dict[str, Any]:
        pair = self.last_complete_pair
        return {
            "build": self.build,
            "exec": self.exec,
            "application": self.application,
            "parallel": self.parallel,
            "nprocs": self.nprocs,
            "final_execution_time_s": self.final_execution_time_s,
            "final_clock_time_s": self.final_clock_time_s,
            "n_execution_time_lines": self.n_execution_time_lines,
            "n_time_steps": self.n_time_steps,
            "first_time": self.first_time,
            "last_time": self.last_time,
            "finished": self.finished,
            "finalising_parallel_run": self.finalising_parallel_run,
            "last_complete_pair": (
                {"execution_time_s": pair[0], "clock_time_s": pair[1]} if pair is not None else None
            ),
            "seconds_per_step_mean": self.seconds_per_step_mean,
            "seconds_per_step_median": self.seconds_per_step_median,
            "fatal_error": self.fatal_error,
            "nonfinite_residuals": self.nonfinite_residuals,
            "first_nonfinite_time": self.first_nonfinite_time,
            "last_residuals": {name: r.to_dict() for name, r in self.last_residuals.items()},
        } | ({"warnings": warnings} if (warnings := [self.cut_line] * bool(self.cut_line) + list(self.problems)) else {})


@dataclass
class _Run:
    build: str | None = None
    exec: str | None = None
    nprocs: int | None = None
    exec_times: list[float] = field(default_factory=list)
    n_exec: int = 0
    final_exec: Value | None = None
    final_clock: Value | None = None
    pair: tuple[Value, Value] | None = None
    n_times: int = 0
    first_time: Value | None = None
    last_time: Value | None = None
    finished: bool = False
    finalising: bool = False
    fatal: bool = False
    residuals: dict[str, SolverResidual] = field(default_factory=dict)
    first_nonfinite_time: Value | None = None
    nonfinite: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def started(self) -> bool:
        return bool(self.n_times or self.n_exec or self.residuals or self.finished)

    def freeze(self) -> OpenfoamLog:
        return OpenfoamLog(
            build=self.build,
            exec=self.exec,
            nprocs_line=self.nprocs,
            exec_times=tuple(self.exec_times),
            final_execution_time_s=self.final_exec,
            final_clock_time_s=self.final_clock,
            n_execution_time_lines=self.n_exec,
            last_complete_pair=self.pair,
            n_time_steps=self.n_times,
            first_time=self.first_time,
            last_time=self.last_time,
            finished=self.finished,
            finalising_parallel_run=self.finalising,
            fatal_error=self.fatal,
            last_residuals=dict(self.residuals),
            first_nonfinite_time=self.first_nonfinite_time,
            nonfinite_residuals=self.nonfinite,
            problems=tuple(self.problems),
        )


def _feed(run: _Run, line: str) -> bool:
    """Read one stripped line into ``run``; True when the line was OpenFOAM output."""
    if line.startswith("Time = "):
        match = _TIME_RE.fullmatch(line)
        if match:
            value = to_value(match.group(1))
            run.n_times += 1
            run.last_time = value
            if run.first_time is None:
                run.first_time = value
            return True
        return False
    if line.startswith("ExecutionTime"):
        match = _EXEC_TIME_RE.match(line)
        if not match:
            return False
        seconds = _time(run, "ExecutionTime", to_value(match.group(1)), run.final_exec)
        clock = _time(run, "ClockTime", to_value(match.group(2)), run.final_clock) if match.group(2) else None
        run.n_exec += 1
        run.final_exec, run.final_clock = seconds, clock
        if seconds is not None:
            run.exec_times.append(seconds)  # type: ignore[arg-type]
            if clock is not None:
                run.pair = (seconds, clock)
        return True
    if "Solving for " in line:
        match = _RESIDUAL_RE.match(line)
        if not match:
            return False
        solver, name, initial, final, iterations = match.groups()
        result = SolverResidual(solver, _residual(initial), _residual(final), int(iterations))
        run.residuals[name.strip()] = result
        if not (_finite(result.initial) and _finite(result.final)):
            if not run.nonfinite:
                run.first_nonfinite_time = run.last_time
            run.nonfinite = True
        return True
    if line == "End":
        run.finished = True
        return True
    if line == "Finalising parallel run":
        run.finalising = True
        return True
    if "FOAM FATAL" in line or line.startswith("#0  Foam::error::printStack"):
        run.fatal = True
        return True
    if "Foam::sigFpe::sigHandler" in line or "Foam::sigSegv::sigHandler" in line:
        run.fatal = True
        return True
    match = _BANNER_RE.fullmatch(line)
    if match:
        key, value = match.group(1), match.group(2).strip()
        if key == "Build":
            run.build = value
        elif key == "Exec":
            run.exec = value
        elif _NPROCS_RE.fullmatch(value):
            run.nprocs = int(value) if int(value) >= 1 else None
            if run.nprocs is None:
                run.problems.append(f"nProcs {value} is no process count: dropped")
        return True
    return False


def _time(run: _Run, name: str, value: Value, before: Value | None) -> Value | None:
    """A cumulative time as printed, None (named in run.problems) when it cannot be; a time below the one
    before it is named (both are totals since the start)."""
    reason = refusal(value, "s", name)
    if reason is not None:
        run.problems.append(f"{reason}: dropped")
        return None
    if is_finite(before) and value < before:  # type: ignore[operator]
        run.problems.append(f"{name} falls from {before:g} s to {value:g} s: it is a total since the start")
    return value


def parse_openfoam(text: str) -> OpenfoamLog:
    """Parse an OpenFOAM solver log; ParseError when it has no banner, time step or ExecutionTime. A
    last line without its line end is dropped, with a warning."""
    text, cut = complete_text(text)
    run = _Run()
    recognised = False
    for line in lines_of(text):
        if line.startswith("Build") and run.started and _BANNER_RE.fullmatch(line):
            run = _Run()  # a second run appended to the same file
        recognised = _feed(run, line) or recognised
    if not recognised or not (run.build or run.exec or run.n_times or run.n_exec):
        raise ParseError(with_note("no OpenFOAM banner, 'Time =' or 'ExecutionTime =' line found", cut))
    return replace(run.freeze(), cut_line=cut)
