"""The throwaway Slurm cluster (scalebench_lab/cluster.py): real slurmctld/slurmd/munged, real srun/sbatch/MPI.

Every subprocess has a timeout; clusters come from slurm_fixtures, whose finalizer always stops them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, require_cores, require_tools, run_reframe
from scalebench_lab import cluster
from slurm_fixtures import slurm_cluster_factory  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

HELLO_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, sum = 0;
    char host[256];
    const char *node = getenv("SLURMD_NODENAME");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    gethostname(host, sizeof host);
    printf("rank %d of %d host %s node %s sum %d\n", rank, size, host, node ? node : "?", sum);
    MPI_Finalize();
    return 0;
}
"""


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "scalebench_lab.cluster", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def recorded_pids(directory: Path) -> list[dict]:
    return json.loads((directory / "state.json").read_text())["processes"]


def assert_all_gone(directory: Path) -> None:
    state = json.loads((directory / "state.json").read_text())
    assert state["phase"] == "stopped"
    alive = [p for p in state["processes"] if cluster.is_alive(p["pid"], p["starttime"])]
    assert alive == []
    leftover = [c["name"] for c in state["created"] if Path(f"/run/netns/{c['name']}").exists()]
    assert leftover == []


@pytest.fixture(scope="module")
def loopback(slurm_cluster_factory):
    return slurm_cluster_factory(nodes=2, mode="loopback")


@pytest.fixture(scope="module")
def netns(slurm_cluster_factory):
    return slurm_cluster_factory(nodes=2, mode="netns", shape="100Mb")


@pytest.fixture(scope="module")
def hello(tmp_path_factory):
    require_tools("mpicc")
    out = tmp_path_factory.mktemp("mpi")
    (out / "hello.c").write_text(HELLO_C)
    subprocess.run(["mpicc", "-o", str(out / "hello"), str(out / "hello.c")], check=True, timeout=60,
                   capture_output=True)
    return out / "hello"


# --------------------------------------------------------------------------- loopback mode

def test_loopback_nodes_idle_and_everything_recorded(loopback):
    nodes = loopback.run_client(["sinfo", "--noheader", "--Node", "--format=%N %P %T %c"], timeout=10)
    assert sorted(nodes.stdout.split("\n")[:2]) == [f"n1 {cluster.PARTITION}* idle {cluster.machine_cpus()}",
                                                   f"n2 {cluster.PARTITION}* idle {cluster.machine_cpus()}"]
    roles = [p["role"] for p in recorded_pids(loopback.dir)]
    assert roles.count("slurmctld") == 1 and {"slurmd n1", "slurmd n2"} <= set(roles)
    assert all(cluster.is_alive(p["pid"], p["starttime"]) for p in recorded_pids(loopback.dir))
    munged = loopback.data["munged"]
    assert (munged["started"] and "munged" in roles) or (not munged["started"] and "munged" not in roles)
    conf = loopback.slurm_conf.read_text()
    for line in ("AccountingStorageType=accounting_storage/none", "MpiDefault=pmix", f"TmpFS={loopback.dir}/tmp/%n",
                 "SlurmdParameters=config_overrides"):
        assert line in conf.splitlines()
    assert "NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=" in conf


def test_srun_runs_one_task_on_each_node(loopback):
    proc = loopback.run_client(["srun", "-N2", "-n2", "hostname"], timeout=30)
    assert len(proc.stdout.split()) == 2
    proc = loopback.run_client(["srun", "-N2", "-n2", "printenv", "SLURMD_NODENAME"], timeout=30)
    assert sorted(proc.stdout.split()) == ["n1", "n2"]


def test_sbatch_wrap_completes_and_squeue_reports_it(loopback, tmp_path):
    out = tmp_path / "job.out"
    proc = loopback.run_client(["sbatch", "--parsable", "--wait", "-N1", "-o", str(out),
                                "--wrap", "echo done on $SLURMD_NODENAME"], timeout=30)
    job_id = proc.stdout.split(";")[0].strip()
    assert out.read_text().startswith("done on n")
    # No accounting: finished jobs are visible only in squeue (for MinJobAge=300 s) and only with
    # `-t all`. ReFrame's `squeue` scheduler polls without it, so it sees no finished job at all and
    # calls it COMPLETED: a job's exit code never reaches ReFrame, only its sanity checks catch failures.
    finished = loopback.run_client(["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%i|%T|%N|%r"], timeout=10)
    assert finished.stdout.split("|")[1] == "COMPLETED"
    polled = loopback.run_client(["squeue", "-h", "-j", job_id, "-o", "%i|%T|%N|%r"], timeout=10)
    assert polled.stdout.strip() == ""


