"""Interconnect microbenchmarks: figures per message size from NetPIPE, OSU and hpcc, and the
methods of interconnect studies (n1/2, message rate, latency surprise)."""
