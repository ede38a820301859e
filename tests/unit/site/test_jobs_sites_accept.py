"""Jobs a site accepts: memory as Slurm sees it (MaxMemPerNode, its binary units, node kinds), GPUs
asked for as the partition takes them, and what every job of a partition does first."""
import textwrap

import pytest

from scalebench.errors import InputError
from scalebench.site.reframe_config import describe
from scalebench.site.siteconf import systems_config
from scalebench.check import Settings
from scalebench.site_plan import plan_cases
from scalebench.units import parse_slurm_size
from scalebench import loaders, schema

PARTITION = """
name: normal
scheduler: squeue
launcher: srun
max_nodes: 6
cores_per_node: 128
memory_per_node: 257000MiB
clock_ghz: 2.4
microarch: zen4
environs: [ompi]
"""


def site(extra="", stacks="[{name: ompi, features: [openmpi, hpl, osu]}]", modules_system="nomod"):
    part = loaders.parse_yaml(textwrap.dedent(PARTITION) + textwrap.dedent(extra), "partition")
    data = {"system": "mm", "modules_system": modules_system, "partitions": [part],
            "stacks": loaders.parse_yaml(stacks, "stacks")}
    schema.check(data, "site.yaml", "site.yaml")
    return systems_config(data, "site.yaml")


def cases(config, name="HPLCheck"):
    described = describe(config["systems"][0], config["environments"])
    found = plan_cases(list(described.partitions), dict(described.stacks),
                       {k: list(v) for k, v in described.environs.items()}, Settings(), checks=[name])
    return found


def test_slurm_sizes_are_binary_and_a_decimal_unit_is_named():
    assert parse_slurm_size("850000M") == parse_slurm_size("850000MiB") == 850000 * 2**20
    with pytest.raises(InputError, match="Slurm's sizes are binary .* write 850000M or 850000MiB"):
        parse_slurm_size("850000MB", "job_options.memory")


def test_all_of_a_node_is_max_mem_per_node_where_the_partition_limits_it():
    unlimited = cases(site())
    assert {c.plan.job.memory for c in unlimited} == {"0"}
    limited = cases(site("max_mem_per_node: 250000M\n"))
    assert {c.plan.job.memory for c in limited} == {"250000M"}


def test_a_request_beyond_the_memory_that_sizes_hpl_needs_max_mem_per_node():
    """A GH200 node: HPL sized from the CPU's memory, the job asking for RealMemory with the HBM."""
    with pytest.raises(InputError, match="max_mem_per_node \\(MaxMemPerNode\\) allows more"):
        site("job_options: {memory: 850000M}\n")
    config = site("job_options: {memory: 850000M}\nmax_mem_per_node: 870000M\n")
    assert {c.plan.job.memory for c in cases(config)} == {"850000M"}


def test_a_request_too_small_for_hpls_matrix_leaves_the_case_out_named():
    found = cases(site("job_options: {memory: 100G}\n"))
    assert found and all(c.plan is None and "more than its job asks for (--mem=102400M)" in c.left_out for c in found)


KINDS = """
node_kinds:
  - {nodes: 4, memory_per_node: 257000MiB, cores_per_node: 128, features: [mem256]}
  - {nodes: 2, memory_per_node: 515000MiB, cores_per_node: 128, features: [mem512]}
"""


def test_hpl_is_sized_for_the_smallest_node_kind_and_plan_says_so():
    found = cases(site(KINDS))
    assert {c.partition.memory_per_node for c in found} == {257000 * 2**20}
    assert found[0].partition.node_sizing.startswith("sized for the smallest of 2 node kinds")
    with pytest.raises(InputError, match="257000MiB, but the smallest of its node kinds has 195.3 GiB"):
        site(KINDS.replace("4, memory_per_node: 257000MiB", "4, memory_per_node: 200000MiB"))


def test_a_constraint_holds_every_job_to_one_kind_sized_for_it():
    found = cases(site(KINDS + "job_options: {constraint: mem512}\n"))
    assert {c.plan.job.nodes for c in found} == {1, 2}  # the 2 nodes of that kind
    assert {c.partition.memory_per_node for c in found} == {515000 * 2**20}
    assert all("--constraint=mem512" in c.plan.job.scheduler_options("squeue") for c in found)
    assert found[0].plan.job.to_json()["constraint"] == "mem512"
    with pytest.raises(InputError, match="'mem1024': no node kind has those features"):
        site(KINDS + "job_options: {constraint: mem1024}\n")


def test_every_job_of_the_partition_does_what_it_says_first():
    config = site("prepare_cmds: ['unset SLURM_EXPORT_ENV']\nenv_vars: {FI_PROVIDER: verbs}\nmodules: [site-env]\n",
                  modules_system="lmod")
    part = config["systems"][0]["partitions"][0]
    assert (part["prepare_cmds"], part["env_vars"], part["modules"]) == (
        ["unset SLURM_EXPORT_ENV"], [["FI_PROVIDER", "verbs"]], ["site-env"])
    with pytest.raises(InputError, match="modules: no module would be loaded"):
        site("modules: [site-env]\n")


GPUS = "gpus: {count: 4, memory: 80GB, fp64_tflops: 67, arch: sm_90}\n"


@pytest.mark.parametrize("policy, asked", [("gpu-jobs", {0}), ("every-job", {4})])
def test_a_gpu_partition_asks_for_gpus_on_every_job_where_the_site_says(policy, asked):
    config = site(GPUS.replace("arch: sm_90", f"arch: sm_90, policy: {policy}"))
    found = cases(config, "OSULatencyCheck")
    assert found and {c.plan.job.gpu_request for c in found if c.plan and c.plan.job.nodes > 1} == asked
    if policy == "every-job":
        assert all(c.plan.job.to_json()["gpu_request"] == 4 for c in found if c.plan and c.plan.job.nodes > 1)


@pytest.mark.parametrize("resources, access, features, expected", [
    ([{"name": "_rfm_gpu", "options": ["--gpus-per-node={num_gpus_per_node}"]}], [], [], ("_rfm_gpu", "gpu-jobs")),
    ([{"name": "gpu", "options": ["--gres=gpu:{num_gpus_per_node}"]}], [], [], ("gpu", "gpu-jobs")),
    ([], ["--gpus-per-node=4"], ["always_request_gpus"], ("access", "every-job")),
    ([{"name": "memory", "options": ["--mem={size}"]}], [], [], ("", "gpu-jobs")),
])
def test_a_sites_configuration_says_how_its_jobs_ask_for_gpus(resources, access, features, expected):
    part = {"name": "gpu", "scheduler": "slurm", "launcher": "srun", "environs": ["e"], "access": access,
            "features": features, "resources": resources,
            "devices": [{"type": "gpu", "arch": "sm_90", "num_devices": 4}],
            "processor": {"arch": "zen4", "num_cpus": 64},
            "extras": {"scalebench": {"max_nodes": 4, "memory_per_node": "512GiB", "clock_ghz": 2.7,
                                      "gpus": {"memory": "80GB", "fp64_tflops": 67}}}}
    described = describe({"name": "g", "partitions": [part]},
                         [{"name": "e", "extras": {"scalebench": {"features": ["hpl"]}}}])
    gpus = described.partition("gpu").gpus
    assert (gpus.resource, gpus.policy, gpus.count, gpus.arch) == (*expected, 4, "sm_90")
