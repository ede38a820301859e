"""NetPIPE: one-way latency and bandwidth over message sizes between two ranks (ping-pong), and the
message rate of a one-direction stream, within a node or between two. The checks are NetPIPECheck and
NetPIPEStreamCheck in reframe_tests/microbench.py; they report in the shared microbenchmark section
(scalebench/reporting/sections/microbenchmarks.py), so this room has none of its own."""
from scalebench.room import Room
from scalebench.rooms.netpipe import rules
from scalebench.rooms.netpipe.output import parse_netpipe

ROOM = Room("netpipe", parse_netpipe, rules.CHECKS)
