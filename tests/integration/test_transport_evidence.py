"""Transport evidence through ReFrame with the real MPIs of this machine: a UCX stack over UCX's tcp,
and stacks steered off what they declare (OMPI_MCA_btl, UCX_TLS, a pml UCX would refuse here), which
must fail sanity naming both. The embedded default's own three stacks are proven by the
interconnect test (test_reframe_microbench.py) and every make run."""
import json
import os

import pytest
import yaml

from conftest import LOCAL_SITE, require_cores, require_tools, run_reframe
from scalebench import report
from scalebench.reporting import store

pytestmark = pytest.mark.integration

OMPI = {"OMPI_ALLOW_RUN_AS_ROOT": 1, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": 1}
# Open MPI's pml ucx refuses a machine without InfiniBand unless told any transport will do.
UCX_PML = {"OMPI_MCA_pml": "ucx", "OMPI_MCA_pml_ucx_tls": "any", "OMPI_MCA_pml_ucx_devices": "any"}
STACKS = [
    {"name": "openmpi-ucx-tcp", "transport": "ucx:tcp", "intra_node_transport": "ucx:tcp",
     "env_vars": {**OMPI, **UCX_PML, "UCX_TLS": "tcp"}, "netpipe_binary": "NPopenmpi", "features": ["openmpi", "netpipe"]},
    # Declared shared memory, steered to TCP.
    {"name": "openmpi-steered", "transport": "shm", "env_vars": {**OMPI, "OMPI_MCA_btl": "self,tcp"},
     "netpipe_binary": "NPopenmpi", "features": ["openmpi", "netpipe"]},
    # Declared UCX's shared memory, steered to UCX's tcp.
    {"name": "mpich-steered", "transport": "ucx:shm", "env_vars": {"UCX_TLS": "tcp"},
     "netpipe_binary": "NPmpich2", "mpirun": "mpirun.mpich", "features": ["mpich", "netpipe"]},
    # Declared UCX, but the pml falls back to ob1 (pml ucx disqualifies itself without InfiniBand).
    {"name": "openmpi-ucx-fallback", "transport": "ucx:tcp", "env_vars": {**OMPI, "UCX_TLS": "tcp"},
     "netpipe_binary": "NPopenmpi", "features": ["openmpi", "netpipe"]},
]


@pytest.fixture(scope="module")
def steered_run(tmp_path_factory):
    require_tools("mpirun", "mpirun.mpich", "NPopenmpi", "NPmpich2")
    require_cores(2)
    root = tmp_path_factory.mktemp("transport")
    site = yaml.safe_load(LOCAL_SITE.read_text())
    site["stacks"] = STACKS
    site["partitions"][0]["environs"] = [s["name"] for s in STACKS]
    (root / "site.yaml").write_text(yaml.safe_dump(site))
    run_dir = root / "run"
    proc = run_reframe(run_dir, "-r", "-n", "^NetPIPECheck%placement=intra_node$", "-S", "max_bytes=1024",
                       checks="microbench.py", env={**os.environ, "SCALEBENCH_SITE": str(root / "site.yaml")})
    report = json.loads((run_dir / "report.json").read_text())
    cases = {tc["stack"]: tc for run in report["runs"] for tc in run["testcases"]}
    return run_dir, proc, cases


def test_a_ucx_stack_over_ucx_tcp_is_proven_and_recorded(steered_run):
    _, proc, cases = steered_run
    case = cases["openmpi-ucx-tcp"]
    assert case["result"] == "pass", proc.stdout[-3000:]
    assert case["transport"] == "ucx:tcp" and case["transport_evidence"].startswith("ucx:tcp (2 processes")


@pytest.mark.parametrize("stack, message", [
    ("openmpi-steered", "stack openmpi-steered declared shm (the MPI's own) but Open MPI (ob1 BTL) selected tcp"),
    ("mpich-steered", "stack mpich-steered declared ucx:shm but UCX selected tcp"),
    ("openmpi-ucx-fallback", "stack openmpi-ucx-fallback declared ucx:tcp but Open MPI (ob1 BTL) selected vader"),
])
def test_a_stack_steered_off_its_declaration_fails_sanity_naming_both(steered_run, stack, message):
    _, proc, cases = steered_run
    case = cases[stack]
    assert case["result"] == "fail" and case["fail_phase"] == "sanity", proc.stdout[-3000:]
    assert message in case["fail_reason"]
    assert case["transport_evidence"]  # what it did use is kept with the failure


def test_the_report_shows_every_stacks_transport(steered_run, tmp_path):
    run_dir, _, _ = steered_run
    md = report.write_report([run_dir], tmp_path / "out", formats=("md",)).files["md"].read_text()
    section = md.split("## Transports", 1)[1].split("\n## ", 1)[0]
    for stack in (s["name"] for s in STACKS):
        assert f"| {stack} |" in section
    assert "| openmpi-ucx-tcp | ucx:tcp | ucx:tcp | as declared |" in section
    assert "1 case(s) on another transport: stack mpich-steered declared ucx:shm" in section
    sessions, _ = store.ingest([run_dir])
    assert {c.provenance.get("transport_evidence") for c in sessions[0].cases} - {None, ""}
