"""scalebench.site.launch: where a job looks for its program, run by a real shell, and how late its
step starts."""
import math
import shlex
import subprocess

from scalebench import programs
from scalebench.site import launch
from scalebench.site.container import ContainerSpec
from scalebench.site.jobs import job_plan
from scalebench.hpl.case_plan import plan_hpl
from scalebench.site.partition import GpuSpec, PartitionSpec, StackSpec

UENV = ("--uenv=prgenv-gnu/24.11:v1", "--view=default")


def test_options_that_only_place_or_bind_ranks_keep_the_environment():
    assert launch.environment_options(("--cpu-bind=cores", "--map-by", "slot:PE=2", "--bind-to", "core",
                                       "--oversubscribe", "--mca", "btl", "^openib", "--kill-on-bad-exit=1")) == ()
    assert launch.environment_options(UENV) == ("--uenv", "--view")
    assert launch.environment_options(("--export=NONE", "-x", "PATH=/opt/bin", "--environment=hpl")) == (
        "--export", "-x", "--environment")
    assert launch.environment_options(("--my-site-plugin=on",)) == ("--my-site-plugin",)  # unknown: may change it


def test_a_container_or_a_uenv_changes_the_steps_environment():
    pyxis = ContainerSpec("pyxis", "nvcr.io#nvidia/hpc-benchmarks:24.03")
    assert launch.step_environment(pyxis, pyxis.launcher_options()) == "container (pyxis)"
    assert launch.step_environment(None, UENV) == "launcher option(s) --uenv, --view"
    assert launch.step_environment(None, ("--cpu-bind=cores",)) == ""


def test_a_rank_that_dies_ends_an_srun_step_unless_the_stack_says_otherwise():
    srun = PartitionSpec("sys", "part", "slurm", "srun", 2, 4, 2**34, "zen3", 2.0, 16)
    mpirun = PartitionSpec("sys", "part", "slurm", "mpirun", 2, 4, 2**34, "zen3", 2.0, 16)
    host = StackSpec("host", "host", ("hpl", "openmpi"), {})
    assert "--kill-on-bad-exit=1" in job_plan(srun, host, "2_nodes").launcher_options
    assert not any("kill" in option for option in job_plan(mpirun, host, "2_nodes").launcher_options)
    own = StackSpec("own", "own", ("hpl",), {"launcher_options": ["-K0"]})
    assert launch.end_on_dead_rank("srun", ("-K", "--mpi=pmix")) == ()
    assert launch.end_on_dead_rank("srun", ("--kill-on-bad-exit=0",)) == ()
    assert launch.end_on_dead_rank("srun", ("--mpi=pmix",)) == ("--kill-on-bad-exit=1",)
    assert job_plan(srun, own, "1_node").launcher_options == ("-K0", "--cpu-bind=cores")


def test_a_job_plan_says_why_its_step_is_not_its_batch_shell():
    part = PartitionSpec("sys", "part", "slurm", "srun", 2, 4, 2**34, "zen3", 2.0, 16)
    uenv = StackSpec("uenv", "uenv", ("hpl",), {"launcher_options": list(UENV)})
    assert job_plan(part, uenv, "1_node").step_environment == "launcher option(s) --uenv, --view"
    assert job_plan(part, StackSpec("host", "host", ("hpl",), {}), "1_node").step_environment == ""


def step(launched, batch_path, step_path):
    """Run a launch as its job would: the prerun lines in a batch shell with PATH=batch_path, the launch
    line's program in a step with PATH=step_path (as srun --uenv --view sets it)."""
    line = " ".join([launched.executable, *launched.args])
    script = "\n".join([*launched.prerun, f"PATH={shlex.quote(step_path)} {line}"])
    return subprocess.run(["bash", "-c", script], env={"PATH": batch_path}, capture_output=True, text=True,
                          timeout=30)


