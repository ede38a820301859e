"""The real interconnect checks on this machine: NetPIPE on three MPI stacks (OpenMPI shared memory,
OpenMPI over TCP, MPICH) and hpcc's ping-pong and rings, then their report section."""
import json
import os
import re
import subprocess

import pytest

from conftest import VENV_BIN, require_cores, require_tools, run_reframe
from scalebench import registry
from scalebench.reporting import store as results

pytestmark = pytest.mark.integration

STACKS = {"openmpi-sm", "openmpi-tcp", "mpich"}


@pytest.fixture(scope="module")
def micro_run(tmp_path_factory):
    """Two runs, as two stacks would be measured on two days: the OpenMPI transports, then MPICH."""
    require_tools("mpirun", "mpirun.mpich", "NPopenmpi", "NPmpich2", "hpcc")
    require_cores(2)  # two ranks within the node, each on a core of its own
    root = tmp_path_factory.mktemp("micro")
    runs, procs, cases = [], [], []
    for name, environs in (("openmpi", "^openmpi"), ("mpich", "^mpich$")):
        run_dir = root / name
        # Up to 64 KiB: the whole curve shape (eager protocol, the n1/2 crossing) in a few seconds per stack.
        procs.append(run_reframe(run_dir, "-r", "-p", environs, "-S", "max_bytes=65536", checks="microbench.py"))
        report = json.loads((run_dir / "report.json").read_text())
        runs.append(run_dir)
        cases += [tc for run in report["runs"] for tc in run["testcases"]]
    return runs, procs, cases


def _figures(case):
    return {key.split(":")[-1]: value[0] for key, value in case["perfvalues"].items()}


def test_netpipe_ran_on_every_local_stack_within_the_node(micro_run):
    _, procs, cases = micro_run
    for proc in procs:
        assert proc.returncode == 0, proc.stdout[-3000:]
    netpipe = {c["stack"]: c for c in cases if c["name"] == "NetPIPECheck %placement=intra_node"}
    assert set(netpipe) == STACKS and all(c["result"] == "pass" for c in netpipe.values())
    bench = registry.lookup("NetPIPECheck")
    for stack, case in netpipe.items():
        figures = _figures(case)
        sizes = sorted(s for _, s in filter(None, (registry.split_sized(bench, f) for f in figures
                                                   if f.startswith("latency_"))))
        assert sizes[0] == 1 and sizes[-1] == 65536, stack
        assert 0 < figures["min_latency"] <= figures["latency_65536"], stack
        assert case["hosts"].split() == [case["job_nodelist"][0]] * 2 if case["job_nodelist"] else True
    # each stack proven on the transport its site file declares, by what its MPI printed in the job
    used = {stack: case["transport_evidence"] for stack, case in netpipe.items()}
    assert used["openmpi-sm"].startswith("btl:vader (2 processes") and netpipe["openmpi-sm"]["transport"] == "shm"
    assert used["openmpi-tcp"].startswith("btl:tcp (2 processes"), used
    assert set(used["mpich"].split(" (")[0].split(", ")) <= {"ucx:posix", "ucx:sysv", "ucx:cma"}, used
    # over TCP the small-message latency is several times that of shared memory
    assert _figures(netpipe["openmpi-tcp"])["min_latency"] > 2 * _figures(netpipe["openmpi-sm"])["min_latency"]


def test_inter_node_cases_are_not_generated_on_one_machine_nor_osu_without_a_stack_with_it(micro_run):
    _, _, cases = micro_run
    assert not [c for c in cases if c["name"].endswith("%placement=inter_node")]  # one node: not a case
    assert not [c for c in cases if c["name"].startswith("OSU")]  # no local stack has the osu feature
    assert not [c for c in cases if c["result"] == "skip"]


def test_osu_checks_fail_naming_the_missing_program(tmp_path):
    """The job looks for the programs (under osu_dir, then PATH) where it runs, as for every binary."""
    site = tmp_path / "site.yaml"
    site.write_text(f"""
system: osuless
partitions:
  - {{name: node, scheduler: local, launcher: mpirun, max_nodes: 1, cores_per_node: 2, memory_per_node: 1GiB,
      clock_ghz: 2.0, microarch: icelake, environs: [ompi]}}
stacks:
  - {{name: ompi, features: [openmpi, osu], osu_dir: {tmp_path / "empty"},
      env_vars: {{OMPI_ALLOW_RUN_AS_ROOT: 1, OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: 1}}}}
""")
    run_dir = tmp_path / "run"
    env = dict(os.environ, SCALEBENCH_SITE=str(site))
    proc = run_reframe(run_dir, "-r", "-n", "OSU", config="slurm.py", checks="microbench.py", env=env)
    assert proc.returncode != 0
    sessions, _ = results.ingest([run_dir])
    cases = {c.name: c for c in sessions[0].cases}
    assert cases and all(c.result == "fail" for c in cases.values())
    intra = cases["OSULatencyCheck %placement=intra_node"]
    assert intra.fail_reason.endswith("benchmark program not found: osu_latency"), intra.fail_reason
    # every OSU program is looked for: point-to-point, multi-pair and collectives
    programs = {m for c in cases.values() for m in re.findall(r"not found: (osu_\w+)$", c.fail_reason or "")}
    assert programs == {"osu_latency", "osu_bw", "osu_bibw", "osu_mbw_mr", "osu_allreduce", "osu_alltoall",
                        "osu_allgather"}


