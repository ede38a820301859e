"""scalebench.site.launch: where a job looks for its program, run by a real shell."""
import shlex
import subprocess

from scalebench import programs
from scalebench.site import launch
from scalebench.site.container import ContainerSpec
from scalebench.site.jobs import job_plan
from scalebench.site.partition import PartitionSpec, StackSpec

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
