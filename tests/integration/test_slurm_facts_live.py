"""`scalebench facts slurm` against the throwaway Slurm cluster (slurm_fixtures): what the real scontrol
and sinfo print is read, live and saved, in both of scontrol's forms. Skips without root or Slurm."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import REPO, VENV_BIN
from scalebench.site import slurm_facts as sf
from scalebench_lab import cluster
from slurm_fixtures import slurm_cluster_factory  # noqa: F401  (fixture)

pytestmark = [pytest.mark.integration, pytest.mark.slurm_lab]

CPUS, MEMORY_MB = 2, 1500


@pytest.fixture(scope="module")
def state(slurm_cluster_factory):
    return slurm_cluster_factory(nodes=3, mode="loopback", cpus_per_node=CPUS, memory_per_node_mb=MEMORY_MB)


def facts_cli(state, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(state.client_argv([str(VENV_BIN / "scalebench"), "facts", "slurm", *args]),
                          env=state.client_env(), capture_output=True, text=True, timeout=120, cwd=REPO)


def test_live_facts_of_the_throwaway_cluster(state):
    found = sf.live(state.client_env())
    facts = sf.partition_facts(found.partition(cluster.PARTITION))
    assert facts["max_nodes"] == 3 and facts["slurm"]["nodelist"] == "n[1-3]"
    assert facts["cores_per_node"] == CPUS and facts["memory_per_node"] == f"{MEMORY_MB}MiB"
    assert "max_time_limit_s" not in facts  # MaxTime=INFINITE
    assert found.partitions[cluster.PARTITION].default


def test_saved_outputs_in_both_forms_read_as_live(state, tmp_path):
    commands = dict(sf.COMMANDS)
    for name, command in commands.items():
        out = state.run_client(list(command), timeout=60)
        (tmp_path / name).write_text(out.stdout)
    live = sf.partition_facts(sf.read_dir(tmp_path).partition(cluster.PARTITION))
    for name, command in commands.items():  # scontrol's default multi-line form
        if name != sf.SINFO_FILE:
            (tmp_path / name).write_text(state.run_client([c for c in command if c != "--oneliner"], timeout=60).stdout)
    assert "\n   " in (tmp_path / sf.NODE_FILE).read_text()
    assert sf.partition_facts(sf.read_dir(tmp_path).partition(cluster.PARTITION)) == live


def test_a_drained_node_is_reported(state):
    state.run_client(["scontrol", "update", "nodename=n3", "state=drain", "reason=facts test: bad dimm"], timeout=30)
    try:
        result = facts_cli(state, "--partition", cluster.PARTITION, "--json")
        assert result.returncode == 0, result.stderr
        facts = json.loads(result.stdout)["partitions"][cluster.PARTITION]
        assert facts["slurm"]["unavailable_nodes"] == "n3" and facts["max_nodes"] == 3
    finally:
        state.run_client(["scontrol", "update", "nodename=n3", "state=resume"], timeout=30, check=False)


def test_an_unknown_partition_is_one_line_and_exit_2(state):
    result = facts_cli(state, "--partition", "nosuch")
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("scalebench facts: error: --partition: no partition 'nosuch' in `scontrol --all "
                           "--oneliner show partition` (SLURM_CONF="), line
    assert line.endswith(f"(partitions: {cluster.PARTITION})"), line