def test_mpi_hello_across_two_nodes_with_pmix(loopback, hello):
    proc = loopback.run_client(["srun", "--mpi=pmix", "-N2", "-n2", str(hello)], timeout=60)
    lines = sorted(proc.stdout.splitlines())
    assert [ln.split(" host ")[0] for ln in lines] == ["rank 0 of 2", "rank 1 of 2"]
    assert sorted(ln.split(" node ")[1].split()[0] for ln in lines) == ["n1", "n2"]
    assert all(ln.endswith("sum 1") for ln in lines)


def test_status_cli_prints_the_client_environment(loopback):
    env = cli("status", "--dir", str(loopback.dir), "--env")
    assert env.returncode == 0, env.stderr
    lines = env.stdout.splitlines()
    assert f"export SLURM_CONF={loopback.dir}/slurm.conf" in lines
    assert {"export OMPI_MCA_btl=tcp,self", "export OMPI_MCA_btl_tcp_if_include=lo",
            "export SLURM_MPI_TYPE=pmix"} <= set(lines)
    summary = cli("status", "--dir", str(loopback.dir))
    assert summary.returncode == 0 and "healthy" in summary.stdout and "node n2: idle" in summary.stdout


# --------------------------------------------------------------------------- netns mode

def test_netns_nodes_have_their_own_hostname_and_address(netns):
    proc = netns.run_client(["srun", "-N2", "-n2", "sh", "-c", 'echo "$(hostname) $(hostname -I)"'], timeout=30)
    assert sorted(ln.strip() for ln in proc.stdout.splitlines()) == [
        f"n1 {cluster.node_addr(1)}", f"n2 {cluster.node_addr(2)}"]


def test_netns_mpi_hello_across_two_nodes(netns, hello):
    proc = netns.run_client(["srun", "--mpi=pmix", "-N2", "-n2", str(hello)], timeout=60)
    hosts = sorted(ln.split(" host ")[1].split()[0] for ln in proc.stdout.splitlines())
    assert hosts == ["n1", "n2"]
    assert all(ln.endswith("sum 1") for ln in proc.stdout.splitlines())


def test_netpipe_between_two_netns_nodes_sees_the_shaped_link(netns, tmp_path):
    """The interconnect check across nodes through Slurm: two hosts, and the 100 Mbit/s link's ceiling."""
    require_tools("NPopenmpi")
    require_cores(2)  # two ranks polling on one core would measure the scheduler's time slices, not the link
    run_dir = tmp_path / "run"
    env = netns.client_env()
    env["SCALEBENCH_SITE"] = str(REPO / "site_configs" / "sites" / "testcluster-netns.yaml")
    proc = run_reframe(run_dir, "-r", "-n", "NetPIPECheck%placement=inter_node", "-p", "tcp-100Mb",
                       "-S", "max_bytes=1048576", config="slurm.py", checks="microbench.py", env=env,
                       argv_prefix=tuple(netns.client_argv([])))
    assert proc.returncode == 0, proc.stdout[-3000:]
    case = json.loads((run_dir / "report.json").read_text())["runs"][0]["testcases"][0]
    assert case["result"] == "pass" and case["hosts"] == "n1 n2"
    figures = {k.split(":")[-1]: v[0] for k, v in case["perfvalues"].items()}
    # The shaper's physics, within this one curve: 100 Mbit/s = 12.5 MB/s. A message within its
    # 64 KB burst passes at full speed, faster than a 1 MiB one, which is held to the rate for all
    # but that burst (at most ~7% above it), so its one-way time is at least size / rate.
    rate = cluster.load_link_profiles()["100Mb"]
    assert rate["rate"] == "100mbit"
    assert figures["bandwidth_1048576"] <= 12.5 * 1.1 < figures["bandwidth_65536"], figures
    assert figures["latency_1048576"] >= 2**20 / (12.5 * 1.1)  # us: bytes / (MB/s)


