"""HPL, what the whole harness reads of it: its two programs' outputs (xhpl's, hpcc's), deck rules and
writers, the process grid, the BLAS kernel policy, tuning sweeps and frozen decks, the plan of one HPL
case, what a job's outputs say, and the scalability model. HPL's benchmark (scalebench/benchmarks/hpl: its
checks' rules, its report section) is built on it; the solve windows energy reads are
scalebench.parse.hpl_windows."""
