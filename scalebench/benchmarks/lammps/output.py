"""Parser for LAMMPS log files (log.lammps or captured screen output), 2007 to 2024 releases.

A log may hold several runs (``run``/``minimize`` commands, or several invocations appended),
each ending in a ``Loop time of ...`` summary followed by the performance lines and a timing
breakdown. The run reported is the LAST complete one, i.e. the last that printed its Loop
time, skipping ``run 0`` setup-only runs when a real run exists; the log-level flags
(``complete``, ``nan_in_thermo``, ``error``) say whether anything went wrong around it.

Formats read:

* ``Performance: X tau/day, Y timesteps/s[, Z katom-step/s]`` (lj units),
  ``X ns/day, Y hours/ns, Z timesteps/s[, W Matom-step/s]`` (real/metal/...),
  ``X fs/day, Y hours/fs, Z timesteps/s`` (electron). LAMMPS picks the atom-step prefix
  (k/M/G) by magnitude, so ``atom_steps_per_s`` is normalised to atom-steps/s;
* ``P% CPU use with M MPI tasks x T OpenMP threads`` (``x no OpenMP threads`` in builds
  without OpenMP: ``omp_threads`` is then null);
* the ``MPI task timing breakdown`` table (with or without the ``%CPU`` column of
  ``timer full``), and the pre-2013 ``Comm  time (%) = 0.27 (1.88)`` lines;
* ``Total wall time: H:MM:SS``.

Lines are read one at a time with anchored, bounded expressions, so parsing is linear in the
size of the text.

The reported run's figures are checked before use: a time, rate or count that cannot be (not finite,
negative, beyond its quantity's bound: scalebench.parse._common.refusal; 0 processes) is null and
named, and figures of the run that contradict each other are named (LAMMPS's finish.cpp derives them
from one another): timesteps/s against steps / Loop time, atom-steps/s against atoms x timesteps/s,
ns/day x hours/ns against 24, and the procs of the Loop time line against the MPI tasks of the CPU
line. Both are ``problems`` (``warnings`` in the JSON).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from scalebench.errors import ParseError
from scalebench.parse._common import NONFINITE_RE, NUM, VALUE, Value, is_finite, lines_of, refused_or, to_value
from scalebench.parse._common import agrees, complete_text, with_note
from scalebench.parse._common import shift_decimal  # part of this module's API

_BANNER_RE = re.compile(r"LAMMPS \(([^()]{1,200})\)")
_LOOP_RE = re.compile(
    rf"Loop time of ({VALUE}) on (\d{{1,18}}) procs(?: \([^()]{{0,100}}\))? for (\d{{1,18}}) steps"
    rf" with ({NUM}) atoms"
)
_PERF_ITEM_RE = re.compile(rf"({VALUE})[ \t]+([A-Za-z/-]{{1,20}})")
_CPU_RE = re.compile(
    rf"({VALUE})% CPU use with (\d{{1,18}}) MPI tasks x (\d{{1,18}}|no) OpenMP threads"
)
_WALL_RE = re.compile(r"Total wall time:[ \t]*(\d{1,12}):(\d{1,2}):(\d{1,2})")
_OLD_TIMING_RE = re.compile(
    rf"([A-Za-z]{{1,12}})[ \t]+time \(%\)[ \t]*=[ \t]*({VALUE})[ \t]+\(({VALUE})\)"
)
_SECTION_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,30}")
_ERROR_RE = re.compile(r"ERROR(?: on proc \d{1,9})?:")
_THERMO_ROW_RE = re.compile(rf"[+-]?\d{{1,18}}(?:[ \t]+{VALUE}){{1,200}}")
_MULTI_ROW_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_\[\]]{0,40}[ \t]*=")
_NONFINITE_TOKEN_RE = re.compile(r"(?<![A-Za-z0-9_.])[+-]?(?i:nan|inf)(?![A-Za-z0-9_])")

# Performance-line units -> field, and the atom-step prefixes LAMMPS chooses by magnitude.
_PERF_FIELDS = {
    "tau/day": "tau_per_day",
    "ns/day": "ns_per_day",
    "hours/ns": "hours_per_ns",
    "fs/day": "fs_per_day",
    "hours/fs": "hours_per_fs",
    "timesteps/s": "timesteps_per_s",
}
_ATOM_STEP_POWERS = {"atom-step/s": 0, "katom-step/s": 3, "Matom-step/s": 6, "Gatom-step/s": 9}

# Old (pre-2013) timing labels are abbreviated to five letters.
_SECTION_ALIASES = {"Outpt": "Output", "Kspce": "Kspace", "Modfy": "Modify"}

# Timing table column headers -> keys of a timing_breakdown entry.
_TABLE_COLUMNS = {
    "min time": "min_s",
    "avg time": "avg_s",
    "max time": "max_s",
    "%varavg": "varavg_pct",
    "%CPU": "cpu_pct",
    "%total": "pct_total",
}
_TIMING_KEYS = ("min_s", "avg_s", "max_s", "varavg_pct", "cpu_pct", "pct_total")
_TIMING_UNITS = {"min_s": "s", "avg_s": "s", "max_s": "s", "varavg_pct": "%", "cpu_pct": "%", "pct_total": "%"}
# The unit of each performance figure (scalebench/data/quantities.yaml).
_PERF_UNITS = {"timesteps_per_s": "timesteps/s", "atom_steps_per_s": "atom-steps/s", "ns_per_day": "ns/day",
               "hours_per_ns": "hours/ns", "tau_per_day": "tau/day", "fs_per_day": "fs/day", "hours_per_fs": "hours/fs"}
_PRINTED_STEP = 0.0005  # half the last of the three decimals LAMMPS prints rates with

TimingEntry = dict[str, Value | None]


def _number(token: str) -> Value | None:
    """A finite float, the token for a non-finite value ("-nan"), None for anything else."""
    value = to_value(token)
    if isinstance(value, float) or NONFINITE_RE.fullmatch(token):
        return value
    return None


def _atoms(token: str) -> int | None:
    value = to_value(token)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e18:
        return int(value)
    return None


@dataclass
class _Run:
    """One run's summary as it is read; frozen into LammpsRun."""

    version: str | None
    loop_time_s: Value | None = None
    procs: int | None = None
    steps: int | None = None
    atoms: int | None = None
    perf: dict[str, Value | None] = field(default_factory=dict)
    cpu_use_pct: Value | None = None
    mpi_tasks: int | None = None
    omp_threads: int | None = None
    table: dict[str, TimingEntry] = field(default_factory=dict)
    table_cut: bool = False
    old_timing: dict[str, TimingEntry] = field(default_factory=dict)

    @property
    def has_loop(self) -> bool:
        return self.loop_time_s is not None


