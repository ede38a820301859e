"""STREAM: a node's memory bandwidth (copy, scale, add, triad), against its theoretical bandwidth
where the site file gives it. The check is reframe_tests/stream.py; build/bin/stream is hpcc's STREAM
(scripts/build-stream.sh)."""
from scalebench.room import declare

ROOM = declare(__name__, "parse_stream", section="stream_section")
