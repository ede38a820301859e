"""The HPL check at 1, 2 and 4 nodes through a real (throwaway) Slurm cluster, with the generic
YAML-described Slurm site (site_configs/slurm.py + site_configs/sites/testcluster.yaml)."""
import pytest

import json
import re

from conftest import REPO, run_reframe
from scalebench.reporting.store import ingest
from slurm_fixtures import slurm_cluster_factory  # noqa: F401

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

NODE_SCALES = "%scale=(1_node|2_nodes|4_nodes)$|HPLScalingCheck"


@pytest.fixture(scope="module")
def slurm_hpl(slurm_cluster_factory, tmp_path_factory):  # noqa: F811
    cluster = slurm_cluster_factory(nodes=4, mode="loopback")
    run_dir = tmp_path_factory.mktemp("slurm-hpl") / "run"
    env = cluster.client_env()
    env["SCALEBENCH_SITE"] = str(REPO / "site_configs" / "sites" / "testcluster.yaml")
    # One rank per node: the 4 "nodes" share this machine's cores (a functional test, not timing).
    # One retry: Open MPI over srun/PMIx on nodes that share one hostname has, rarely, lost rank 0 to a
    # segfault in start-up; a retried case must have failed for that alone (test below).
    proc = run_reframe(run_dir, "-r", "-n", NODE_SCALES, "-S", "ranks_per_node=1", "--max-retries=1",
                       "-S", "efficiency_floor=0", config="slurm.py", env=env, timeout=900)
    queue = cluster.run_client(["squeue", "-h", "-o", "%i %T"], timeout=30).stdout
    return run_dir, proc, queue


def test_reframe_exits_zero_and_leaves_no_job(slurm_hpl):
    _, proc, queue = slurm_hpl
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert queue.strip() == ""


def test_each_node_count_ran_on_that_many_slurm_nodes(slurm_hpl):
    run_dir, _, _ = slurm_hpl
    sessions, warnings = ingest([run_dir])
    assert warnings == []
    cases = {c.num_nodes: c for c in sessions[0].cases
             if c.result != "skip" and c.benchmark == "HPLCheck"}
    assert sorted(cases) == [1, 2, 4]
    for nodes, case in cases.items():
        assert case.result == "pass", case.fail_reason
        assert case.system == "testcluster" and case.stack == "openmpi-tcp"
        assert len(set(case.provenance["job_nodelist"])) == nodes
        assert case.num_tasks == nodes and case.figure("rmax") > 0
        # the node probe ran as a step of its own on every node of the job (srun --overlap), named as Slurm
        # names them: several slurmd share this host
        probe = case.recorded("interference")
        assert probe["nodes"] == probe["expected_nodes"] == nodes, case.recorded("interference_summary")
        assert set(probe["per_node"]) == set(case.provenance["job_nodelist"])


def test_perflog_lines_carry_nodes_nodelist_and_stack(slurm_hpl):
    run_dir, _, _ = slurm_hpl
    lines = next((run_dir / "perflogs").rglob("HPLCheck.log")).read_text().splitlines()
    header = lines[0].split("|")
    rows = [dict(zip(header, line.split("|"))) for line in lines[1:]]
    assert rows and all(r["stack"] == "openmpi-tcp" for r in rows)
    assert {r["num_nodes"] for r in rows} == {"1", "2", "4"}
    assert all(r["job_nodelist"].startswith("n") for r in rows)


def test_scaling_check_reports_weak_efficiency_per_node_count(slurm_hpl):
    run_dir, _, _ = slurm_hpl
    sessions, _ = ingest([run_dir])
    scaling = next(c for c in sessions[0].cases if c.benchmark == "HPLScalingCheck")
    assert scaling.result == "pass", scaling.fail_reason
    # One rank per node: the series is 1, 2 and 4 cores (= nodes).
    assert set(scaling.figures) == {"weak_efficiency_p2", "weak_efficiency_p4"}
    assert all(unit == "%" and value > 0 for value, unit in scaling.figures.values())


def test_a_retried_case_failed_only_because_a_rank_died_as_its_reason_says(slurm_hpl):
    run_dir, _, _ = slurm_hpl
    runs = json.loads((run_dir / "report.json").read_text())["runs"]
    retried = [case for run in runs[:-1] for case in run["testcases"] if case["result"] == "fail"]
    for case in retried:  # the launcher's words first (scalebench.programs.ended_early)
        assert re.match(r"(sanity error: )?(tasks? \S+ on \S+|rank \d+ on \S+): ", case["fail_reason"] or ""), (
            case["fail_reason"])
