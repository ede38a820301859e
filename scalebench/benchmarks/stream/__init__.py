"""STREAM: a node's memory bandwidth (copy, scale, add, triad), against its theoretical bandwidth
where the site file gives it. Its check is STREAMCheck (reframe_tests/stream.py);
build/bin/stream is hpcc's STREAM (scripts/build-stream.sh)."""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.stream import rules
from scalebench.benchmarks.stream.output import parse_stream
from scalebench.benchmarks.stream.section import stream_section

BENCHMARK = Benchmark("stream", parse_stream, rules.CHECKS, section=stream_section, settings=rules.StreamSettings)
