"""HPL's room: its checks' rules (HPLCheck, HPLTuneCheck, HPLScalingCheck) and the report's HPL section.
Its programs' outputs (xhpl's, hpcc's), decks, case plan, outcome and model are scalebench.hpl, which the
rest of the harness reads too. The checks are reframe_tests/hpl.py and reframe_tests/tuning/hpl_tune.py."""
from scalebench.room import declare

ROOM = declare(__name__, "scalebench.hpl.output.parse_hpl", section="hpl_section", leads=True, settings="HplSettings")
