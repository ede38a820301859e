"""HPL's benchmark: its checks' rules (HPLCheck, HPLTuneCheck, HPLScalingCheck) and the report's HPL section.
Its programs' outputs (xhpl's, hpcc's), decks, case plan, outcome and model are scalebench.hpl, which the
rest of the harness reads too. The checks are reframe_tests/hpl.py and reframe_tests/tuning/hpl_tune.py."""
from scalebench.benchmark import Benchmark
from scalebench.benchmarks.hpl import rules
from scalebench.benchmarks.hpl.section import hpl_section
from scalebench.hpl.case_plan import HplSettings
from scalebench.hpl.output import parse_hpl

BENCHMARK = Benchmark("hpl", parse_hpl, rules.CHECKS, section=hpl_section, leads=True, settings=HplSettings)
