"""STREAM: a node's memory bandwidth (copy, scale, add, triad), against its theoretical bandwidth
where the site file gives it. Its check, STREAMCheck, runs as every room's check does (rules.PROGRAM,
reframe_tests/rooms.py); build/bin/stream is hpcc's STREAM (scripts/build-stream.sh)."""
from scalebench.room import declare

ROOM = declare(__name__, "parse_stream", section="stream_section", settings="StreamSettings", program="PROGRAM")
