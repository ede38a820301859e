"""OSU Micro-Benchmarks: latency, bandwidth, bidirectional bandwidth and, over 1, 2 and 4 pairs, message
rate between two ranks, within a node or between two; collectives on whole nodes. The checks are the
OSU*Check classes of reframe_tests/microbench.py; they report in the shared microbenchmark section
(scalebench/reporting/sections/microbenchmarks.py), so this room has none of its own."""
from scalebench.room import Room
from scalebench.rooms.osu import rules
from scalebench.rooms.osu.output import parse_osu

ROOM = Room("osu", parse_osu, rules.CHECKS, settings=rules.OsuSettings)
