"""NetPIPE: one-way latency and bandwidth over message sizes between two ranks (ping-pong), and the
message rate of a one-direction stream, within a node or between two. The checks are NetPIPECheck and
NetPIPEStreamCheck in reframe_tests/microbench.py; they report in the shared microbenchmark section
(scalebench/reporting/sections/microbenchmarks.py), so this benchmark has none of its own."""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.netpipe import rules
from scalebench.benchmarks.netpipe.output import parse_netpipe

BENCHMARK = Benchmark("netpipe", parse_netpipe, rules.CHECKS)
