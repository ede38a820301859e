"""GROMACS: simulated ns/day of a box of SPC/E water at each scale, strong and weak scaling, with the wall
time and the communication share of mdrun's cycle accounting. The application checks' speedup and
parallel efficiency follow from ns/day in the report's applications section.

The check, reframe_tests/gromacs.py (GROMACSCheck), builds its input in the job with GROMACS's own
tools and data: `gmx solvate` fills a box of whole copies of GROMACS's equilibrated spc216.gro water box
(inputs.py: whole copies tile without clashes), the topology and run parameters are this folder's
inputs/ with the size filled in (workloads.yaml), `gmx grompp` makes the run input, and `gmx mdrun` runs
under the partition's launcher, its counters reset half-way so that the figures time the second half.

It runs an MPI build (`gmx_mpi`: Debian's gromacs package, Spack's `gromacs +mpi`; the stack's
gmx_binary names another), one MPI rank per task of the job and -ntomp OpenMP threads per rank, as every
application check's job is laid out. A thread-MPI build (`gmx`, Spack's `gromacs ~mpi`) starts its ranks
as threads of one process: launched once per task it would run as many separate simulations, so its
log's rank count fails the sanity, naming the build.

Here: output.py reads md.log, outcome.py holds a run against what was asked and gives its figures,
inputs.py sizes the input, rules.py plans the check, benchmark.yaml registers its figures (names,
units) and what it records, site.yaml its stack key. docs/gromacs.md says how to run it.
"""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.gromacs import rules
from scalebench.benchmarks.gromacs.output import parse_gromacs

BENCHMARK = Benchmark("gromacs", parse_gromacs, rules.CHECKS)
