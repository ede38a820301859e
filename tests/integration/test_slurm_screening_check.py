"""ScreeningCheck on the throwaway Slurm cluster: six nodes in network namespaces (own address and
hostname each), one rank per node, one job over all of them.

Five clean jobs flag nothing, whatever else runs on this machine (`make test-loaded` runs a CPU hog
beside them; other work may too): screening flags only what is behind in every pass of its probe and
what the interference recorded on it cannot explain. Then n3's slurmd, and so its jobs, is held to a
twentieth of a CPU (a cgroup quota: a throttled node; under load 7 on the two cores a clean node's
rank gets a sixth of one, and a node held to a tenth was only 36% behind, in two passes of three) and n5's link to 100 Mbit/s (tc on both sides of its
veth: a port at a lower speed), and one job, with a CPU hog beside the clean nodes, flags exactly
those two: n3 for compute, n5 for its NIC. `scalebench screen --hostlist` prints them as a node list
Slurm's scontrol takes (drained, then resumed here) and the command that re-screens them beside
healthy peers, which, run as printed once the faults are gone, flags nothing.

The six nodes share this machine's two cores, so the thresholds are this machine's
(tests/data/screening/shared-host-flags.yaml says what was measured); the faults are far beyond them.
About 2.5 minutes: seven jobs of about 18 s each, and ReFrame around them.
"""
import os
import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, VENV_BIN, run_reframe
from scalebench.reporting.screening import screened_jobs
from scalebench.reporting.store import ingest
from scalebench.site.thresholds import report_flags
from scalebench_lab import cluster as lab
from slurm_fixtures import slurm_cluster_factory  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

NODES = 6
SLOW, SHAPED = "n3", "n5"
CLEAN_JOBS = 5
FLAGS = REPO / "tests" / "data" / "screening" / "shared-host-flags.yaml"


@pytest.fixture(scope="module")
def lab_cluster(slurm_cluster_factory, tmp_path_factory):  # noqa: F811
    if not (lab.CPU_CGROUP / "cgroup.procs").is_file():
        pytest.skip(f"needs cgroup v1's cpu controller at {lab.CPU_CGROUP} to slow a node")
    state = slurm_cluster_factory(nodes=NODES, mode="netns", cpus_per_node=1)
    # The netns test site with all six nodes, and one stack: Open MPI over TCP on unshaped links.
    site = yaml.safe_load((REPO / "site_configs" / "sites" / "testcluster-netns.yaml").read_text())
    site["partitions"][0].update(max_nodes=NODES, environs=["tcp-10GbE"])
    path = tmp_path_factory.mktemp("site") / "testcluster-screening.yaml"
    path.write_text(yaml.safe_dump(site))
    return state, path