@dataclass(frozen=True)
class LammpsRun:
    """The figures of one run: its Loop time line, performance lines and timing breakdown.

    ``timing_breakdown`` maps each section (Pair, Bond, Kspace, Neigh, Comm, Output, Modify,
    Sync, Other) to min/avg/max seconds, %varavg, %CPU and %total; the pre-2013 format gives
    only the average time and %total.
    """

    lammps_version: str | None
    loop_time_s: Value | None
    procs: int | None
    steps: int | None
    atoms: int | None
    timesteps_per_s: Value | None
    atom_steps_per_s: Value | None
    ns_per_day: Value | None
    hours_per_ns: Value | None
    tau_per_day: Value | None
    fs_per_day: Value | None
    hours_per_fs: Value | None
    mpi_tasks: int | None
    omp_threads: int | None
    cpu_use_pct: Value | None
    timing_breakdown: dict[str, TimingEntry]
    timing_complete: bool
    problems: tuple[str, ...] = ()  # figures refused, figures that contradict each other

    @classmethod
    def empty(cls, version: str | None) -> "LammpsRun":
        """No run figures at all (the log stops before any run summary)."""
        return cls(version, *([None] * 14), timing_breakdown={}, timing_complete=False)

    @property
    def complete(self) -> bool:
        return self.loop_time_s is not None and self.timing_complete

    def _timing(self, section: str, key: str) -> Value | None:
        entry = self.timing_breakdown.get(section)
        return entry.get(key) if entry is not None else None

    @property
    def comm_pct_total(self) -> Value | None:
        return self._timing("Comm", "pct_total")

    @property
    def comm_time_s(self) -> Value | None:
        return self._timing("Comm", "avg_s")

    @property
    def pair_pct_total(self) -> Value | None:
        return self._timing("Pair", "pct_total")

    def to_dict(self) -> dict[str, Any]:
        return {
            "lammps_version": self.lammps_version,
            "loop_time_s": self.loop_time_s,
            "procs": self.procs,
            "steps": self.steps,
            "atoms": self.atoms,
            "timesteps_per_s": self.timesteps_per_s,
            "atom_steps_per_s": self.atom_steps_per_s,
            "ns_per_day": self.ns_per_day,
            "hours_per_ns": self.hours_per_ns,
            "tau_per_day": self.tau_per_day,
            "fs_per_day": self.fs_per_day,
            "hours_per_fs": self.hours_per_fs,
            "mpi_tasks": self.mpi_tasks,
            "omp_threads": self.omp_threads,
            "cpu_use_pct": self.cpu_use_pct,
            "comm_pct_total": self.comm_pct_total,
            "comm_time_s": self.comm_time_s,
            "pair_pct_total": self.pair_pct_total,
            "timing_breakdown": {name: dict(entry) for name, entry in self.timing_breakdown.items()},
        }


