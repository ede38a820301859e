"""Parser for GROMACS mdrun logs (md.log), GROMACS 4.6 to 2025, as mdrun prints them.

What is read, in the order mdrun prints it:

* the build: ``GROMACS version:`` (``Gromacs version:    VERSION 4.6.7`` before 5.0), ``Precision:``,
  ``MPI library:`` (``MPI``, ``thread_mpi``), ``SIMD instructions:``;
* the input parameters' ``nsteps``, ``dt`` (ps) and ``init-step`` (``init_step`` before 2018);
* the processes: ``Using N MPI processes`` (``MPI threads`` in a thread-MPI build) and ``Using T
  OpenMP threads per MPI process`` (the PME-only ranks' line, ``... for PME``, is not the run's);
* the system: ``There are: N Atoms`` and one such line per other particle type (VSites, Shells);
* the run: ``Started mdrun on rank 0`` (``on node 0`` before 2018), each energies block's ``Step
  Time`` header and the step under it, ``step S: resetting all time and cycle counters``
  (mdrun -resetstep, -resethway), the energies' values (a nan or inf among them is named);
* the end (gmxlib/nrnb.cpp print_perf, timing/wallcycle.cpp): the cycle accounting's ``On N MPI
  ranks[, each using T OpenMP threads]`` (``doing PP, and`` / ``on M MPI ranks doing PME`` with
  separate PME ranks), its table and breakdowns (``Breakdown of PME mesh computation``), each row's
  share of the wall time; ``Time:`` under its header
  ``Core t (s)  Wall t (s)  (%)``; the units header, ``(ns/day)  (hour/ns)`` (also ``(Mnbf/s)
  (GFlops)`` first with GMX_DETAILED_PERF_STATS, ``(steps/hour)`` for a run without time steps),
  then ``Performance:`` with one value per unit, in order; ``Finished mdrun on rank 0``;
* an error block (utility/errorcodes.cpp: ``Fatal error:``, ``Error in user input:``, ...): its first
  line is the error.

A log may hold several runs (mdrun -append): each banner, ``:-) GROMACS - gmx mdrun, ... (-:``, starts
the run reported, and ``Started mdrun`` forgets what an earlier start of it measured.

Every value is checked before use: a time or rate that cannot be (not finite, not positive, beyond
its quantity's bound: scalebench.parse._common.refusal), a count below 1, is null and named; figures
mdrun derives from one another and that disagree are named (ns/day x hour/ns is 24; ns/day is the
timed steps x dt over the wall time; the core time over the wall time is its (%); the MPI processes
started are the cycle accounting's ranks). Both are ``problems`` (``warnings`` in the JSON). Lines are
matched with anchored, bounded expressions, so parsing is linear in the size of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from scalebench.errors import ParseError
from scalebench.parse._common import NONFINITE_RE, VALUE, Value, complete_text, is_finite, lines_of
from scalebench.parse._common import agrees, parse_int, refused_or, to_value, with_note

_BANNER_RE = re.compile(r":-\).{1,200}\(-:")
_VERSION_RE = re.compile(r"(?i:gromacs version):[ \t]*(?:VERSION[ \t]+)?(\S.{0,120})")
_BUILD_KEYS = {"Precision:": "precision", "MPI library:": "mpi_library", "SIMD instructions:": "simd"}
_PARAMETER_RE = re.compile(r"(nsteps|dt|init[-_]step)[ \t]*=[ \t]*(\S{1,40})")
_PROCESSES_RE = re.compile(r"Using (\d{1,9}) MPI (?:process|processes|thread|threads)")
_THREADS_RE = re.compile(r"Using (\d{1,9}) OpenMP threads?(?: per (?:MPI process|tMPI thread))?")
_PARTICLES_RE = re.compile(r"There are:[ \t]+(\d{1,18})[ \t]+(Atom|Nucleus|Shell|Bond|VSite)s")
_STARTED_RE = re.compile(r"Started mdrun on (?:rank|node) 0\b.{0,100}")
_FINISHED_RE = re.compile(r"Finished mdrun on (?:rank|node) 0\b.{0,100}")
_STEP_ROW_RE = re.compile(rf"(\d{{1,18}})[ \t]+({VALUE})(?:[ \t]+{VALUE}){{0,3}}")
_RESET_RE = re.compile(r"step (\d{1,18}): resetting all time and cycle counters")
_CYCLE_RANKS_RE = re.compile(r"On (\d{1,9}) MPI ranks?( doing PP)?(?:,(?: each)? using (\d{1,9}) OpenMP threads)?,?"
                             r"(?: and)?")
_PME_RANKS_RE = re.compile(r"on (\d{1,9}) MPI ranks? doing PME(?:,(?: each)? using \d{1,9} OpenMP threads)?")
_UNITS_RE = re.compile(r"\(([A-Za-z/]{1,12})\)(?:[ \t]+\(([A-Za-z/]{1,12})\)){0,5}")
_UNIT_RE = re.compile(r"\(([A-Za-z/]{1,12})\)")
_VALUES_ROW_RE = re.compile(rf"{VALUE}(?:[ \t]+{VALUE}){{0,20}}")
_NONFINITE_TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_.])[+-]?(?i:nan|inf)(?![A-Za-z0-9_])")
_GROMPP_ERROR_RE = re.compile(r"ERROR \d{1,9} \[file [^\]]{1,300}\]:")
# The titles of GROMACS's error blocks (utility/errorcodes.cpp), each on a line of its own, ended by ':'.
ERROR_TITLES = frozenset((
    "Fatal error", "Out of memory", "File not found", "System I/O error", "Error in user input",
    "Inconsistency in user input", "Requested tolerance cannot be achieved", "Simulation instability detected",
    "Feature not implemented", "Invalid value (bug)", "Invalid call (bug)", "Internal error (bug)", "API error (bug)",
    "Range checking error (possible bug)", "Communication (parallel processing) problem", "Modular simulator error",
    "Unknown error"))

# Units of the Performance line -> field (print_perf); the others (Mnbf/s, GFlops, MFlops) are not read.
_PERF_FIELDS = {"ns/day": "ns_per_day", "hour/ns": "hours_per_ns", "steps/hour": "steps_per_hour"}
# Each field's unit in scalebench/data/quantities.yaml.
_UNITS = {"ns_per_day": "ns/day", "hours_per_ns": "hours/ns", "steps_per_hour": "steps/hour", "wall_time_s": "s",
          "core_time_s": "s", "core_pct": "%"}
_PRINTED = 0.0005  # half the last of the three decimals print_perf writes


def _error_title(line: str) -> bool:
    return line.endswith(":") and line[:-1] in ERROR_TITLES


@dataclass
class _Run:
    """One mdrun's log as it is read; frozen into GromacsLog."""

    version: str | None = None
    build: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, Value] = field(default_factory=dict)
    mpi_ranks: int | None = None
    omp_threads: int | None = None
    particles: dict[str, int] = field(default_factory=dict)
    started: bool = False
    last_step: int | None = None
    reset_step: int | None = None
    cycle_ranks: int | None = None
    pme_ranks: int | None = None
    cycle_threads: int | None = None
    shares: dict[str, Value] = field(default_factory=dict)  # cycle accounting: row -> % of the wall time
    time: dict[str, Value] = field(default_factory=dict)
    perf: dict[str, Value] = field(default_factory=dict)
    perf_unlabelled: bool = False  # a Performance line without its units header
    finished: bool = False
    error: str | None = None
    nonfinite: bool = False

    def restart(self) -> None:
        """``Started mdrun``: what an earlier start measured is not this run's."""
        self.started, self.finished, self.error, self.nonfinite = True, False, None, False
        self.last_step = self.reset_step = self.cycle_ranks = self.pme_ranks = self.cycle_threads = None
        self.shares, self.time, self.perf, self.perf_unlabelled = {}, {}, {}, False


