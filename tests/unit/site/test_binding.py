"""Every MPI job binds its ranks to their own cores (scalebench.site.binding), as its launcher and MPI
spell it, unless the site or the stack binds them itself; OpenMP threads stay on their rank's cores."""
import pytest

from scalebench.errors import InputError
from scalebench.site import binding, siteconf
from scalebench.site.jobs import job_plan
from scalebench.site.partition import PartitionSpec, StackSpec
from site_files import SITE, run_dir, write  # noqa: F401

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
    assert job.launcher_options == ("--cpu-bind=cores", "--kill-on-bad-exit=1")
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


# --- every MPI a stack may name (scalebench/data/mpis.yaml) under each launcher ---------------------

@pytest.mark.parametrize("features, flavour, family", [
    (("intelmpi",), "intelmpi", "mpich"), (("impi", "hpl"), "intelmpi", "mpich"), (("intel-mpi",), "intelmpi", "mpich"),
    (("mpt",), "mpt", "mpt"), (("hpe-mpt",), "mpt", "mpt"),
    (("cray-mpich",), "cray-mpich", "mpich"), (("craympich",), "cray-mpich", "mpich"),
    (("openmpi",), "openmpi", "openmpi"), (("mpich", "ofi"), "mpich", "mpich"),
    (("cray-mpich", "mpich"), "cray-mpich", "mpich"),  # the derivative, not its family's name
    (("ucx", "hpl"), None, None),
])
def test_a_stacks_features_name_its_mpi(features, flavour, family):
    assert binding.mpi_flavour(features) == flavour
    assert (binding.mpis()[flavour].family if flavour else None) == family


SLURM_BOUND = ("--cpu-bind=cores",)


@pytest.mark.parametrize("launcher, features, cpu_bind, options, env", [
    # srun binds every MPI; what an MPI adds under it
    ("srun", ("intelmpi",), "cores", SLURM_BOUND, {}),  # Intel's pinning respects Slurm's mask
    ("srun", ("cray-mpich",), "cores", SLURM_BOUND, {}),
    ("srun", ("mpt",), "cores", SLURM_BOUND, {"MPI_DSM_DISTRIBUTE": "0"}),  # else one CPU per rank
    ("srun", ("mpt",), "threads", ("--cpu-bind=threads",), {"MPI_DSM_DISTRIBUTE": "0"}),
    # an MPI's own mpirun: Intel's by variables, no Hydra flag
    ("mpirun", ("intelmpi",), "cores", (), {"I_MPI_PIN_CELL": "core", "I_MPI_PIN_DOMAIN": "8:compact"}),
    ("mpiexec", ("impi",), "threads", (), {"I_MPI_PIN_CELL": "unit", "I_MPI_PIN_DOMAIN": "8:compact"}),
    ("mpirun", ("mpt",), "cores", ("omplace", "-nt", "8"), {}),
])
def test_each_mpi_binds_its_ranks_under_each_launcher(launcher, features, cpu_bind, options, env):
    bound = binding.binding(launcher, cpu_bind, features, (), 8, {})
    assert bound.launcher_options == options
    assert {k: v for k, v in bound.env_vars.items() if not k.startswith("OMP_")} == env
    assert bound.env_vars["OMP_NUM_THREADS"] == "8"
    assert not any(word in ("-bind-to", "-map-by", "--bind-to") for word in bound.launcher_options)
    shown = " ".join([*options, *(f"{k}={v}" for k, v in env.items())])
    assert bound.summary.startswith(f"{shown} (8 {cpu_bind} per rank); ")


def test_omplace_places_the_threads_so_openmp_does_not_bind_them_again():
    bound = binding.binding("mpirun", "cores", ("mpt",), (), 4, {})
    assert bound.env_vars == {"OMP_NUM_THREADS": "4"}
    assert bound.summary == "omplace -nt 4 (4 cores per rank); OpenMP threads placed by omplace"
    intel = binding.binding("mpirun", "cores", ("intelmpi",), (), 4, {})
    assert (intel.env_vars["OMP_PLACES"], intel.env_vars["OMP_PROC_BIND"]) == ("cores", "close")


def test_an_mpis_own_binding_variables_from_the_stack_or_shell_replace_scalebenchs():
    bound = binding.binding("mpirun", "cores", ("intelmpi",), (), 8, {"I_MPI_PIN_DOMAIN": "socket"})
    assert bound.launcher_options == () and "I_MPI_PIN_DOMAIN" not in bound.env_vars
    assert bound.summary.startswith("the stack's or shell's I_MPI_PIN_DOMAIN=socket; OMP_PLACES=cores")
    # another MPI's variables are not its binding
    assert binding.binding("srun", "cores", ("openmpi",), (), 8, {"I_MPI_PIN_DOMAIN": "socket"}).launcher_options \
        == SLURM_BOUND


@pytest.mark.parametrize("features, cpu_bind, message", [
    ("[cray-mpich]", "cores", r"stacks\[ompi\]\.features: partition cpu launches with mpirun, which scalebench does "
                              r"not bind for cray-mpich: Cray MPICH is started by srun under Slurm; set the "
                              r"partition's launcher: srun, or cpu_bind: none"),
    ("[mpt]", "threads",
     r"whose binding of mpt has no cpu_bind: threads: set the partition's cpu_bind to cores or none"),
    ("[ucx]", "cores", r"name it in the features \(intelmpi, mpt, cray-mpich, openmpi, mpich\)"),
])
def test_an_mpirun_scalebench_cannot_bind_is_refused_with_the_fix(tmp_path, features, cpu_bind, message):
    text = SITE.replace("launcher: srun", f"launcher: mpirun\n    cpu_bind: {cpu_bind}").replace(
        "env_vars: {OMPI_MCA_pml: ob1}", f"env_vars: {{OMPI_MCA_pml: ob1}}\n    features: {features}")
    with pytest.raises(InputError, match=message) as err:
        siteconf.site_systems(write(tmp_path, text))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("features", ["[intelmpi]", "[impi]", "[intel-mpi]", "[mpt]", "[hpe-mpt]"])
def test_an_mpirun_of_a_bindable_mpi_is_accepted(tmp_path, features):
    text = SITE.replace("launcher: srun", "launcher: mpirun").replace(
        "env_vars: {OMPI_MCA_pml: ob1}", f"features: {features}")
    assert siteconf.site_systems(write(tmp_path, text))


def test_a_stack_setting_its_mpis_binding_variable_binds_its_mpirun_itself(tmp_path):
    text = SITE.replace("launcher: srun", "launcher: mpirun\n    cpu_bind: threads").replace(
        "env_vars: {OMPI_MCA_pml: ob1}", "env_vars: {MPI_DSM_CPULIST: '0-127/8:allhosts'}\n    features: [mpt]")
    assert siteconf.site_systems(write(tmp_path, text))
