"""scalebench.site.jobs: the job of a case, as every check applies it and `scalebench plan` prints it."""
import pytest

from scalebench import schema
from scalebench.errors import InputError
from scalebench.site.jobs import JobPlan, LeftOut, job_plan
from scalebench.site.partition import JobOptions, PartitionSpec, StackSpec
from scalebench.site.scales import Scale, ScaleSpec

GiB = 2**30


def partition(max_nodes=1, cores=2, scheduler="local", **changes):
    spec = PartitionSpec("sys", "part", scheduler, "mpirun", max_nodes, cores, 24 * GiB, "zen3", 2.0, 16)
    return PartitionSpec(**{**spec.__dict__, **changes})


STACK = StackSpec("openmpi-sm", "openmpi-sm", ("hpl",), {"launcher_options": ["--map-by", "slot:PE={threads_per_rank}"]})


def test_a_job_fills_the_scale():
    job = job_plan(partition(), STACK, "1_node")
    assert (job.nodes, job.tasks, job.tasks_per_node, job.threads_per_rank) == (1, 2, 2, 1)
    assert job.stack == "openmpi-sm" and job.spack_lock == ""
    assert job.launcher_options == ("--map-by", "slot:PE=1")
    assert not job.exclusive and job.memory is None  # one node, not HPL: shared as the site allows


def test_sub_node_scale_and_threads():
    assert job_plan(partition(), StackSpec("e", "e", (), {}), "1_core").tasks == 1
    hybrid = job_plan(partition(), STACK, "1_node", threads_per_rank=2)
    assert hybrid.tasks == 1 and hybrid.launcher_options[-1] == "slot:PE=2"


def test_a_scale_the_partition_lacks_is_left_out_with_the_reason():
    with pytest.raises(LeftOut, match=r"^scale 2_nodes is not one of sys:part's scales \(1_core, 1_node\)"):
        job_plan(partition(), STACK, "2_nodes")
    with pytest.raises(LeftOut, match="needs 2 nodes; the partition has 1"):
        job_plan(partition(), STACK, Scale("2_nodes", 2))


def test_a_sub_node_scale_smaller_than_an_explicit_geometry_is_left_out():
    sixteen = partition(cores=16, scale_spec=ScaleSpec(cores=(2,)))
    with pytest.raises(LeftOut, match="scale 2_cores has 2 core\\(s\\); the requested geometry needs 4 per node"):
        job_plan(sixteen, STACK, "2_cores", ranks_per_node=2, threads_per_rank=2)
    assert job_plan(sixteen, STACK, "2_cores", ranks_per_node=2).tasks == 2


def test_a_spack_stack_not_installed_is_left_out(tmp_path):
    extras = {"spack_lock": str(tmp_path / "spack.lock")}
    with pytest.raises(LeftOut, match="^stack s: missing"):
        job_plan(partition(), StackSpec("s", "s", (), extras), "1_node")
    (tmp_path / "spack.lock").write_text('{"roots": [{"hash": "h"}], "concrete_specs": {"h": {"name": "hpl", '
                                         '"version": "2.3", "parameters": {"openmp": true}}}}')
    stack = StackSpec("s", "s", (), extras)  # the next run loads the stack, and its lock, again
    job = job_plan(partition(), stack, "1_node")
    assert job.spack_lock.startswith("sha256:") and job.spack_specs == "hpl@2.3 +openmp"


def test_a_stack_lock_is_read_as_the_stack_is_loaded_not_as_cases_are_planned(tmp_path):
    lock = tmp_path / "spack.lock"
    lock.write_text('{"roots": [{"hash": "h"}], "concrete_specs": {"h": {"name": "hpl", "version": "2.3"}}}')
    stack = StackSpec("s", "s", (), {"spack_lock": str(lock)})
    lock.unlink()  # planning reads nothing: what the stack was loaded with stays its provenance
    assert job_plan(partition(), stack, "1_node").spack_specs == job_plan(partition(), stack, "1_core").spack_specs \
        == "hpl@2.3"
    lock.write_text('{"roots": [{"hash": "h"}], "concrete_specs": {"h": {"name": "hpl", "version": "2.4"}}}')
    assert StackSpec("s", "s", (), {"spack_lock": str(lock)}).lock[1] == "hpl@2.4"  # a changed lock is read again


def test_whole_nodes_and_multi_node_jobs_take_their_nodes():
    cluster = partition(max_nodes=4, cores=128, scheduler="slurm")
    job = job_plan(cluster, STACK, "4_nodes")
    assert job.exclusive and job.memory == "0" and job.hyperthreads is False
    assert job.scheduler_options("slurm") == ["--nodes=4", "--mem=0"]
    assert job.scheduler_options("local") == []
    hpl_one_node = job_plan(cluster, STACK, "1_node", whole_nodes=True)
    assert hpl_one_node.exclusive and hpl_one_node.memory == "0"
    shared = partition(max_nodes=4, cores=128, job_options=JobOptions(exclusive=False, memory="700G",
                                                                       hyperthreads=True))
    job = job_plan(shared, STACK, "2_nodes")
    assert not job.exclusive and job.memory == "700G" and job.hyperthreads


def test_idle_ranks_are_spread_and_never_change_the_node_count():
    job = job_plan(partition(max_nodes=4, cores=128), STACK, "4_nodes").with_tasks(506)
    assert (job.nodes, job.tasks, job.tasks_per_node, job.idle_ranks) == (4, 506, 127, 6)
    assert job.scheduler_options("squeue")[0] == "--nodes=4"
    with pytest.raises(InputError):
        job.with_tasks(513)
    with pytest.raises(LeftOut):
        job.with_tasks(3)


def test_job_options_from_a_site_file():
    assert JobOptions.from_site({"memory": "700GiB"}, "w", 768 * 2**30).memory == f"{700 * 1024}M"
    assert JobOptions.from_site({"memory": None}, "w", 768 * 2**30).memory is None
    with pytest.raises(InputError, match=r"^w.memory: 800.0 GiB is not between 1 MiB and the partition's memory_per_node"):
        JobOptions.from_site({"memory": "800GiB"}, "w", 768 * 2**30)


@pytest.mark.parametrize("options, message", [
    ({"exclusive": "yes"}, "job_options.exclusive: must be true or false, got 'yes'"),
    ({"mem": 0}, r"job_options: unknown key 'mem' \(did you mean 'memory'\?\)"),
])
def test_bad_job_options_in_a_site_file(options, message):
    site = {"system": "s", "partitions": [{"name": "p", "scheduler": "slurm", "launcher": "srun", "max_nodes": 4,
                                           "cores_per_node": 8, "memory_per_node": "8GiB", "environs": ["e"],
                                           "job_options": options}], "stacks": [{"name": "e"}]}
    with pytest.raises(InputError, match=r"^site.yaml: partitions\[p\]\." + message):
        schema.check(site, "site.yaml", "site.yaml")


def test_job_plan_json():
    data = job_plan(partition(), STACK, "1_node").to_json()
    assert data["tasks_per_node"] == 2 and data["idle_ranks"] == 0 and isinstance(data["launcher_options"], list)
    assert JobPlan("1_node", 1, 2, 1, 2).tasks_per_node == 2
