"""What a LAMMPS job's `lmp -h` and log say against what was asked (the check's sanity), and the figures
it reports."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scalebench.benchmarks.lammps.inputs import LammpsWorkload
from scalebench.benchmarks.lammps.output import LammpsLog, LammpsRun


def lammps_packages(help_text: str) -> set[str]:
    """The packages `lmp -h` lists under "Installed packages:" (up to the next blank line)."""
    found: set[str] = set()
    lines = iter(help_text.splitlines())
    for line in lines:
        if line.strip() == "Installed packages:":
            break
    else:
        return found
    for line in lines:
        if not line.strip():
            if found:
                break
            continue
        found.update(line.split())
    return found


@dataclass(frozen=True)
class LammpsOutcome:
    run: LammpsRun | None
    problems: tuple[str, ...]  # [] for a finished run of the requested size on the requested processes

    @property
    def atom_steps_per_s(self) -> float:
        """LAMMPS's own k/M/Gatom-step/s, normalised; older releases print none for some inputs:
        then atoms x timesteps/s, which is how LAMMPS computes it."""
        run = self.run
        return run.atom_steps_per_s or run.atoms * run.timesteps_per_s  # type: ignore[union-attr]

    def figures(self, time_unit: str) -> dict[str, tuple[Any, str]]:
        """{figure: (value, unit)} of a finished run, named as scalebench/data/benchmarks.yaml's LAMMPSCheck: the
        simulated time per day in the workload's unit (ns/day, else tau/day), and the Comm share, the
        interconnect's signal."""
        run = self.run
        assert run is not None, "figures of a run that did not finish"
        found: dict[str, tuple[Any, str]] = {"timesteps_per_s": (run.timesteps_per_s, "timesteps/s"),
                                             "atom_steps_per_s": (self.atom_steps_per_s, "atom-steps/s")}
        if time_unit == "ns/day":
            found["ns_per_day"] = (run.ns_per_day, "ns/day")
        else:
            found["tau_per_day"] = (run.tau_per_day, "tau/day")
        found.update(loop_time=(run.loop_time_s, "s"), comm_share=(run.comm_pct_total, "%"))
        if "Kspace" in run.timing_breakdown:
            found["kspace_share"] = (run.timing_breakdown["Kspace"]["pct_total"], "%")
        return found


def lammps_outcome(workload: LammpsWorkload, help_text: str, log: LammpsLog, *, tasks: int, atoms: int,
                   steps: int) -> LammpsOutcome:
    """What a LAMMPS job's `lmp -h` and log say against what was asked."""
    installed = lammps_packages(help_text)
    missing = sorted(set(workload.packages) - installed) if installed else []
    if missing:
        return LammpsOutcome(None, (f"the LAMMPS binary lacks package(s) {', '.join(missing)} needed by workload "
                                    f"{workload.name}",))
    run = log.run
    if run is None or not log.complete:
        return LammpsOutcome(None, (f"LAMMPS run did not finish: {log.error or 'no complete run summary'}",))
    checks = [
        *((True, f"LAMMPS log: {problem}") for problem in log.problems),  # figures that cannot be or disagree
        (log.nan_in_thermo, "NaN or inf in the thermo output"),
        (run.procs != tasks, f"LAMMPS ran on {run.procs} procs, {tasks} requested (wrong MPI launcher?)"),
        (run.mpi_tasks != tasks, f"LAMMPS reports {run.mpi_tasks} MPI tasks, {tasks} requested"),
        (run.atoms != atoms, f"LAMMPS ran {run.atoms} atoms, {atoms} expected"),
        (run.steps != steps, f"LAMMPS ran {run.steps} steps, {steps} requested"),
    ]
    return LammpsOutcome(run, tuple(message for failed, message in checks if failed))