@dataclass(frozen=True)
class GromacsLog:
    """What an md.log says of its (last) run. ``complete``: it finished (``Finished mdrun``), printed its
    performance, and no fatal error."""

    gromacs_version: str | None
    precision: str | None
    mpi_library: str | None  # MPI | thread_mpi | none
    simd: str | None
    nsteps: int | None  # the input's (-1: no limit)
    dt_ps: float | None
    init_step: int | None
    particles: dict[str, int]  # "There are:" counts by particle type
    mpi_ranks: int | None  # "Using N MPI processes" (or thread-MPI threads)
    omp_threads: int | None  # per PP rank
    cycle_ranks: int | None  # the cycle accounting's ranks, PME-only ones included
    pme_ranks: int | None  # separate PME ranks (0 when none)
    last_step: int | None  # the step of the last energies printed
    reset_step: int | None  # where the time and cycle counters were reset, if they were
    core_time_s: float | None
    wall_time_s: float | None
    core_pct: float | None
    ns_per_day: float | None
    hours_per_ns: float | None
    steps_per_hour: float | None  # runs without time steps (minimisation)
    cycle_shares: dict[str, Value]  # the cycle accounting's rows: % of the wall time
    started: bool
    finished: bool
    error: str | None
    nonfinite_energies: bool
    problems: tuple[str, ...] = ()
    cut_line: str | None = None

    @property
    def atoms(self) -> int | None:
        """Every particle of the system, as its coordinates count them (atoms, virtual sites, shells)."""
        return sum(self.particles.values()) if self.particles else None

    @property
    def ranks(self) -> int | None:
        """The run's MPI ranks: the processes it started, else its cycle accounting's."""
        return self.mpi_ranks if self.mpi_ranks is not None else self.cycle_ranks

    @property
    def timed_steps(self) -> int | None:
        """The steps the Performance line times: from the reset (or the first step) to the last, both counted."""
        start = self.reset_step if self.reset_step is not None else (self.init_step or 0)
        if self.last_step is None or self.last_step < start:
            return None
        return self.last_step - start + 1

    @property
    def comm_pct(self) -> float | None:
        """The wall-time share of the cycle accounting's communication rows, those named Comm. or redist.:
        coordinates, forces with the wait for them, energies, and in the PME breakdown the redistribution
        of coordinates and forces and the 3D-FFT's; 0 on one rank, which has none; None without the table."""
        if not self.cycle_shares:
            return None
        values = [v for name, v in self.cycle_shares.items() if "Comm." in name or "redist." in name]
        if any(not is_finite(v) for v in values):
            return None
        return round(float(sum(values)), 3)  # type: ignore[arg-type]  # printed to 0.1: no float noise

    @property
    def complete(self) -> bool:
        return self.finished and self.error is None and (self.ns_per_day is not None or self.steps_per_hour is not None)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "gromacs_version": self.gromacs_version, "precision": self.precision, "mpi_library": self.mpi_library,
            "simd": self.simd, "nsteps": self.nsteps, "dt_ps": self.dt_ps, "init_step": self.init_step,
            "atoms": self.atoms, "particles": dict(self.particles), "mpi_ranks": self.mpi_ranks,
            "omp_threads": self.omp_threads, "cycle_ranks": self.cycle_ranks, "pme_ranks": self.pme_ranks,
            "last_step": self.last_step, "reset_step": self.reset_step, "timed_steps": self.timed_steps,
            "core_time_s": self.core_time_s, "wall_time_s": self.wall_time_s, "core_pct": self.core_pct,
            "ns_per_day": self.ns_per_day, "hours_per_ns": self.hours_per_ns, "steps_per_hour": self.steps_per_hour,
            "comm_pct": self.comm_pct, "cycle_shares": dict(self.cycle_shares), "started": self.started,
            "finished": self.finished, "complete": self.complete, "error": self.error,
            "nonfinite_energies": self.nonfinite_energies,
        }
        warnings = ([self.cut_line] if self.cut_line else []) + list(self.problems)
        if warnings:
            out["warnings"] = warnings
        return out


