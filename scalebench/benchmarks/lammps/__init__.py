"""LAMMPS: timesteps/s, atom-steps/s and the Comm share at each scale, strong and weak scaling. The
check is reframe_tests/lammps.py, its input templates reframe_tests/inputs/lammps/; it reports in
the shared applications section (scalebench/reporting/sections/applications.py) beside OpenFOAM."""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.lammps import rules
from scalebench.benchmarks.lammps.output import parse_lammps

BENCHMARK = Benchmark("lammps", parse_lammps, rules.CHECKS)
