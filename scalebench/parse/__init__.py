"""What the benchmark output parsers share (_common.py; the parsers are the benchmarks' output.py and HPL's
in scalebench.hpl, read by kind in scalebench.benchmarks), and HPL's solve windows, which energy reads
(hpl_windows.py)."""
