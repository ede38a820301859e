"""hpcc, the HPC Challenge suite: on one whole node, the node's health (its HPL, DGEMM and STREAM:
NodeHealthCheck, reframe_tests/hpl.py, which reports in the screening section), and on whole nodes its
ping-pongs and rings (HPCCNetworkCheck, reframe_tests/microbench.py, in the microbenchmark section). Its
output is parsed by the HPL library (scalebench.hpl.hpcc_output), whose HPL section is HPL's."""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.hpcc import rules
from scalebench.hpl.hpcc_output import parse_hpcc

BENCHMARK = Benchmark("hpcc", parse_hpcc, rules.CHECKS)