def _count(value: Value | int | None, what: str, least: int, refused: list[str]) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or value < least:
        refused.append(f"{what} {value} is not a whole number of at least {least}: dropped")
        return None
    return value


def _share(value: Value, name: str, refused: list[str]) -> bool:
    """A cycle accounting row's % of the wall time can be one (0 to 100); else it is named."""
    if is_finite(value) and 0 <= value <= 100:  # type: ignore[operator]
        return True
    refused.append(f"the cycle accounting's {name} share {value} % is not 0 to 100: dropped")
    return False


def _contradictions(log: GromacsLog) -> list[str]:
    """Figures of one run that mdrun derives from one another (print_perf), and do not agree."""
    found = []
    per_day, hours = log.ns_per_day, log.hours_per_ns
    if per_day is not None and hours is not None and not agrees(per_day * hours, 24.0, _PRINTED * (per_day + hours)):
        found.append(f"{per_day:g} ns/day contradicts {hours:g} hour/ns (their product is 24)")
    steps, dt, wall = log.timed_steps, log.dt_ps, log.wall_time_s
    if per_day is not None and steps and dt and wall:
        expected = steps * dt * 86.4 / wall  # ps -> ns, s -> day
        if not agrees(per_day, expected, expected / steps + _PRINTED + expected * _PRINTED / wall):
            found.append(f"{per_day:g} ns/day contradicts {steps} steps of {dt:g} ps in a wall time of {wall:g} s "
                         f"({expected:.4g} ns/day)")
    core, pct = log.core_time_s, log.core_pct
    if core is not None and wall and pct is not None and not agrees(pct, 100 * core / wall,
                                                                     0.05 + 0.05 * (1 + pct / 100) / wall):
        found.append(f"a core time of {core:g} s over a wall time of {wall:g} s is not {pct:g} %")
    if log.mpi_ranks is not None and log.cycle_ranks is not None and log.mpi_ranks != log.cycle_ranks:
        found.append(f"mdrun started {log.mpi_ranks} MPI processes, its cycle accounting counts "
                     f"{log.cycle_ranks} ranks")
    return found


