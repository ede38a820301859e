"""OpenFOAM: seconds per time step and solver time at each scale, strong and weak scaling, of tutorial
cases sized for the job (cases.py; reframe_tests/inputs/openfoam/cases.yaml). The check is
reframe_tests/openfoam.py; it reports in the shared applications section (benchmarks.yaml `section`),
so the benchmark has no section of its own."""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.openfoam import rules
from scalebench.benchmarks.openfoam.output import parse_openfoam

BENCHMARK = Benchmark("openfoam", parse_openfoam, rules.CHECKS, settings=rules.OpenFOAMSettings)