def test_in_the_step_a_program_only_the_step_has_runs(tmp_path):
    only_step = tmp_path / "view" / "bin"
    only_step.mkdir(parents=True)
    program = only_step / "osu_latency"
    program.write_text("#!/bin/sh\necho ran \"$@\"\n")
    program.chmod(0o755)
    batch, in_step = "/usr/bin:/bin", f"{only_step}:/usr/bin:/bin"
    on_host = step(launch.launch("osu_latency", ["-m", "1:8"]), batch, in_step)
    assert on_host.returncode == 127 and programs.missing(on_host.stderr) == "benchmark program not found: osu_latency"
    ran = step(launch.launch("osu_latency", ["-m", "1:8"], in_step=True), batch, in_step)
    assert (ran.returncode, ran.stdout) == (0, "ran -m 1:8\n")


def test_in_the_step_a_missing_program_ends_the_job_naming_it(tmp_path):
    launched = launch.launch("xhpl", [], in_step=True)
    assert launched.prerun == ()  # nothing looked for in the batch shell
    job = step(launched, "/usr/bin:/bin", "/usr/bin:/bin")
    assert job.returncode == 127 and programs.missing(job.stderr) == "benchmark program not found: xhpl"


# --- start-up: a step whose environment is not the batch shell's starts late ----------------------

PYXIS = {"container": {"runtime": "pyxis", "image": "nvcr.io#nvidia/hpc-benchmarks:24.03"}}


def test_the_start_up_grows_with_the_nodes_and_a_stack_may_give_its_own():
    default = launch.startup()
    assert default.seconds(1200) == math.ceil(default.base_s + 1200 * default.per_node_s) > default.seconds(1)
    own = launch.startup({"per_node_s": 0})
    assert own.base_s == default.base_s and own.seconds(1200) == own.seconds(1) == math.ceil(default.base_s)


def test_a_container_or_uenv_job_has_its_start_up_in_its_time_limit():
    part = PartitionSpec("sys", "part", "slurm", "srun", 1200, 64, 2**34, "zen3", 2.0, 16, time_limit_s=3600,
                         max_time_limit_s=4000)
    host = job_plan(part, StackSpec("host", "host", ("hpl",), {}), "16_nodes")
    assert (host.startup_s, host.time_limit_s) == (0, None)  # the partition's default, as before
    for extras in (PYXIS, {"launcher_options": list(UENV)}):
        job = job_plan(part, StackSpec("image", "image", ("hpl",), extras), "16_nodes")
        assert job.startup_s == launch.startup().seconds(16) and job.time_limit_s == 3600 + job.startup_s
        assert job.to_json()["startup_s"] == job.startup_s
    full = job_plan(part, StackSpec("image", "image", ("hpl",), PYXIS), "1200_nodes")
    assert full.time_limit_s == 4000  # within the partition's longest job
    said = {"launcher_options": list(UENV), "startup": {"base_s": 20, "per_node_s": 0}}
    quick = job_plan(part, StackSpec("uenv", "uenv", ("hpl",), said), "16_nodes")
    assert quick.startup_s == 20


def test_hpl_in_an_image_adds_its_start_up_to_the_solve_and_shrinks_n_for_it():
    gpu = PartitionSpec("gpusys", "gpu", "slurm", "srun", 1200, 64, 512 * 2**30, "zen4", 2.7, 16,
                        gpus=GpuSpec(4, 80 * 10**9, 67000.0, "sm_90"), max_time_limit_s=43200)
    extras = {"hpl_binary": "hpl.sh", "hpl_profile": "nvidia-hpl"}
    host = plan_hpl(gpu, StackSpec("host", "host", ("hpl",), extras), "1200_nodes")
    image = plan_hpl(gpu, StackSpec("pyxis", "pyxis", ("hpl",), {**extras, **PYXIS}), "1200_nodes")
    assert image.deck == host.deck and image.job.startup_s == launch.startup().seconds(1200)
    assert image.job.time_limit_s - host.job.time_limit_s == image.job.startup_s
    short = PartitionSpec(**{**gpu.__dict__, "max_time_limit_s": host.job.time_limit_s})
    capped = plan_hpl(short, StackSpec("pyxis", "pyxis", ("hpl",), {**extras, **PYXIS}), "1200_nodes")
    assert capped.deck.n < host.deck.n and capped.job.time_limit_s <= host.job.time_limit_s