def _freeze(run: _Run, cut: str | None) -> GromacsLog:
    refused: list[str] = []

    def measured(value: Value | None, key: str, what: str, positive: bool = True) -> float | None:
        if value is None:
            return None
        kept = refused_or(value, _UNITS[key], what, refused, positive)
        return kept if isinstance(kept, float) else None

    nsteps = run.parameters.get("nsteps")
    dt = run.parameters.get("dt")
    log = GromacsLog(
        gromacs_version=run.version,
        precision=run.build.get("precision"),
        mpi_library=run.build.get("mpi_library"),
        simd=run.build.get("simd"),
        nsteps=_count(nsteps, "nsteps", -1, refused),
        dt_ps=refused_or(dt, "ps", "dt", refused, positive=True) if dt is not None else None,  # type: ignore[arg-type]
        init_step=_count(run.parameters.get("init_step"), "init-step", 0, refused),
        particles={kind: n for kind, n in run.particles.items() if _count(n, f"{kind}s", 1, refused) is not None},
        mpi_ranks=_count(run.mpi_ranks, "MPI processes", 1, refused),
        omp_threads=_count(run.omp_threads or run.cycle_threads, "OpenMP threads", 1, refused),
        cycle_ranks=_count(run.cycle_ranks, "ranks", 1, refused),
        pme_ranks=run.pme_ranks,
        last_step=run.last_step,
        reset_step=run.reset_step,
        core_time_s=measured(run.time.get("core"), "core_time_s", "Core t", positive=False),
        wall_time_s=measured(run.time.get("wall"), "wall_time_s", "Wall t"),
        core_pct=measured(run.time.get("pct"), "core_pct", "Time (%)", positive=False),
        ns_per_day=measured(run.perf.get("ns_per_day"), "ns_per_day", "Performance (ns/day)"),
        hours_per_ns=measured(run.perf.get("hours_per_ns"), "hours_per_ns", "Performance (hour/ns)"),
        steps_per_hour=measured(run.perf.get("steps_per_hour"), "steps_per_hour", "Performance (steps/hour)"),
        cycle_shares={name: v for name, v in run.shares.items() if _share(v, name, refused)},
        started=run.started,
        finished=run.finished,
        error=run.error,
        nonfinite_energies=run.nonfinite,
        cut_line=cut,
    )
    if run.perf_unlabelled:
        refused.append("a Performance line without its units header ((ns/day) (hour/ns)): not read")
    return replace(log, problems=tuple(refused + _contradictions(log)))


