"""Interconnect microbenchmarks: what NetPIPE, OSU (rooms, scalebench/rooms/) and hpcc's network check
share, and the methods of interconnect studies (n1/2, message rate, latency surprise)."""