RECEIVER = r"""
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 5201)); s.listen(1); s.settimeout(10); print("ready", flush=True)
c, _ = s.accept(); c.settimeout(10); n = 0; t0 = None
while True:
    b = c.recv(1 << 16)
    if not b: break
    t0 = t0 or time.monotonic(); n += len(b)
print(n * 8 / (time.monotonic() - t0) / 1e6)
"""
SENDER = "import socket, sys; c = socket.create_connection((sys.argv[1], 5201), timeout=10); " \
         "c.sendall(b'x' * 3_000_000); c.close()"


def test_netns_links_are_shaped_by_the_profile(netns):
    profile = cluster.load_link_profiles()["100Mb"]
    ns = {n: f"sb{netns.data['cluster_id']}-{n}" for n in ("n1", "n2")}
    qdisc = subprocess.run(["tc", "-n", ns["n1"], "qdisc", "show", "dev", "eth0"], capture_output=True,
                           text=True, timeout=10, check=True).stdout
    assert "tbf" in qdisc and "100Mbit" in qdisc and profile["rate"] == "100mbit"
    receiver = subprocess.Popen(["nsenter", f"--net=/run/netns/{ns['n2']}", sys.executable, "-c", RECEIVER,
                                 cluster.node_addr(2)], stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout.readline().strip() == "ready"
        subprocess.run(["nsenter", f"--net=/run/netns/{ns['n1']}", sys.executable, "-c", SENDER,
                        cluster.node_addr(2)], check=True, timeout=20)
        mbit = float(receiver.communicate(timeout=20)[0])
    finally:
        receiver.kill()
        receiver.wait(timeout=5)
    rate = 100  # Mbit/s, the profile's; unshaped veth carries several Gbit/s
    assert 0.2 * rate < mbit < 1.3 * rate  # held to the rate, give or take the burst and the clock


# --------------------------------------------------------------------------- stop

def test_stop_with_a_running_job_kills_exactly_what_start_recorded(slurm_cluster_factory, tmp_path):
    state = slurm_cluster_factory(nodes=1, mode="loopback")
    state.run_client(["sbatch", "-N1", "-o", "/dev/null", "--wrap", "srun sleep 300"], timeout=10)
    deadline = time.monotonic() + 15
    while "RUNNING" not in state.run_client(["squeue", "-h", "-o", "%T"], timeout=10).stdout:
        assert time.monotonic() < deadline, "job did not start"
        time.sleep(0.2)
    proc = cli("stop", "--dir", str(state.dir))  # cli's own timeout: a stop that hangs fails the test
    assert proc.returncode == 0, proc.stderr
    assert_all_gone(state.dir)
    # slurmstepd and the job's processes were found through the daemons and recorded before the kill.
    assert any(p["role"] == "descendant" for p in recorded_pids(state.dir))
    again = cli("stop", "--dir", str(state.dir))
    assert again.returncode == 0 and "nothing to stop" in again.stderr


def test_stop_netns_cluster_removes_its_namespaces_and_spares_the_others_munged(slurm_cluster_factory, loopback):
    """Each cluster runs its own munged (slurm.conf's AuthInfo socket): one shared on /run/munge was
    stopped by whichever cluster started it, under the jobs of the others still running."""
    state = slurm_cluster_factory(nodes=2, mode="netns")
    names = [c["name"] for c in state.data["created"] if c["kind"] == "netns"]
    assert len(names) == 3 and all(Path(f"/run/netns/{n}").exists() for n in names)
    socket = Path(state.data["munged"]["socket"])
    assert state.data["munged"]["started"] and socket.exists() and str(socket) != loopback.data["munged"]["socket"]
    assert cluster.stop(state.dir) is True
    assert_all_gone(state.dir)
    assert not socket.parent.exists()
    assert not any(Path(f"/run/netns/{n}").exists() for n in names)
    assert any(c["kind"] == "netns_dir_mount" for c in state.data["created"])  # `ip netns add`'s mount is ours
    assert cluster.stop(state.dir) is False
    # the other cluster and its munged are untouched
    assert loopback.run_client(["srun", "-N2", "-n2", "true"], timeout=30).returncode == 0


def test_a_half_started_cluster_is_recorded_and_stop_cleans_it(slurm_cluster_factory):
    with pytest.raises(cluster.ClusterTimeout, match="not all idle"):
        slurm_cluster_factory(nodes=1, mode="netns", ready_timeout=0, cleanup_on_failure=False)
    directory = slurm_cluster_factory._dirs[-1][0]
    state = json.loads((directory / "state.json").read_text())
    assert state["phase"] == "failed"
    assert any(p["role"] == "slurmctld" for p in state["processes"]) and state["created"]
    assert cluster.stop(directory) is True
    assert_all_gone(directory)


def test_a_failed_start_cleans_up_by_itself(slurm_cluster_factory):
    with pytest.raises(cluster.ClusterTimeout):
        slurm_cluster_factory(nodes=1, mode="loopback", ready_timeout=0)
    assert_all_gone(slurm_cluster_factory._dirs[-1][0])


INNER_TEST = """
import os, time
from pathlib import Path
from slurm_fixtures import slurm_cluster_factory  # noqa: F401

def test_holds_a_cluster(slurm_cluster_factory):
    state = slurm_cluster_factory(nodes=1, mode="loopback")
    Path(os.environ["CLUSTER_DIR_FILE"]).write_text(str(state.dir))
    time.sleep(300)
"""


def test_a_terminated_test_run_stops_its_clusters(tmp_path):
    """SIGTERM to pytest (CI's timeout, run-tests.sh passing it on) tears the fixtures down as Ctrl-C does:
    the lab cluster a test holds is stopped, not left running."""
    (tmp_path / "test_inner.py").write_text(INNER_TEST)
    marker = tmp_path / "cluster-dir"
    env = {**os.environ, "PYTHONPATH": str(REPO / "tests"), "CLUSTER_DIR_FILE": str(marker)}
    # the project's conftest as a plugin (-p conftest): its hooks, as in the test suite
    inner = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "conftest",
                              "--rootdir", str(tmp_path), "--basetemp", str(tmp_path / "base"),
                              str(tmp_path / "test_inner.py")],
                             cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert inner.poll() is None and time.monotonic() < deadline, inner.communicate(timeout=10)[0]
            time.sleep(0.5)
        directory = Path(marker.read_text())
        processes = recorded_pids(directory)
        assert any(cluster.is_alive(p["pid"], p["starttime"]) for p in processes)
        inner.terminate()
        output = inner.communicate(timeout=120)[0]
    finally:
        if inner.poll() is None:
            inner.kill()
            inner.wait(timeout=10)
        if marker.exists() and Path(marker.read_text()).exists():  # a failing test leaves no daemon either
            cluster.stop(Path(marker.read_text()))
    assert "KeyboardInterrupt: signal 15" in output, output
    assert not [p for p in processes if cluster.is_alive(p["pid"], p["starttime"])]
    if directory.exists():  # the fixture removes a directory it made outside the test's own
        assert_all_gone(directory)


# --------------------------------------------------------------------------- errors (no Slurm needed)

def test_errors_are_named_and_one_line(tmp_path):
    with pytest.raises(cluster.ClusterError, match="needs --mode netns"):
        cluster.start(tmp_path, 2, "loopback", shape="1GbE")
    with pytest.raises(cluster.ClusterError, match="unknown link profile 'nope'"):
        cluster.start(tmp_path, 2, "netns", shape="nope")
    with pytest.raises(cluster.ClusterError, match="at most 60"):
        cluster.start(tmp_path / ("x" * 70), 2)
    with pytest.raises(cluster.ClusterError, match="no cluster recorded"):
        cluster.status(tmp_path)
    assert cluster.stop(tmp_path) is False
    proc = cli("status", "--dir", str(tmp_path))
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "error: no cluster recorded" in proc.stderr
    proc = cli("start", "--dir", str(tmp_path), "--nodes", "0")
    assert proc.returncode == 2 and "must be positive" in proc.stderr


def test_link_profiles_have_a_rate_each():
    profiles = cluster.load_link_profiles()
    assert {"100Mb", "1GbE", "10GbE"} <= set(profiles)
    assert all(str(p["rate"]).endswith("bit") for p in profiles.values())