def _parameter(key: str, token: str) -> Value | int:
    if key == "dt":
        return to_value(token)
    number = parse_int(token, signed=True)
    return number if number is not None else token


class _Reader:
    """Line-by-line state: the run being read and where in its log the reader is."""

    def __init__(self) -> None:
        self.run = _Run()
        self.recognised = False
        self.step_next = False  # the line after a "Step Time" header holds the step
        self.in_energies = False  # inside an energies block (its values may be nan)
        self.in_cycles = False  # inside the cycle accounting's table or one of its breakdowns
        self.section = ""  # the breakdown being read ("PME mesh computation"); "" in the main table
        self.time_columns: tuple[str, ...] = ()  # the Time: line's, from its header
        self.perf_columns: tuple[str, ...] = ()  # the Performance: line's, from the units header
        self.fatal_next = False  # the line after an error block's title ("Fatal error:") is the error

    def feed(self, line: str) -> None:
        run = self.run
        if self.fatal_next:
            self.fatal_next = False
            if run.error is None:
                run.error = line[:500]
            return
        if self.step_next:
            self.step_next = False
            match = _STEP_ROW_RE.fullmatch(line)
            if match:
                run.last_step = int(match.group(1))
                return
        if self.in_cycles and self._cycle_row(line):
            return
        if _BANNER_RE.fullmatch(line):
            self.run = _Run()
            self.recognised = True
            return
        if line.startswith(("GROMACS version:", "Gromacs version:")):
            match = _VERSION_RE.fullmatch(line)
            if match:
                run.version = match.group(1).strip()
                self.recognised = True
            return
        for prefix, key in _BUILD_KEYS.items():
            if line.startswith(prefix):
                run.build.setdefault(key, line[len(prefix):].strip()[:100])
                return
        words = line.split()
        if words[:2] == ["Step", "Time"]:
            self.step_next, self.in_energies = True, False
            return
        if line.startswith("Energies ("):
            self.in_energies = True
            return
        if self.in_energies and _VALUES_ROW_RE.fullmatch(line):
            if _NONFINITE_TOKEN_RE.search(line):
                run.nonfinite = True
            return
        if _error_title(line) or line.startswith("Fatal error: "):
            rest = line[len("Fatal error:"):].strip() if line.startswith("Fatal error: ") else ""
            if rest and run.error is None:
                run.error = rest[:500]
            self.fatal_next = not rest
            self.recognised = True
            return
        self._other(line, words)

    def _other(self, line: str, words: list[str]) -> None:
        run = self.run
        match = _PARAMETER_RE.fullmatch(line)
        if match:
            key = match.group(1).replace("-", "_")
            run.parameters.setdefault(key, _parameter(key, match.group(2)))
            return
        for expression, setter in ((_PROCESSES_RE, "mpi_ranks"), (_THREADS_RE, "omp_threads")):
            match = expression.fullmatch(line)
            if match:
                setattr(run, setter, int(match.group(1)))
                return
        match = _PARTICLES_RE.fullmatch(line)
        if match:
            run.particles[match.group(2)] = int(match.group(1))
            self.recognised = True
            return
        if _STARTED_RE.fullmatch(line):
            run.restart()
            self.recognised = True
            return
        match = _RESET_RE.fullmatch(line)
        if match:
            run.reset_step = int(match.group(1))
            return
        if self._end_of_run(line, words):
            self.recognised = True

    def _end_of_run(self, line: str, words: list[str]) -> bool:
        """The cycle accounting, Time:, the units header and Performance:, Finished mdrun."""
        run = self.run
        match = _CYCLE_RANKS_RE.fullmatch(line)
        if match:
            run.cycle_ranks = int(match.group(1))
            run.pme_ranks = 0
            run.cycle_threads = int(match.group(3)) if match.group(3) else 1
            return True
        match = _PME_RANKS_RE.fullmatch(line)
        if match and run.cycle_ranks is not None:
            run.pme_ranks = int(match.group(1))
            run.cycle_ranks += run.pme_ranks
            return True
        if line.startswith("Computing:") and "Cycles" in line:
            self.in_cycles, self.section, run.shares = True, "", {}
            return True
        if line.startswith("Breakdown of ") and run.shares:
            self.in_cycles, self.section = True, line[len("Breakdown of "):][:60]
            return True
        if line.startswith(("Core t (s)", "NODE (s)")):
            self.time_columns = ("core", "wall", "pct") if line.startswith("Core") else ("node", "wall", "pct")
            return True
        if line.startswith("Time:"):
            values = [to_value(token) for token in words[1:]]
            if self.time_columns and len(values) == len(self.time_columns):
                run.time = dict(zip(self.time_columns, values))
            return True
        if _UNITS_RE.fullmatch(line):
            self.perf_columns = tuple(_UNIT_RE.findall(line))
            return True
        if line.startswith("Performance:"):
            values = [to_value(token) for token in words[1:]]
            if self.perf_columns and len(values) == len(self.perf_columns):
                run.perf = {_PERF_FIELDS[unit]: value for unit, value in zip(self.perf_columns, values)
                            if unit in _PERF_FIELDS}
            else:
                run.perf_unlabelled = True
            self.perf_columns = ()
            return True
        if _FINISHED_RE.fullmatch(line):
            run.finished = True
            return True
        return False

    def _cycle_row(self, line: str) -> bool:
        """A row of the cycle accounting's table (name, [ranks threads count], wall s, Gcycles, %): its share
        kept; the table's other lines consumed; False (table over) at anything else."""
        words = line.split()
        if line.startswith("-") or words[:2] == ["Ranks", "Threads"] or words[:1] in (["Nodes"], ["Ranks"]):
            return True
        numbers = [to_value(w) for w in words[-3:]]
        if len(words) < 4 or not all(isinstance(v, float) or NONFINITE_RE.fullmatch(w)
                                     for v, w in zip(numbers, words[-3:])):
            self.in_cycles = False
            return False
        head = words[:-3]
        if len(head) >= 4 and all(parse_int(w) is not None for w in head[-3:]):
            head = head[:-3]
        name = " ".join(head)
        if not name[:1].isalpha() or len(name) > 60:
            self.in_cycles = False
            return False
        if name == "Total":
            self.in_cycles = False
        else:
            self.run.shares[f"{self.section}: {name}" if self.section else name] = numbers[-1]
        return True


