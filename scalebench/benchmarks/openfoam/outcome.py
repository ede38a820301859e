"""What an OpenFOAM job's files say (the check's sanity and figures): the case it prepared
(cases.CASE_FILE), its utilities' logs, the solver's log and the solver's wall time."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from scalebench import loaders
from scalebench.errors import InputError
from scalebench.benchmarks.openfoam.cases import CASE_FILE, SOLVER_END, SOLVER_START, OpenfoamCase, openfoam_logs
from scalebench.benchmarks.openfoam.output import OpenfoamLog, parse_openfoam

_MESHED_RE = re.compile(r"^(?:Refined|Snapped|Layer) mesh\s*:\s*cells:(\d+)", re.MULTILINE)


def snapped_cells(snappy_log: str) -> int | None:
    """The cell count of snappyHexMesh's last mesh (after refinement, snapping, layers); None if absent."""
    found = _MESHED_RE.findall(snappy_log)
    return int(found[-1]) if found else None


@dataclass(frozen=True)
class OpenfoamOutcome:
    log: OpenfoamLog | None
    setup: Mapping[str, Any]  # CASE_FILE
    problems: tuple[str, ...]
    solver_cells: int = 0
    wall_time_s: float | None = None  # the solver's, timed by the job (ClockTime has 1 s resolution)

    @property
    def wall_time_per_step_s(self) -> float | None:
        steps = self.log.n_time_steps if self.log else 0
        return self.wall_time_s / steps if self.wall_time_s is not None and steps else None

    @property
    def figures(self) -> dict[str, tuple[float | None, str]]:
        """{figure: (value, unit)}, named as scalebench/data/benchmarks.yaml's OpenFOAMCheck, in perflog order."""
        log = self.log
        assert log is not None, "figures of an outcome without a solver log (its problems fail the sanity first)"
        return {"time_per_step": (log.seconds_per_step_mean, "s/step"),  # mean ExecutionTime per step after the first
                "execution_time": (log.final_execution_time_s, "s"),  # CPU seconds of the master rank
                "clock_time": (log.final_clock_time_s, "s"),  # whole seconds
                "wall_time": (self.wall_time_s, "s"),  # the launcher and solver timed by `date`, start-up included
                "wall_time_per_step": (self.wall_time_per_step_s, "s/step")}


def openfoam_outcome(case: OpenfoamCase, read: Any, *, stdout: str, tasks: int, steps: int) -> OpenfoamOutcome:
    """What an OpenFOAM job's files say: the case it prepared, its utilities' logs (each must end
    with End, blockMesh with the cells asked for) and the solver's log. read(name): a stage file's text."""
    try:
        setup = loaders.parse_json(read(CASE_FILE).encode(), CASE_FILE)
    except InputError as err:
        return OpenfoamOutcome(None, {}, (f"case set-up failed: no {CASE_FILE} ({err})",))
    if not isinstance(setup, dict):
        return OpenfoamOutcome(None, {}, (f"case set-up failed: {CASE_FILE} holds no JSON object",))
    problems = []
    for name in openfoam_logs(case, tasks):
        try:
            words = read(name).split()
        except InputError:
            problems.append(f"{name} missing")
            continue
        if "End" not in words[-5:]:
            problems.append(f"{name} does not end with End")
        if name == "log.blockMesh" and f"nCells: {setup.get('cells')}" not in " ".join(words):
            problems.append(f"blockMesh did not make {setup.get('cells')} cells")
    if problems:
        return OpenfoamOutcome(None, setup, ("case set-up failed: " + "; ".join(problems),))
    log = parse_openfoam(read(stdout))
    checks = [
        *((True, f"solver log: {problem}") for problem in log.problems),  # times that cannot be or fall
        (log.fatal_error, "the solver stopped with a FOAM FATAL error"),
        (not log.finished, "the solver did not reach End"),
        (log.nprocs != tasks, f"the solver reports nProcs {log.nprocs}, {tasks} requested (wrong MPI launcher?)"),
        (log.n_time_steps != steps, f"the solver ran {log.n_time_steps} steps, {steps} requested"),
        (log.nonfinite_residuals, "non-finite residuals"),
    ]
    snapped = snapped_cells(read("log.snappyHexMesh")) if "log.snappyHexMesh" in openfoam_logs(case, tasks) else None
    try:
        wall = float(read(SOLVER_END)) - float(read(SOLVER_START))
    except (InputError, ValueError):
        wall = None
    return OpenfoamOutcome(log, setup, tuple(message for failed, message in checks if failed),
                           snapped or int(setup.get("cells", 0)), wall)
