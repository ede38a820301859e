"""Interconnect microbenchmarks: what NetPIPE, OSU (benchmarks, scalebench/benchmarks/) and hpcc's network check
share, and the methods of interconnect studies (n1/2, message rate, latency surprise)."""