def screen(state, site, run_dir, *args):
    env = state.client_env()
    env["SCALEBENCH_SITE"] = str(site)
    proc = run_reframe(run_dir, "-r", "-n", "ScreeningCheck", *args, config="slurm.py", checks="screening.py",
                       env=env, argv_prefix=tuple(state.client_argv([])), timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return run_dir


def verdicts(run_dir):
    sessions, warnings = ingest([run_dir])
    assert warnings == []
    jobs, notes = screened_jobs(sessions, report_flags(FLAGS))
    assert notes == []
    return jobs


@pytest.fixture(scope="module")
def clean(lab_cluster, tmp_path_factory):
    state, site = lab_cluster
    return screen(state, site, tmp_path_factory.mktemp("clean") / "run", "--repeat", str(CLEAN_JOBS))


def cpu_hog():
    """A busy loop outside every node's jobs, on the last core: what a colleague's build does beside them."""
    return subprocess.Popen(["taskset", "-c", str(os.cpu_count() - 1), "sh", "-c", "while :; do :; done"])


@pytest.fixture(scope="module")
def faulty(lab_cluster, clean, tmp_path_factory):
    state, site = lab_cluster
    lab.slow_node(state, SLOW, cpus=0.05)
    lab.shape_node(state, SHAPED, "100Mb")
    hog = cpu_hog()
    try:
        return screen(state, site, tmp_path_factory.mktemp("faulty") / "run"), cpu_seconds(hog.pid)
    finally:
        hog.kill()
        hog.wait()


def cpu_seconds(pid):
    """CPU time a live process has used (utime + stime, /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_clean_jobs_flag_nothing(clean):
    jobs = verdicts(clean)
    assert len(jobs) == CLEAN_JOBS
    for job in jobs:
        assert job.verdict.result.node_names() == [f"n{i}" for i in range(1, NODES + 1)]
        assert len(job.verdict.result.pairs) >= NODES  # the ring's pairs at least
    false_flags = [(job.case.name, v.node) for job in jobs for v in job.verdict.nodes]
    false_links = [(job.case.name, f"{v.pair.a}-{v.pair.b}") for job in jobs for v in job.verdict.links]
    # what the passes did not confirm, and what interference left undecided, is no flag: said if it fails
    spared = [(job.case.name, *job.verdict.unconfirmed, *(u.why for u in job.verdict.undecided)) for job in jobs]
    assert (false_flags, false_links) == ([], []), spared


def test_the_probe_gives_every_figure_per_pass(clean):
    """The re-measurements a flag rests on: each of the probe's passes measured every node and pair."""
    job = verdicts(clean)[0]
    result = job.verdict.result
    assert result.settings["version"] == 2 and result.passes == 3
    assert all(len(values) == 3 for n in result.nodes for values in n.by_pass.values())
    assert all(set(p.by_pass) == {"latency_us", "bandwidth_mbs"} for p in result.pairs)


def test_the_throttled_node_and_the_slow_link_and_only_they_are_flagged(faulty):
    faulty, hog_seconds = faulty
    (job,) = verdicts(faulty)
    # the hog took CPU beside the job (a tenth of its wall time at least), and every node recorded foreign load
    assert hog_seconds >= 0.1 * job.verdict.result.compute_s + 0.1 * job.verdict.result.links_s, hog_seconds
    record = job.case.recorded("interference", None)
    assert all(entry["foreign_cores"] > 0.1 for entry in record["per_node"].values()), record
    assert {v.node: v.cause for v in job.verdict.nodes} == {SLOW: "compute", SHAPED: "NIC"}
    assert job.verdict.flagged_links() == []  # the slow pairs are explained by their nodes
    # the hog beside every node alike explains no rate (it cancels), only which pair's latency it hit
    assert all(figure.latency for u in job.verdict.undecided for figure, _ in u.scores), job.verdict.undecided
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "screen", str(faulty), "--flags", str(FLAGS)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "nodes to drain: n[3,5]" in proc.stdout and "links to check: none" in proc.stdout


def test_the_report_shows_both_nodes_and_a_per_node_plot(faulty, tmp_path):
    faulty, _ = faulty
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "report", str(faulty), "--out", str(tmp_path / "r"),
                           "--format", "md"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    section = (tmp_path / "r" / "report.md").read_text().split("## Node screening")[1].split("\n## ")[0]
    assert "| n3 | compute |" in section and "| n5 | NIC |" in section
    assert "![" in section and "screening-1" in section



def wait_until_idle(state, nodes, timeout_s=60):
    """Resumed nodes answer slurmctld's next ping a moment later; a job submitted before pends on them
    (ReqNodeNotAvail), and ReFrame cancels such a job at once."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        states = dict(line.split() for line in state.run_client(
            ["sinfo", "--noheader", "--Node", "--format=%N %t", f"--nodes={','.join(nodes)}"]).stdout.splitlines())
        if all(states.get(node) == "idle" for node in nodes):  # "idle*": not responding yet
            return
        time.sleep(0.5)
    raise AssertionError(f"nodes {nodes} not idle after {timeout_s} s: {states}")

def test_drain_then_re_screen_as_printed(lab_cluster, faulty, tmp_path):
    """The node list goes to scontrol as it is; after the repair the printed command re-screens the two
    nodes beside healthy peers, and flags nothing."""
    state, site = lab_cluster
    faulty, _ = faulty
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "screen", str(faulty), "--hostlist", "--flags", str(FLAGS)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == "n[3,5]\n", proc.stdout + proc.stderr
    (command,) = [line.split(": ", 1)[1] for line in proc.stderr.splitlines() if line.startswith("re-screen")]
    drained = proc.stdout.strip()
    state.run_client(["scontrol", "update", f"NodeName={drained}", "State=DRAIN", "Reason=scalebench screen"])
    try:
        states = state.run_client(["sinfo", "--noheader", "--Node", "--format=%N %T"]).stdout
        assert {line.split()[0] for line in states.splitlines() if "drain" in line} == {SLOW, SHAPED}
    finally:
        for node in (SLOW, SHAPED):
            lab.repair_node(state, node)
        state.run_client(["scontrol", "update", f"NodeName={drained}", "State=RESUME"])
        wait_until_idle(state, (SLOW, SHAPED))
    words = shlex.split(command)
    assert words[:5] == [".venv/bin/reframe", "-C", "site_configs/slurm.py", "-c", "reframe_tests/screening.py"]
    assert "screen_nodes=n[1-5]" in words  # n3 and n5 beside three healthy peers
    run_dir = tmp_path / "again"
    screen(state, site, run_dir, *words[5:][words[5:].index("--system"):-1])
    (job,) = verdicts(run_dir)
    assert job.verdict.result.node_names() == ["n1", "n2", "n3", "n4", "n5"]
    assert job.verdict.nodes == () and job.verdict.flagged_links() == []