@dataclass(frozen=True)
class LammpsLog:
    """A whole log: the reported run plus what the log says about how it ended.

    ``complete`` is true only when a run finished (Loop time and a whole timing table), no
    later run was cut short, and LAMMPS printed no ERROR line. ``nan_in_thermo`` is true when
    any thermo output in any run holds a NaN or inf. ``n_runs`` counts runs with a Loop time.
    """

    run: LammpsRun | None
    lammps_version: str | None
    total_wall_time_s: int | None
    n_runs: int
    unfinished_run: bool
    nan_in_thermo: bool
    error: str | None
    cut_line: str | None = None  # complete_text's warning

    @property
    def problems(self) -> tuple[str, ...]:
        """The reported run's figures refused or contradicting each other; () for a sound run."""
        return self.run.problems if self.run is not None else ()

    @property
    def complete(self) -> bool:
        return (
            self.run is not None
            and self.run.complete
            and not self.unfinished_run
            and self.error is None
        )

    def to_dict(self) -> dict[str, Any]:
        run = self.run if self.run is not None else LammpsRun.empty(self.lammps_version)
        out = run.to_dict()
        out.update(
            {
                "total_wall_time_s": self.total_wall_time_s,
                "n_runs": self.n_runs,
                "complete": self.complete,
                "nan_in_thermo": self.nan_in_thermo,
                "error": self.error,
            }
        )
        warnings = ([self.cut_line] if self.cut_line else []) + list(self.problems)
        if warnings:
            out["warnings"] = warnings
        return out


def _count(value: int | None, what: str, least: int, refused: list[str]) -> int | None:
    if value is None or value >= least:
        return value
    refused.append(f"{what} {value} is below {least}: dropped")
    return None


def _contradictions(run: LammpsRun) -> list[str]:
    """Figures of one run that LAMMPS derives from one another, and do not agree (finish.cpp)."""
    found = []
    steps, loop, rate = run.steps, run.loop_time_s, run.timesteps_per_s
    if steps and is_finite(loop) and loop > 0 and is_finite(rate):  # type: ignore[operator]
        if not agrees(rate, steps / loop, _PRINTED_STEP):  # type: ignore[operator]
            found.append(f"{rate:g} timesteps/s contradicts {steps} steps in a Loop time of {loop:g} s "
                         f"({steps / loop:.4g} timesteps/s)")  # type: ignore[operator]
    atoms, atom_rate = run.atoms, run.atom_steps_per_s
    if atoms is not None and is_finite(rate) and is_finite(atom_rate):
        if not agrees(atom_rate, atoms * rate, atoms * _PRINTED_STEP + 0.5):  # type: ignore[operator]
            found.append(f"{atom_rate:g} atom-steps/s contradicts {atoms} atoms at {rate:g} timesteps/s")
    for per_day, hours, unit in ((run.ns_per_day, run.hours_per_ns, "ns"), (run.fs_per_day, run.hours_per_fs, "fs")):
        if is_finite(per_day) and is_finite(hours):
            if not agrees(per_day * hours, 24.0, _PRINTED_STEP * (per_day + hours)):  # type: ignore[operator]
                found.append(f"{per_day:g} {unit}/day contradicts {hours:g} hours/{unit} (their product is 24)")
    if run.procs is not None and run.mpi_tasks is not None and run.procs != run.mpi_tasks:
        found.append(f"the Loop time line says {run.procs} procs, the CPU line {run.mpi_tasks} MPI tasks")
    return found