def test_hpcc_network_check_on_both_openmpi_transports(micro_run):
    _, _, cases = micro_run
    hpcc = {c["stack"]: _figures(c) for c in cases if c["name"] == "HPCCNetworkCheck" and c["result"] == "pass"}
    assert set(hpcc) == {"openmpi-sm", "openmpi-tcp"}
    for figures in hpcc.values():
        assert figures["pingpong_latency_min"] <= figures["pingpong_latency_avg"] <= figures["pingpong_latency_max"]
        assert figures["random_ring_over_pingpong"] == pytest.approx(
            figures["random_ring_latency"] / figures["pingpong_latency_avg"])


def test_report_has_curves_n_half_and_the_stack_table(micro_run, tmp_path):
    runs, _, _ = micro_run
    out = tmp_path / "report"
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "report", *map(str, runs), "--out", str(out),
                           "--format", "md,html"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = (out / "report.md").read_text()
    section = text[text.index("## Microbenchmarks"):]
    assert "### NetPIPE ping-pong on local:default" in section
    rows = {line.split("|")[1].strip(): line for line in section.splitlines() if line.startswith("| ")}
    assert STACKS <= set(rows)
    assert re.search(r"#### NetPIPE ping-pong on local:default: stacks against \S+", section)
    assert "### hpcc ping-pong and rings on local:default" in section
    assert re.search(r"!\[NetPIPE ping-pong on local:default: bandwidth", section)
    transports = text[text.index("## Transports"):]
    for stack, declared in (("openmpi-sm", "shm"), ("openmpi-tcp", "tcp"), ("mpich", "ucx:shm")):
        assert re.search(rf"\| local:default \| {stack} \| {declared} \| [^|]+ \| as declared \|", transports)
    floors = transports[transports.index("### Fabric floors"):]
    assert {"| openmpi-sm | Shared memory |", "| openmpi-tcp | TCP over loopback |"} <= {
        "| " + " | ".join(line.split(" | ")[1:3]) + " |" for line in floors.splitlines() if line.startswith("| local")}


def test_netpipe_stream_gives_a_small_message_rate_on_every_stack(micro_run):
    _, _, cases = micro_run
    stream = {c["stack"]: _figures(c) for c in cases
              if c["name"] == "NetPIPEStreamCheck %placement=intra_node" and c["result"] == "pass"}
    assert set(stream) == STACKS
    for figures in stream.values():
        assert figures["small_message_rate"] == figures["message_rate_1"] > 0


def test_compare_and_accept_over_the_two_runs(micro_run, tmp_path):
    runs, _, cases = micro_run
    scalebench = str(VENV_BIN / "scalebench")
    proc = subprocess.run([scalebench, "compare", *map(str, runs), "--by", "stack", "--baseline", "openmpi-sm"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.split()[:1] in (["mpich"],
                                                                                              ["openmpi-tcp"])}
    assert {"mpich", "openmpi-tcp"} <= set(rows)
    thresholds = tmp_path / "thresholds.yaml"
    # A bound every stack met in this run (twice the slowest), and one no MPI can meet.
    slowest = max(_figures(c)["latency_1"] for c in cases if c["name"] == "NetPIPECheck %placement=intra_node")
    thresholds.write_text(f"""criteria:
  - name: NetPIPE 1-byte latency within twice this run's slowest
    benchmark: NetPIPECheck
    figure: latency
    max: {2 * slowest}
    at: 1
  - name: NetPIPE 1-byte latency under 1 ns (no MPI can)
    benchmark: NetPIPECheck
    figure: latency
    max: 0.001
    at: 1
""")
    proc = subprocess.run([scalebench, "accept", *map(str, runs), "--thresholds", str(thresholds)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout
    verdicts = [line for line in proc.stdout.splitlines() if "NetPIPE 1-byte latency" in line]
    assert sum("PASS" in v for v in verdicts) == 3 and sum("FAIL" in v for v in verdicts) == 3
