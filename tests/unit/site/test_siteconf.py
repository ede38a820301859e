"""Slurm sites described in YAML (scalebench.site.siteconf.load_site) and run directories."""

import pytest

from scalebench import paths
from scalebench.errors import InputError, ResultsError
from scalebench.site import rundir as provenance, siteconf
from site_files import SITE, run_dir, write  # noqa: F401 (run_dir: autouse)


def test_shipped_site_files_load():
    for name in ("example.yaml", "testcluster.yaml"):
        config = siteconf.load_site(paths.SITE_CONFIGS / "sites" / name)
        assert config["systems"][0]["partitions"]


def test_partition_gets_rpeak_inputs_and_stack_extras(tmp_path):
    config = siteconf.load_site(write(tmp_path, SITE))
    part = config["systems"][0]["partitions"][0]
    assert part["extras"]["memory_per_node"] == 256 * 2**30
    assert part["extras"]["flops_per_cycle"] == 16  # zen3 from the table
    assert part["sched_options"] == {"use_nodes_option": False}  # each check writes --nodes from its plan
    env = config["environments"][0]
    assert env["extras"]["stack"] == "ompi" and ["OMPI_MCA_pml", "ob1"] in env["env_vars"]


@pytest.mark.parametrize("edit, message", [
    (("    clock_ghz: 2.0\n", ""), "cpu.*clock_ghz"),
    (("    environs: [ompi]", "    environs: [mpich]"), r"environs: unknown stack\(s\) mpich"),
    (("  - name: cpu\n", "  - name: cpu; rm -rf /\n"), "is not a name ReFrame takes"),
    (("    max_nodes: 8\n", "    max_nodes: 8\n    max_node: 8\n"), r"unknown key 'max_node' \(did you mean 'max_nodes'\?\)"),
    (("    env_vars: {OMPI_MCA_pml: ob1}", "    env_vars: {'A B': 1}"), "'A B' is not a variable name"),
    (("    memory_per_node: 256GiB", "    memory_per_node: lots"), "memory_per_node"),
    (("    env_vars: {OMPI_MCA_pml: ob1}", "    transport: infiniband"), r"\[ompi\]\.transport: 'infiniband' is no"),
    (("    env_vars: {OMPI_MCA_pml: ob1}", "    transport: ucx:rc;ls"), r"\[ompi\]\.transport"),
    (("    env_vars: {OMPI_MCA_pml: ob1}", "    fabric: infiniband-hrd"), "did you mean 'infiniband-hdr'"),
    (("    env_vars: {OMPI_MCA_pml: ob1}", "    fabric: [infiniband-hdr]"), r"\[ompi\]\.fabric: must be a string, got \['infiniband-hdr'\]"),
])
def test_bad_site_files_name_the_file_and_key(tmp_path, edit, message):
    path = write(tmp_path, SITE.replace(*edit))
    with pytest.raises(InputError, match=message) as err:
        siteconf.load_site(path)
    assert str(path) in str(err.value)


def test_a_stacks_transport_and_fabric_reach_its_checks(tmp_path):
    site = SITE.replace("    env_vars: {OMPI_MCA_pml: ob1}",
                        "    transport: ucx:rc_mlx5\n    intra_node_transport: ucx:shm\n    fabric: infiniband-ndr")
    extras = siteconf.load_site(write(tmp_path, site))["environments"][0]["extras"]
    assert (extras["transport"], extras["intra_node_transport"], extras["fabric"]) == (
        "ucx:rc_mlx5", "ucx:shm", "infiniband-ndr")


def test_spack_env_stack_activates_it_and_records_its_lock(tmp_path):
    env_dir = tmp_path / "my env"
    config = siteconf.load_site(write(tmp_path, SITE.replace(
        "    env_vars: {OMPI_MCA_pml: ob1}", f"    spack_env: '{env_dir}'")))
    env = config["environments"][0]
    assert env["prepare_cmds"] == [f"spack env activate -d '{env_dir}'"]  # quoted: the path has a space
    assert env["extras"]["spack_lock"] == str(env_dir / "spack.lock")
    assert "spack" in env["features"]
    assert env["extras"]["osu_dir"] == f"{env_dir}/.spack-env/view/libexec/osu-micro-benchmarks"
    assert env["extras"]["openfoam_bashrc"] == f"{env_dir}/.spack-env/view/etc/bashrc"


def test_spack_view_stack_goes_first_on_path(tmp_path):
    view = tmp_path / "env" / ".spack-env" / "view"
    config = siteconf.load_site(write(tmp_path, SITE.replace(
        "    env_vars: {OMPI_MCA_pml: ob1}", f"    spack_view: {view}")))
    env = config["environments"][0]
    assert [k for k, _ in env["env_vars"]] == ["PATH", "LD_LIBRARY_PATH"]
    assert env["extras"]["spack_lock"] == str(tmp_path / "env" / "spack.lock")
    assert env["extras"]["osu_dir"] == f"{view}/libexec/osu-micro-benchmarks"
    assert env["extras"]["openfoam_bashrc"] == f"{view}/etc/bashrc"  # its solvers are not in view/bin


def test_stack_programs_become_environment_extras(tmp_path):
    config = siteconf.load_site(write(tmp_path, SITE.replace(
        "    env_vars: {OMPI_MCA_pml: ob1}",
        "    features: [netpipe, osu]\n    netpipe_binary: NPmpich2\n    mpirun: mpirun.mpich\n"
        "    osu_dir: /opt/osu\n    hpcc_binary: /opt/hpcc/bin/hpcc")))
    extras = config["environments"][0]["extras"]
    assert {k: extras[k] for k in ("netpipe_binary", "mpirun", "osu_dir", "hpcc_binary", "hpl_binary")} == {
        "netpipe_binary": "NPmpich2", "mpirun": "mpirun.mpich", "osu_dir": "/opt/osu",
        "hpcc_binary": "/opt/hpcc/bin/hpcc", "hpl_binary": "xhpl"}
    assert {"netpipe", "osu"} <= set(config["environments"][0]["features"])


def test_file_digest(tmp_path):
    lock = tmp_path / "spack.lock"
    assert provenance.file_digest(lock) == f"missing {lock}"
    lock.write_text("{}")
    assert provenance.file_digest(lock).startswith("sha256:44136fa355b3678a ")


def test_run_dir_records_provenance_and_refuses_an_existing_report(tmp_path, monkeypatch):
    directory = provenance.claim_run_dir()
    assert (directory / "provenance.json").is_file()
    (directory / "report.json").write_text("{}")
    with pytest.raises(ResultsError, match="already holds a run report"):
        provenance.claim_run_dir()


def test_a_stack_may_link_flexiblas_and_name_its_backend(tmp_path):
    site = SITE.replace("    env_vars: {OMPI_MCA_pml: ob1}", "    env_vars: {FLEXIBLAS: OPENBLAS-OPENMP}\n    blas: flexiblas")
    env = siteconf.load_site(write(tmp_path, site))["environments"][0]
    assert env["extras"]["blas"] == "flexiblas" and ["FLEXIBLAS", "OPENBLAS-OPENMP"] in env["env_vars"]
