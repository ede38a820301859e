"""HPL's room: its checks' rules (HPLCheck, HPLTuneCheck, NodeHealthCheck, HPLScalingCheck) and the
report's HPL section. Its outputs (xhpl's, and hpcc's, whose HPL and network sections the checks read),
decks, case plan, outcome and model are scalebench.hpl, which the rest of the harness reads too. The
checks are reframe_tests/hpl.py and reframe_tests/tuning/hpl_tune.py."""
from scalebench.room import declare

ROOM = declare(__name__, "scalebench.hpl.output.parse_hpl", section="hpl_section", leads=True,
               other_kinds={"hpcc": "scalebench.hpl.hpcc_output.parse_hpcc"})
