"""What a GROMACS job's files say against what was asked (the check's sanity), and the figures it reports."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from scalebench.errors import InputError, ParseError
from scalebench.benchmarks.gromacs import inputs
from scalebench.benchmarks.gromacs.output import GromacsLog, fatal_error, parse_gromacs


@dataclass(frozen=True)
class GromacsOutcome:
    log: GromacsLog | None
    problems: tuple[str, ...]  # () for a finished run of the asked size on the asked ranks and threads
    atoms: int = 0  # the system gmx solvate built, by the topology

    @property
    def figures(self) -> dict[str, tuple[Any, str]]:
        """{figure: (value, unit)}, named as the benchmark.yaml GROMACSCheck of its folder: ns/day (the figure of
        merit), hour/ns, mdrun's wall time of the timed steps, and the communication share where mdrun
        printed its cycle accounting."""
        log = self.log
        assert log is not None, "figures of an outcome without a finished run (its problems fail the sanity first)"
        found: dict[str, tuple[Any, str]] = {"ns_per_day": (log.ns_per_day, "ns/day"),
                                             "hours_per_ns": (log.hours_per_ns, "hours/ns"),
                                             "wall_time": (log.wall_time_s, "s")}
        if log.comm_pct is not None:
            found["comm_share"] = (log.comm_pct, "%")
        return found


def _preparation(read: Callable[[str], str]) -> str | None:
    """Why the job's input was not built: a tool's log missing, or its fatal error."""
    for tool, name in (("gmx solvate", inputs.SOLVATE_LOG), ("gmx grompp", inputs.GROMPP_LOG)):
        try:
            text = read(name)
        except InputError:
            return f"input preparation did not run: no {name}"
        error = fatal_error(text)
        if error:
            return f"input preparation failed: {tool}: {error}"
    return None


def _streams_error(read: Callable[[str], str], streams: Sequence[str]) -> str | None:
    """The first GROMACS error in the job's standard output or error (mdrun prints there what it cannot log)."""
    for name in streams:
        try:
            error = fatal_error(read(name))
        except InputError:
            continue
        if error:
            return error
    return None


def gromacs_outcome(read: Callable[[str], str], molecule: Any, *, tasks: int, threads: int, steps: int,
                    streams: Sequence[str] = ()) -> GromacsOutcome:
    """What a GROMACS job's files say: its tools' logs, the topology gmx solvate completed, md.log, and the
    job's output `streams` for an error md.log lacks (read(name): a stage file's text; molecule: the
    workload's {name, atoms})."""
    problem = _preparation(read)
    if problem:
        return GromacsOutcome(None, (problem,))
    count = inputs.molecules(read(inputs.TOPOLOGY), molecule["name"])
    if not count:
        return GromacsOutcome(None, (f"input preparation failed: gmx solvate wrote no {molecule['name']} line "
                                     f"into {inputs.TOPOLOGY}",))
    atoms = count * molecule["atoms"]
    try:
        log: GromacsLog | None = parse_gromacs(read(inputs.LOG))
    except (InputError, ParseError):  # mdrun stopped before it wrote its log
        log = None
    if log is None or not log.complete:
        why = (log and log.error) or _streams_error(read, streams) or (
            f"no {inputs.LOG}" if log is None else "no Performance line" if log.finished
            else "no 'Finished mdrun' line")
        return GromacsOutcome(None, (f"GROMACS run did not finish: {why}",), atoms)
    thread_mpi = "thread_mpi" in (log.mpi_library or "").lower()
    build = (f"the GROMACS binary is a thread-MPI build (MPI library: {log.mpi_library}), whose ranks are threads "
             "of one process: name an MPI build (gmx_mpi) in the stack's gmx_binary")
    checks = [
        *((True, f"md.log: {problem}") for problem in log.problems),  # values that cannot be, or disagree
        (log.nonfinite_energies, "NaN or inf in the energies"),
        (thread_mpi and tasks > 1, f"{build}; launched as {tasks} processes it runs {tasks} separate simulations"),
        (log.ranks != tasks, f"GROMACS ran on {log.ranks} MPI rank(s), {tasks} requested "
                             f"({'a thread-MPI build' if thread_mpi else 'wrong MPI launcher?'})"),
        (log.omp_threads != threads, f"GROMACS ran {log.omp_threads} OpenMP thread(s) per rank, {threads} requested"),
        (log.atoms != atoms, f"GROMACS ran {log.atoms} atoms, the topology has {atoms}"),
        (log.last_step != steps, f"GROMACS ran to step {log.last_step}, {steps} steps requested"),
        (log.ns_per_day is None, "md.log has no ns/day (a run without time steps?)"),
        (log.wall_time_s is None, "md.log has no wall time (a Time: line under its Core t (s) Wall t (s) header)"),
    ]
    return GromacsOutcome(log, tuple(message for failed, message in checks if failed), atoms)
