"""The plan of GROMACSCheck: every workload of workloads.yaml at every scale of the system, strong and weak
scaling, each case one job laid out as every application case is (scalebench.check.app_check): its
ranks are MPI ranks, its threads per rank mdrun's OpenMP threads."""
from __future__ import annotations

from scalebench.check import CheckSpec, app_check
from scalebench.benchmarks.gromacs.inputs import load_workloads


CHECKS: tuple[CheckSpec, ...] = (app_check("GROMACSCheck", "workload", load_workloads, "gromacs"),)
