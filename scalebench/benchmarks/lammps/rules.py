"""The plan of LAMMPSCheck: every workload of reframe_tests/inputs/lammps/workloads.yaml at every
scale of the system, strong and weak scaling, laid out as every application case is
(scalebench.check.app_check)."""
from __future__ import annotations

from scalebench.check import CheckSpec, app_check
from scalebench.benchmarks.lammps.inputs import load_lammps_workloads


CHECKS: tuple[CheckSpec, ...] = (app_check("LAMMPSCheck", "workload", load_lammps_workloads, "lammps"),)
