"""Transport evidence from real MPI stderr (tests/data/transport/, Debian's Open MPI 4.1 and MPICH 4.0
with UCX 1.13 and libfabric 1.17, captured with transports.yaml's evidence_env) and the verdicts."""
from pathlib import Path

import pytest

from scalebench.errors import InputError
from scalebench.site import transport_evidence
from scalebench.site import fabric

DATA = Path(__file__).resolve().parents[2] / "data" / "transport"


def found(name):
    return transport_evidence.evidence((DATA / f"{name}.err").read_text())


@pytest.mark.parametrize("name, atoms", [
    ("openmpi-ob1-vader", {"btl:vader"}),
    ("openmpi-ob1-tcp", {"btl:tcp"}),
    ("mpich-ucx-shm", {"ucx:sysv", "ucx:cma"}),
    ("openmpi-ucx-tcp", {"ucx:tcp"}),
    ("openmpi-ucx-tcp-short-pids", {"ucx:tcp"}),  # in a PID namespace UCX pads pids: [vm:388  :0]
    ("openmpi-ofi-tcp", {"ofi:tcp"}),  # "tcp;ofi_rxm": the core provider
])
def test_each_mpi_says_what_it_selected_between_its_two_processes(name, atoms):
    evidence = found(name)
    assert set(evidence.hosts) == atoms  # self (loopback) is no transport between ranks
    assert evidence.ranks == 2 and all(hosts == {"vm"} for hosts in evidence.hosts.values())


@pytest.mark.parametrize("name, declared, intra", [
    ("openmpi-ob1-vader", "shm", None),
    ("openmpi-ob1-tcp", "tcp", "tcp"),
    ("mpich-ucx-shm", "ucx:shm", None),
    ("mpich-ucx-shm", "ucx:rc_mlx5", None),  # one node: UCX's shared memory whatever the fabric
    ("openmpi-ucx-tcp", "ucx:tcp", "ucx:tcp"),
    ("openmpi-ofi-tcp", "ofi:tcp", None),
])
def test_a_stack_on_what_it_declares_passes(name, declared, intra):
    assert transport_evidence.verdict("s", declared, intra, found(name), across_nodes=False) is None


@pytest.mark.parametrize("name, declared, intra, message", [
    ("openmpi-ob1-tcp", "shm", None, "stack s declared shm (the MPI's own) but Open MPI (ob1 BTL) selected tcp (on vm)"),
    ("openmpi-ob1-vader", "tcp", "tcp", "declared tcp (the MPI's own) but Open MPI (ob1 BTL) selected vader"),
    ("mpich-ucx-shm", "ucx:tcp", "ucx:tcp", "declared ucx:tcp but UCX selected cma (on vm); UCX selected sysv"),
    ("openmpi-ucx-tcp", "ucx:shm", None, "declared ucx:shm but UCX selected tcp"),
    ("openmpi-ob1-vader", "ucx:shm", None, "declared ucx:shm but Open MPI (ob1 BTL) selected vader"),
    ("openmpi-ofi-tcp", "ofi:cxi", None, "declared ofi:cxi but libfabric selected tcp"),
])
def test_a_job_steered_off_its_declared_transport_fails_naming_both(name, declared, intra, message):
    assert message in transport_evidence.verdict("s", declared, intra, found(name), across_nodes=False)


def test_across_nodes_the_declared_transport_must_carry_messages():
    text = "".join(f"[1.0] [n{i:02d}:{100 + i}:0] ucp_worker.c:1763 UCX  INFO    ep_cfg[0]: tag({lanes})\n"
                   for i, lanes in enumerate(["sysv/memory cma/memory", "rc_mlx5/mlx5_0:1", "tcp/ib0",
                                              "tcp/eth0", "tcp/eth0", "tcp/eth0"]))
    evidence = transport_evidence.evidence(text)
    wrong = transport_evidence.verdict("openmpi-ucx", "ucx:rc_mlx5", None, evidence, across_nodes=True)
    assert wrong == "stack openmpi-ucx declared ucx:rc_mlx5 but UCX selected tcp (on n02, n03, n04 ...)"
    shm_only = transport_evidence.evidence(text.splitlines()[0])
    assert "no ranks used it between nodes" in transport_evidence.verdict("x", "ucx:rc_mlx5", None, shm_only, True)
    healthy = transport_evidence.evidence("\n".join(text.splitlines()[:2]))
    assert transport_evidence.verdict("x", "ucx:rc_mlx5", None, healthy, across_nodes=True) is None
    assert healthy.summary() == "ucx:cma, ucx:rc_mlx5, ucx:sysv (2 processes on 2 hosts)"


def test_no_evidence_is_a_failure_naming_what_was_looked_for():
    evidence = transport_evidence.evidence("Now starting the main loop\n")
    assert evidence.summary() == "none printed"
    assert "printed no transport evidence" in transport_evidence.verdict("s", "shm", None, evidence, across_nodes=False)


@pytest.mark.parametrize("value", ["ofi:cxi", "ucx:rc_mlx5", "tcp", "shm", "btl:vader"])
def test_declarations_the_table_knows(value):
    assert fabric.check_declaration("x", value) == value


@pytest.mark.parametrize("value", ["infiniband", "ucx", "ucx:", "ofi:cxi;rm -rf /", "UCX:tcp", 3, None, "x" * 300])
def test_other_declarations_are_named_errors(value):
    with pytest.raises(InputError, match="is no transport"):
        fabric.check_declaration("stacks[s].transport", value)


def test_every_class_member_and_shared_memory_is_a_valid_declaration():
    table = fabric.transports()
    for members in table.classes.values():
        for atom in members:
            fabric.check_declaration("classes", atom)
    assert set(table.shared_memory.values()) <= set(table.classes)