def _freeze(run: _Run) -> LammpsRun:
    """The run's figures, each that cannot be null and named, with the contradictions among them."""
    refused: list[str] = []
    perf = {key: refused_or(run.perf[key], unit, "Performance", refused) if key in run.perf else None
            for key, unit in _PERF_UNITS.items()}
    table = run.table or run.old_timing
    for section, entry in table.items():
        for key, value in entry.items():
            if value is not None:
                entry[key] = refused_or(value, _TIMING_UNITS[key], f"{section} {key}", refused)
    frozen = LammpsRun(
        lammps_version=run.version,
        loop_time_s=refused_or(run.loop_time_s, "s", "Loop time", refused) if run.loop_time_s is not None else None,
        procs=_count(run.procs, "procs", 1, refused),
        steps=run.steps,
        atoms=_count(run.atoms, "atoms", 0, refused),
        timesteps_per_s=perf["timesteps_per_s"],
        atom_steps_per_s=perf["atom_steps_per_s"],
        ns_per_day=perf["ns_per_day"],
        hours_per_ns=perf["hours_per_ns"],
        tau_per_day=perf["tau_per_day"],
        fs_per_day=perf["fs_per_day"],
        hours_per_fs=perf["hours_per_fs"],
        mpi_tasks=_count(run.mpi_tasks, "MPI tasks", 1, refused),
        omp_threads=_count(run.omp_threads, "OpenMP threads", 1, refused),
        cpu_use_pct=refused_or(run.cpu_use_pct, "%", "CPU use", refused) if run.cpu_use_pct is not None else None,
        timing_breakdown=table,
        timing_complete=not (run.table and run.table_cut),
    )
    return replace(frozen, problems=tuple(refused + _contradictions(frozen)))


def _performance(rest: str) -> dict[str, Value | None]:
    """The comma-separated ``value unit`` items after ``Performance:``; unknown units are skipped."""
    found: dict[str, Value | None] = {}
    for item in rest.split(","):
        match = _PERF_ITEM_RE.fullmatch(item.strip())
        if not match:
            continue
        token, unit = match.groups()
        if unit in _PERF_FIELDS:
            found[_PERF_FIELDS[unit]] = to_value(token)
        elif unit in _ATOM_STEP_POWERS:
            found["atom_steps_per_s"] = shift_decimal(token, _ATOM_STEP_POWERS[unit])
    return found


def _is_run_start(line: str) -> bool:
    """Lines LAMMPS prints when a run or minimization starts, before any thermo output."""
    if line.startswith(("Per MPI rank memory allocation", "Memory usage per processor")):
        return True
    if line.startswith("Setting up ") and " run" in line:
        return True
    if line.startswith("----") and " Step " in line:  # thermo_style multi
        return True
    if line.startswith("Step") and (len(line) == 4 or line[4] in " \t"):  # thermo header
        return not any(isinstance(to_value(tok), float) for tok in line.split()[1:50])
    return False


def _is_thermo_data(line: str) -> bool:
    return bool(
        _THERMO_ROW_RE.fullmatch(line) or _MULTI_ROW_RE.match(line) or line.startswith("- [")
    )


