"""Every MPI job binds its ranks to their own cores (scalebench.site.binding), as its launcher and MPI
spell it, unless the site or the stack binds them itself; OpenMP threads stay on their rank's cores."""
import pytest

from scalebench.errors import InputError
from scalebench.site import binding, siteconf
from scalebench.site.jobs import job_plan
from scalebench.site.partition import PartitionSpec, StackSpec
from test_siteconf import SITE, run_dir, write  # noqa: F401

PLACED = {"OMP_NUM_THREADS": "8", "OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}


@pytest.mark.parametrize("launcher, features, options", [
    ("srun", ("openmpi",), ("--cpu-bind=cores",)),
    ("srun", ("mpich",), ("--cpu-bind=cores",)),  # srun binds whatever the MPI
    ("mpirun", ("openmpi",), ("--map-by", "slot:PE=8", "--bind-to", "core")),
    ("mpiexec", ("mpich", "ucx"), ("-bind-to", "core:8", "-map-by", "core:8")),
])
def test_each_launcher_binds_ranks_to_their_cores(launcher, features, options):
    bound = binding.binding(launcher, "cores", features, (), 8, {})
    assert bound.launcher_options == options and bound.env_vars == PLACED
    assert " ".join(options) in bound.summary and "8 cores per rank" in bound.summary


def test_hardware_threads_when_the_partition_says_so():
    bound = binding.binding("mpirun", "threads", ("openmpi",), (), 2, {})
    assert bound.launcher_options == ("--map-by", "slot:PE=2", "--bind-to", "hwthread")
    assert bound.env_vars["OMP_PLACES"] == "threads"


def test_the_site_and_the_stack_may_bind_themselves():
    none = binding.binding("srun", "none", ("openmpi",), (), 8, {})
    assert none.launcher_options == () and none.env_vars == {"OMP_NUM_THREADS": "8"}
    assert "cpu_bind: none" in none.summary
    own = binding.binding("srun", "cores", (), ("--cpu-bind=map_cpu:0,64",), 8, {})
    assert own.launcher_options == () and "the stack's launcher_options (--cpu-bind=map_cpu:0,64)" in own.summary


def test_openmp_placement_from_the_stack_or_shell_is_kept_but_never_the_thread_count():
    bound = binding.binding("srun", "cores", (), (), 4, {"OMP_PROC_BIND": "spread", "OMP_NUM_THREADS": "64"})
    assert bound.env_vars == {"OMP_NUM_THREADS": "4", "OMP_PLACES": "cores"}  # the shell's spread is exported already
    assert "OMP_PROC_BIND=spread" in bound.summary


def test_a_job_carries_its_binding():
    partition = PartitionSpec("s", "p", "slurm", "srun", 4, 64, 2**38, "zen3", 2.0, 16)
    stack = StackSpec("e", "e", ("openmpi",), {}, {"OMP_PLACES": "sockets"})
    job = job_plan(partition, stack, "2_nodes", threads_per_rank=8, environ={"OMP_PROC_BIND": "spread"})
    assert job.launcher_options == ("--cpu-bind=cores",)
    assert job.env_vars == {"OMP_NUM_THREADS": "8"}  # the stack's OMP_PLACES, the shell's OMP_PROC_BIND
    assert job.to_json()["binding"] == job.binding and "OMP_PLACES=sockets OMP_PROC_BIND=spread" in job.binding


def test_an_mpirun_of_an_unnamed_mpi_is_refused(tmp_path):
    text = SITE.replace("launcher: srun", "launcher: mpirun")
    with pytest.raises(InputError, match=r"stacks\[ompi\]\.features: partition cpu launches with mpirun, whose "
                                         r"rank binding depends on the MPI: name it in the features"):
        siteconf.site_systems(write(tmp_path, text))
    named = text.replace("env_vars: {OMPI_MCA_pml: ob1}", "env_vars: {OMPI_MCA_pml: ob1}\n    features: [openmpi]")
    assert siteconf.site_systems(write(tmp_path, named))
    unbound = text.replace("    launcher: mpirun", "    launcher: mpirun\n    cpu_bind: none")
    assert siteconf.site_systems(write(tmp_path, unbound))