def fatal_error(text: str) -> str | None:
    """The first error any GROMACS program printed: grompp's first ``ERROR n [file ...]:`` (its "Fatal error"
    only counts them), else the first error block's message; None without one. At most 500 characters."""
    lines = text.splitlines()
    found = None
    for index, line in enumerate(lines):
        line = line.strip()
        if _GROMPP_ERROR_RE.fullmatch(line):
            return _paragraph(lines, index + 1, "ERROR:")
        if found is None and (_error_title(line) or line.startswith("Fatal error: ")):
            found = line[len("Fatal error:"):].strip() if line.startswith("Fatal error: ") else _paragraph(
                lines, index + 1, "")
    return found


def _paragraph(lines: list[str], start: int, prefix: str) -> str:
    """The lines from `start` to the next blank one, joined (without `prefix`); '(no message)' if none."""
    words: list[str] = []
    for line in lines[start:start + 20]:
        if not line.strip():
            break
        words += line.split()
    text = " ".join(words).removeprefix(prefix).strip()
    return text[:500] or "(no message)"


def parse_gromacs(text: str) -> GromacsLog:
    """Parse an md.log; ParseError only when nothing in it is recognisably GROMACS's. A last line without
    its line end is dropped, with a warning."""
    text, cut = complete_text(text)
    reader = _Reader()
    for line in lines_of(text):
        reader.feed(line)
    if not reader.recognised:
        raise ParseError(with_note("no GROMACS banner, 'GROMACS version:', 'Started mdrun', 'Performance:' or "
                                   "'Finished mdrun' line found", cut))
    return _freeze(reader.run, cut)