class _Reader:
    """Line-by-line state: runs read so far and where in a run summary we are."""

    def __init__(self) -> None:
        self.runs: list[_Run] = []
        self.current: _Run | None = None  # run whose summary lines are being read
        self.run_open = False  # a run started and has not printed its Loop time yet
        self.table_state: str | None = None  # None, "header", "rows"
        self.columns: list[str] = []
        self.version: str | None = None
        self.wall: int | None = None
        self.nan = False
        self.error: str | None = None
        self.recognised = False

    def summary_run(self) -> _Run:
        """The run summary lines belong to; a partial one if its Loop time line was lost."""
        if self.current is None:
            self.current = _Run(self.version)
            self.runs.append(self.current)
            self.run_open = False
        return self.current

    def feed(self, line: str) -> None:
        if self.table_state is not None and self._table_line(line):
            return
        if line.startswith("LAMMPS ("):
            match = _BANNER_RE.fullmatch(line)
            if match:
                self.version = match.group(1).strip()
                self.recognised = True
            return
        if line.startswith("Loop time of "):
            self._loop(line)
            return
        if line.startswith("Performance:"):
            self.summary_run().perf.update(_performance(line[len("Performance:"):]))
            self.recognised = True
            return
        if "% CPU use with " in line:
            self._cpu(line)
            return
        if line.startswith("MPI task timing breakdown"):
            run = self.summary_run()
            run.table, run.table_cut = {}, True
            self.table_state = "header"
            self.recognised = True
            return
        if " time (%) = " in line:
            self._old_timing(line)
            return
        if line.startswith("Total wall time:"):
            match = _WALL_RE.match(line)
            if match:
                hours, minutes, seconds = (int(g) for g in match.groups())
                self.wall = hours * 3600 + minutes * 60 + seconds
                self.recognised = True
            return
        if line.startswith("ERROR"):
            if self.error is None and _ERROR_RE.match(line):
                self.error = line[:500]
                self.recognised = True
            return
        if _is_run_start(line):
            self.run_open = True
            self.current = None
            self.recognised = True
            return
        if self.run_open and not self.nan and _NONFINITE_TOKEN_RE.search(line):
            self.nan = _is_thermo_data(line)

    def _loop(self, line: str) -> None:
        match = _LOOP_RE.match(line)
        if not match:
            return
        loop, procs, steps, atoms = match.groups()
        self.current = _Run(self.version, to_value(loop), int(procs), int(steps), _atoms(atoms))
        self.runs.append(self.current)
        self.run_open = False
        self.recognised = True

    def _cpu(self, line: str) -> None:
        match = _CPU_RE.match(line)
        if not match:
            return
        pct, tasks, threads = match.groups()
        run = self.summary_run()
        run.cpu_use_pct = to_value(pct)
        run.mpi_tasks = int(tasks)
        run.omp_threads = None if threads == "no" else int(threads)
        self.recognised = True

    def _old_timing(self, line: str) -> None:
        match = _OLD_TIMING_RE.match(line)
        if not match:
            return
        name, seconds, pct = match.groups()
        name = _SECTION_ALIASES.get(name, name)
        entry: TimingEntry = {key: None for key in _TIMING_KEYS}
        entry["avg_s"], entry["pct_total"] = _number(seconds), _number(pct)
        self.summary_run().old_timing[name] = entry
        self.recognised = True

    def _table_line(self, line: str) -> bool:
        """Consume a line of the MPI task timing table; False (and table over) otherwise."""
        run = self.current
        if run is None:
            self.table_state = None
            return False
        if self.table_state == "header":
            if line.startswith("Section") and "|" in line:
                self.columns = [cell.strip() for cell in line.split("|")]
                self.table_state = "rows"
                return True
            self.table_state = None
            return False
        if line.startswith("----"):
            return True
        cells = [cell.strip() for cell in line.split("|")] if "|" in line else []
        if len(cells) != len(self.columns) or not _SECTION_NAME_RE.fullmatch(cells[0]):
            self.table_state = None
            return False
        entry: TimingEntry = {key: None for key in _TIMING_KEYS}
        for column, cell in zip(self.columns[1:], cells[1:]):
            key = _TABLE_COLUMNS.get(column)
            if key is not None and cell:
                entry[key] = _number(cell)
        run.table[cells[0]] = entry
        if cells[0] == "Other":  # always the last row
            run.table_cut = False
            self.table_state = None
        return True


def _reported(runs: list[_Run]) -> _Run | None:
    """The last run with a Loop time and steps > 0; else the last with a Loop time; else the last."""
    for wanted in (lambda r: r.has_loop and (r.steps or 0) > 0, lambda r: r.has_loop):
        for run in reversed(runs):
            if wanted(run):
                return run
    return runs[-1] if runs else None


def parse_lammps(text: str) -> LammpsLog:
    """Parse a LAMMPS log; ParseError only when nothing in it is recognisably LAMMPS output. A last
    line without its line end is dropped, with a warning."""
    text, cut = complete_text(text)
    reader = _Reader()
    for line in lines_of(text):
        reader.feed(line)
    if not reader.recognised:
        raise ParseError(with_note("no LAMMPS banner, run, 'Loop time' or 'Total wall time' line found", cut))
    chosen = _reported(reader.runs)
    later = reader.runs[reader.runs.index(chosen) + 1:] if chosen is not None else []
    return LammpsLog(
        run=_freeze(chosen) if chosen is not None else None,
        lammps_version=reader.version,
        total_wall_time_s=reader.wall,
        n_runs=sum(1 for run in reader.runs if run.has_loop),
        unfinished_run=reader.run_open or any(not run.has_loop for run in later),
        nan_in_thermo=reader.nan,
        error=reader.error,
        cut_line=cut,
    )
