"""Memory as Slurm sees it, on the throwaway cluster: a partition with MaxMemPerNode below its nodes'
memory, and nodes of two kinds (two with 3000 MB, two with 6000 MB, told apart by their features).
Slurm never starts a job asking --mem=0 there (it pends, MaxMemPerLimit); every HPL job scalebench
submits is accepted and passes, on all four nodes sized for what a job may have, and on the large kind
alone where the partition holds its jobs to it (job_options.constraint)."""
import time

import pytest
import yaml

from conftest import REPO, run_reframe
from scalebench.reporting.store import ingest
from slurm_fixtures import slurm_cluster_factory  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

MEMORY_MB = (3000, 3000, 6000, 6000)
FEATURES = ("mem3g", "mem3g", "mem6g", "mem6g")
MAX_MEM_MB = 2800


def site_file(path):
    site = yaml.safe_load((REPO / "site_configs" / "sites" / "testcluster.yaml").read_text())
    debug = site["partitions"][0]
    debug.update(cores_per_node=1, memory_per_node="3000MiB", max_mem_per_node=f"{MAX_MEM_MB}M", node_kinds=[
        {"nodes": 2, "memory_per_node": "3000MiB", "cores_per_node": 1, "features": ["mem3g"]},
        {"nodes": 2, "memory_per_node": "6000MiB", "cores_per_node": 1, "features": ["mem6g"]}])
    big = {**debug, "name": "big", "job_options": {"constraint": "mem6g"}}
    site["partitions"] = [debug, big]
    path.write_text(yaml.safe_dump(site))
    return path


@pytest.fixture(scope="module")
def cluster(slurm_cluster_factory):  # noqa: F811
    return slurm_cluster_factory(nodes=4, mode="loopback", cpus_per_node=1, node_memory_mb=MEMORY_MB,
                                 node_features=FEATURES, max_mem_per_node_mb=MAX_MEM_MB)


def test_slurm_never_starts_a_job_asking_for_all_of_a_node_there(cluster):
    job = cluster.run_client(["sbatch", "--parsable", "-N1", "--mem=0", "--wrap", "true"], timeout=30).stdout.strip()
    try:
        deadline, seen = time.monotonic() + 20, []
        while time.monotonic() < deadline and (not seen or seen[-1] != ["PENDING", "MaxMemPerLimit"]):
            time.sleep(0.5)  # PartitionConfig first, until the scheduler has looked at it
            seen.append(cluster.run_client(["squeue", "-h", "-j", job, "-o", "%T %r"], timeout=30).stdout.split())
        assert seen[-1] == ["PENDING", "MaxMemPerLimit"] and all(state == "PENDING" for state, _ in seen), seen
    finally:
        cluster.run_client(["scancel", job], timeout=30)


@pytest.fixture(scope="module")
def hpl_run(cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("memory")
    env = cluster.client_env()
    env["SCALEBENCH_SITE"] = str(site_file(base / "site.yaml"))
    proc = run_reframe(base / "run", "-r", "-n", "HPLCheck%scale=(1_node|2_nodes|4_nodes)$", "-S", "efficiency_floor=0",
                       config="slurm.py", env=env, timeout=900)
    queue = cluster.run_client(["squeue", "-h", "-o", "%i %T %r"], timeout=30).stdout
    return base / "run", proc, queue


def test_every_hpl_job_is_accepted_and_passes_on_the_nodes_it_asked_for(hpl_run):
    run_dir, proc, queue = hpl_run
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert queue.strip() == ""  # nothing left pending
    sessions, warnings = ingest([run_dir])
    assert warnings == []
    ran = {(c.partition, c.num_nodes): c for c in sessions[0].cases if c.benchmark == "HPLCheck" and c.result != "skip"}
    assert sorted(ran) == [("big", 1), ("big", 2), ("debug", 1), ("debug", 2), ("debug", 4)]
    for (partition, nodes), case in ran.items():
        assert case.result == "pass", case.fail_reason
        if partition == "big":  # the large kind only
            assert set(case.provenance["job_nodelist"]) <= {"n3", "n4"}, case.provenance["job_nodelist"]


def test_the_jobs_ask_for_the_partitions_maximum_and_big_ones_for_their_kind(hpl_run):
    run_dir, _, _ = hpl_run
    # a passed case's stage directory is gone; ReFrame keeps its job script among its outputs
    scripts = {path.parent.parent.parent.name + "/" + path.parent.name: path.read_text()
               for path in (run_dir / "output" / "testcluster").rglob("rfm_job.sh")}
    assert len(scripts) == 5
    for name, text in scripts.items():
        assert f"#SBATCH --mem={MAX_MEM_MB}M" in text and "#SBATCH --mem=0" not in text, name
        assert ("#SBATCH --constraint=mem6g" in text) == name.startswith("big/"), name
