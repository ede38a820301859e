"""The transport evidence a job prints: only where its stack declares a transport, from its first and last
rank alone (the launched command exports the variables there, run here by a real shell), at a cost that
does not grow with the job (scalebench/data/transports.yaml's measured volumes)."""
import subprocess

from scalebench.cli import plan as plan_cli
from scalebench.site.transport_evidence import evidence_plan
from scalebench.site import launch
from scalebench.site.fabric import transports
from scalebench.site.jobs import job_plan
from scalebench.site.partition import PartitionSpec, StackSpec
from scalebench.check import CasePlan
from scalebench.site_plan import PlannedCase

EVIDENCE = transports().evidence_env


def test_a_stack_without_a_transport_prints_no_evidence():
    assert evidence_plan("", {}) is None
    part = PartitionSpec("sys", "part", "slurm", "srun", 4, 8, 2**34, "zen3", 2.0, 16)
    job = job_plan(part, StackSpec("cray-mpich", "cray-mpich", ("hpl",), {}), "4_nodes")
    assert job.transport_evidence is None and job.rank_variables is None
    assert job.to_json()["transport_evidence"] is None


def test_the_first_and_last_rank_print_and_the_volume_is_bounded():
    ucx = evidence_plan("ucx:ib", {"OMPI_MCA_pml": "ucx"})
    assert ucx.variables == EVIDENCE and ucx.stack_sets == ()
    assert ucx.ranks(1) == () and ucx.estimated_bytes(1) == 0  # one process sends to no other
    assert ucx.ranks(2) == (0, 1) and ucx.ranks(41_344) == (0, 41_343)
    per_rank = transports().volumes["ucx"].per_rank_bytes
    assert ucx.estimated_bytes(2) == ucx.estimated_bytes(41_344) == 2 * per_rank < 4096
    ob1 = evidence_plan("tcp", {})
    volume = transports().volumes["btl"]
    assert ob1.estimated_bytes(8192) == 2 * (volume.per_rank_bytes + 8191 * volume.per_peer_bytes) < 2 * 2**20


def test_a_variable_the_stack_sets_itself_is_its_own_in_every_rank():
    found = evidence_plan("ucx:ib", {"UCX_LOG_LEVEL": "debug"})
    assert "UCX_LOG_LEVEL" not in found.variables and found.stack_sets == ("UCX_LOG_LEVEL",)
    assert found.estimated_bytes(100) == 100 * transports().volumes["ucx"].per_rank_bytes


def exported(rank_variables, environ):
    """UCX_LOG_LEVEL as a rank with `environ` (its launcher's variables) sees it after the line."""
    proc = subprocess.run(["sh", "-c", f'{rank_variables.shell()}; echo "${{UCX_LOG_LEVEL:-unset}}"'],
                          env={"PATH": "/usr/bin:/bin", **environ}, capture_output=True, text=True, timeout=30)
    return proc.stdout.strip()


def test_the_variables_reach_only_the_ranks_named_by_the_launchers_rank_number():
    only = launch.RankVariables({"UCX_LOG_LEVEL": "info"}, (0, 16383))
    assert exported(only, {"SLURM_PROCID": "16383"}) == "info"
    assert exported(only, {"SLURM_PROCID": "7"}) == "unset"
    assert exported(only, {"PMI_RANK": "0"}) == "info"  # MPICH's Hydra
    assert exported(only, {}) == "info"  # the local launcher's one process
    # Open MPI's mpirun under a Slurm allocation: its ranks inherit the daemon's step's SLURM_PROCID
    assert exported(only, {"OMPI_COMM_WORLD_RANK": "5", "SLURM_PROCID": "0"}) == "unset"


def test_the_launch_runs_the_program_with_its_arguments_after_exporting(tmp_path):
    launched = launch.launch("printenv", ["UCX_LOG_LEVEL"],
                             rank_variables=launch.RankVariables({"UCX_LOG_LEVEL": "info"}, (0, 1)))
    assert launched.prerun and "command -v printenv" in launched.prerun[0]  # looked for in the batch shell
    line = " ".join([launched.executable, *launched.args])
    for rank, printed in (("1", "info\n"), ("2", "")):
        proc = subprocess.run(["bash", "-c", line], env={"PATH": "/usr/bin:/bin", "PMIX_RANK": rank},
                              capture_output=True, text=True, timeout=30)
        assert proc.stdout == printed


def test_plan_json_names_the_job_that_writes_the_most_evidence():
    part = PartitionSpec("sys", "part", "slurm", "srun", 64, 8, 2**34, "zen3", 2.0, 16)
    stacks = [StackSpec("tcp", "tcp", ("hpl",), {"transport": "tcp"}),
              StackSpec("ucx", "ucx", ("hpl",), {"transport": "ucx:ib"}), StackSpec("none", "none", ("hpl",), {})]
    cases = [PlannedCase("HPLCheck", {"scale": scale}, part, stack, CasePlan(job_plan(part, stack, scale)))
             for stack in stacks for scale in ("1_node", "64_nodes")]
    found = plan_cli.to_json(part.system, cases)["transport_evidence"]
    assert (found["stack"], found["tasks"], found["ranks"]) == ("tcp", 512, [0, 511])
    assert found["estimated_bytes"] == evidence_plan("tcp", {}).estimated_bytes(512)
    assert plan_cli.to_json(part.system, cases[-2:])["transport_evidence"] is None
