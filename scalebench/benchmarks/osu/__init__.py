"""OSU Micro-Benchmarks: latency, bandwidth, bidirectional bandwidth and, over 1, 2 and 4 pairs, message
rate between two ranks, within a node or between two; collectives on whole nodes. The checks are the
OSU*Check classes of reframe_tests/microbench.py; they report in the shared microbenchmark section
(scalebench/reporting/sections/microbenchmarks.py), so this benchmark has none of its own."""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.osu import rules
from scalebench.benchmarks.osu.output import parse_osu

BENCHMARK = Benchmark("osu", parse_osu, rules.CHECKS, settings=rules.OsuSettings)
