"""A site's configuration mistakes are named errors, never a silent plan: each of a site engineer's
first-day mistakes (issue reproductions) exits 2 with one line naming the file, the key and the fix,
or 1 where the file is right and nothing can run."""
import json
import os
import re
import socket
import subprocess

import pytest
import yaml

from conftest import REPO, VENV_BIN
from cli_calls import error_line, scalebench

EXAMPLE = REPO / "site_configs" / "sites" / "example.yaml"


def site_with(tmp_path, edit):
    data = yaml.safe_load(EXAMPLE.read_text())
    edit(data)
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def cpu(data):
    return data["partitions"][0]


def test_the_slurm_configuration_has_no_default_site(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "SCALEBENCH_SITE"}
    env["SCALEBENCH_RUN_DIR"] = str(tmp_path / "run")
    proc = subprocess.run([str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / "slurm.py"),
                           "-c", str(REPO / "reframe_tests" / "hpl.py"), "--system", "example",
                           "-n", "HPLCheck%scale=64_nodes", "--dry-run"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "SCALEBENCH_SITE is not set" in proc.stdout + proc.stderr
    assert not (tmp_path / "run").exists()  # nothing planned, nothing written


@pytest.mark.parametrize("name", ["example.yaml", "archetypes/zen4-ib.yaml", "archetypes/gpu-h100.yaml"])
def test_shipped_example_sites_match_no_real_host(name):
    patterns = yaml.safe_load((REPO / "site_configs" / "sites" / name).read_text())["hostnames"]
    for host in (socket.gethostname(), socket.getfqdn(), "login1", "login01.cluster.org", "zen4ib-login1"):
        assert not any(re.match(p, host) for p in patterns), (name, host)


@pytest.mark.parametrize("edit, expected", [
    (lambda d: d.update(modul_system="lmod"), "unknown key 'modul_system' (did you mean 'modules_system'?)"),
    (lambda d: d["stacks"][0].update(modules=["openmpi/5"]),
     "stacks[openmpi-ucx].modules: no module would be loaded: the site's modules_system is nomod"),
    (lambda d: d.update(modules_system="lmodd"), "modules_system: 'lmodd' is not one of nomod, lmod"),
    (lambda d: cpu(d).update(time_limit="72h", max_time_limit_s=172800),
     "partitions[cpu].time_limit: 72h is longer than the partition's longest job (max_time_limit_s: 172800)"),
    (lambda d: cpu(d).update(memory_per_node=768), "partitions[cpu].memory_per_node: must be a size with its unit"),
    (lambda d: cpu(d).update(memory_per_node="768"), "partitions[cpu].memory_per_node: '768' has no unit"),
    (lambda d: cpu(d).update(memory_per_node="1B"), "partitions[cpu].memory_per_node: 1 B is less than 1.0 GiB"),
    (lambda d: cpu(d).update(microarch=["zen4"]), "partitions[cpu].microarch: must be an archspec"),
    (lambda d: cpu(d).update(access=None), "partitions[cpu].access: must be a list, got None"),
    (lambda d: d.update(hostnames=True), "hostnames: must be a list, got True"),
    (lambda d: cpu(d).update(environs=None), "partitions[cpu].environs: must be a list"),
    (lambda d: cpu(d).update(features=7), "partitions[cpu].features: must be a list"),
    (lambda d: cpu(d).update(scheduler=["x"]), "partitions[cpu].scheduler: ['x'] is not one of slurm, squeue, local"),
    (lambda d: cpu(d).update(scheduler=-1), "partitions[cpu].scheduler: -1 is not one of"),
    (lambda d: cpu(d).update(launcher={"a": 1}), "partitions[cpu].launcher: {'a': 1} is not one of"),
    (lambda d: d["stacks"][0].update(hpl_binary=True), "stacks[openmpi-ucx].hpl_binary: must be one word"),
    (lambda d: d["stacks"][0].update(descr={"a": 1}), "stacks[openmpi-ucx].descr: must be a string"),
    (lambda d: d["stacks"][0].update(startup={"base_s": -1}), "stacks[openmpi-ucx].startup.base_s: must be >= 0"),
    (lambda d: d["stacks"][0].update(startup={"base": 60}),
     "stacks[openmpi-ucx].startup: unknown key 'base' (did you mean 'base_s'?)"),
    (lambda d: d.update(partitons=[]), "unknown key 'partitons' (did you mean 'partitions'?)"),
    (lambda d: cpu(d).update(environs=["openmpi-ucx", "openmpi-ucx"]),
     "partitions[cpu].environs: lists 'openmpi-ucx' twice"),
    (lambda d: d["stacks"].append(dict(d["stacks"][0])), "stacks: two entries are named 'openmpi-ucx'"),
    (lambda d: cpu(d).update(scheduler="local"),
     "partitions[cpu].max_nodes: 64 nodes, but the local scheduler runs every job on this one machine"),
    (lambda d: cpu(d).update(cores_per_node=64.0), "partitions[cpu].cores_per_node: must be a positive whole number"),
])
def test_a_site_mistake_is_one_named_line(tmp_path, edit, expected):
    path = site_with(tmp_path, edit)
    proc = scalebench("plan", str(path))
    assert proc.returncode == 2, proc.stderr
    assert error_line(proc) == f"scalebench plan: error: {path}: {expected}" or \
        error_line(proc).startswith(f"scalebench plan: error: {path}: {expected}"), proc.stderr


def test_a_plan_that_leaves_out_every_case_fails(tmp_path):
    path = site_with(tmp_path, lambda d: cpu(d).update(time_limit="1m", max_time_limit_s=60))  # no HPL fits a minute
    proc = scalebench("plan", str(path), "-n", "HPLCheck", "--system", "example:cpu")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Left out" in proc.stdout and "nothing to run" in proc.stderr


def test_a_misspelt_spack_site_is_no_site():
    env = dict(os.environ, SCALEBENCH_SPACK_SITE="example-rocee")
    line = error_line(scalebench("spack", "validate", env=env))
    assert "SCALEBENCH_SPACK_SITE='example-rocee': no such site directory" in line
    assert "(did you mean 'example-roce'?)" in line


def test_intra_node_osu_pairs_run_on_one_node(tmp_path):
    path = site_with(tmp_path, lambda d: None)  # its openmpi-ucx stack has the osu feature
    proc = scalebench("plan", str(path), "-n", "OSUMultiBandwidthCheck", "--json", "--system", "example:cpu")
    assert proc.returncode == 0, proc.stderr
    cases = json.loads(proc.stdout)["cases"]
    for case in cases:
        placement, pairs = case["params"]["placement"], case["params"]["pairs"]
        nodes = 1 if placement == "intra_node" else 2
        assert (case["job"]["nodes"], case["job"]["tasks"]) == (nodes, 2 * pairs), case["name"]
    assert {c["params"]["placement"] for c in cases} == {"intra_node", "inter_node"}


def test_a_name_too_long_for_a_path_is_refused(tmp_path):
    # it becomes a directory name (a frozen deck's): 300 characters gave "File name too long" (exit 3)
    path = site_with(tmp_path, lambda d: d.update(system="x" * 300))
    assert "system: 'xxx" in error_line(scalebench("plan", str(path))) and "at most 64" in error_line(
        scalebench("plan", str(path)))
