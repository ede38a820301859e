"""Jobs a real site accepts, read in the job scripts ReFrame writes (rfm_job.sh), not in plan fields:
a program is looked for where it runs (a uenv mounted only in the step: tests/data/sites/uenv.yaml);
transport evidence is printed only where a stack declares a transport, by two ranks of any job
(tests/data/sites/evidence.yaml, and the full-system HPL of the 1,024-node zen4-ib archetype); a
container's or a uenv's start-up is in the time limit (the pyxis and Apptainer HPL of gpu-h100.yaml).

Dry runs with real ReFrame and site_configs/slurm.py, as test_dry_run_sites.py runs them, restricted
to the checks each test reads; one real run on the embedded default proves the lookup in the step.
"""
import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import (LOCAL_SITE, REPO, VENV_BIN, lmod_environ, local_scales, require_cores, require_tools, run_reframe,
                      sbatch)
from scalebench import programs
from scalebench.site import launch
from scalebench.site.fabric import transports

pytestmark = pytest.mark.integration

SITES = REPO / "tests" / "data" / "sites"
UENV = ["--uenv=prgenv-gnu/24.11:v1", "--view=default"]


def dry_run(site, run_dir, *options, environ=None):
    """{(display name, stack): (case of ReFrame's report, its job script)} of a dry run on `site`."""
    system = yaml.safe_load(site.read_text())["system"]
    env = dict(environ or os.environ, SCALEBENCH_SITE=str(site), SCALEBENCH_RUN_DIR=str(run_dir))
    command = [str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / "slurm.py"),
               "-c", str(REPO / "reframe_tests"), "--system", system, "--dry-run", "--exec-policy=serial", *options]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((run_dir / "report.json").read_text())
    cases = [case for run in report["runs"] for case in run["testcases"]]
    assert cases
    return {(case["display_name"], case["environ"]): (case, _script(case)) for case in cases}


def _script(case):
    path = os.path.join(case["stagedir"] or "", "rfm_job.sh")
    return open(path).read() if case["result"] == "pass" else ""


def program_launch(script):
    """The launch of the program: the job script's srun line that is not the node probe's step."""
    return next(line for line in script.splitlines() if line.startswith("srun ") and "--overlap" not in line.split())


def step_script(launch):
    """The script `sh -c` runs in the launched step (the word after -c)."""
    words = shlex.split(launch)
    return words[words.index("-c") + 1]


# --- 1. the program is looked for where it runs ---------------------------------------------------

@pytest.fixture(scope="module")
def uenv_jobs(tmp_path_factory):
    return dry_run(SITES / "uenv.yaml", tmp_path_factory.mktemp("uenv") / "run", "-n",
                   r"HPLCheck%scale=2_nodes$|OSULatencyCheck%placement=inter_node|OSUCollectiveCheck.*osu_allreduce"
                   r"|LAMMPSCheck%scale=1_node%workload=lj%scaling=strong")


@pytest.mark.parametrize("name, program", [("HPLCheck %scale=2_nodes", "xhpl"),
                                           ("OSULatencyCheck %placement=inter_node", "osu_latency"),
                                           ("OSUCollectiveCheck %placement=whole_nodes %benchmark=osu_allreduce",
                                            "osu_allreduce")])
def test_a_uenv_job_looks_for_its_program_inside_the_step(uenv_jobs, name, program):
    """srun --uenv mounts the programs only in the step: the batch shell never looks for them, the
    launched command does, and a missing one ends the job there with exit 127 and the line sanity reads."""
    case, script = uenv_jobs[name, "prgenv-gnu"]
    assert case["result"] == "pass", case["fail_reason"]
    launch = program_launch(script)
    batch_shell = script.split(launch)[0]
    assert "command -v" not in batch_shell and programs.PROGRAM_VARIABLE not in batch_shell
    words = shlex.split(launch)
    assert set(UENV) <= set(words)
    inner = step_script(launch)
    assert f"command -v {program}" in inner
    step = subprocess.run(["sh", "-c", inner, "scalebench"], env={"PATH": "/usr/bin:/bin"}, capture_output=True,
                          text=True, timeout=30)
    assert step.returncode == 127 and programs.missing(step.stderr) == f"benchmark program not found: {program}"


def test_a_uenv_stacks_applications_are_left_out_naming_why(uenv_jobs):
    """LAMMPS probes its binary (lmp -h) in the batch shell, where the uenv is not mounted."""
    name = "LAMMPSCheck %scale=1_node %workload=lj %scaling=strong"
    case, _ = uenv_jobs[name, "prgenv-gnu"]
    log = (Path(case["stagedir"]).parents[4] / "reframe.log").read_text()  # ReFrame keeps a skip's reason there
    skipped = next(line for line in log.splitlines() if "SKIP" in line and name in line)
    assert case["result"] == "skip" and "(launcher option(s) --uenv, --view)" in skipped


def test_a_program_only_the_step_has_is_found_and_a_missing_one_named_from_the_step(tmp_path):
    """The embedded default, for real: a stack whose launcher gives the step a PATH of its own (Open MPI's
    mpirun -x PATH=...) runs NetPIPE from a directory only the step has, and fails HPL naming the program
    that the step does not have either."""
    require_tools("mpirun", "NPopenmpi")
    require_cores(2)
    step_bin = tmp_path / "step-bin"
    step_bin.mkdir()
    (step_bin / "NPstep").symlink_to(subprocess.run(["sh", "-c", "command -v NPopenmpi"], capture_output=True,
                                                    text=True, check=True).stdout.strip())
    site = yaml.safe_load(LOCAL_SITE.read_text())
    site["stacks"] = [{"name": "openmpi-step", "features": ["openmpi", "netpipe", "hpl"],
                       "launcher_options": ["-x", f"PATH={step_bin}:$PATH"], "netpipe_binary": "NPstep",
                       "hpl_binary": "xhpl-the-step-lacks",
                       "env_vars": {"OMPI_ALLOW_RUN_AS_ROOT": 1, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": 1}}]
    site["partitions"][0]["environs"] = ["openmpi-step"]
    (tmp_path / "site.yaml").write_text(yaml.safe_dump(site))
    run_dir = tmp_path / "run"
    env = {**os.environ, "SCALEBENCH_SITE": str(tmp_path / "site.yaml")}
    proc = run_reframe(run_dir, "-r", "-n", "^NetPIPECheck%placement=intra_node$", "-S", "max_bytes=1024",
                       checks="microbench.py", env=env)
    case = json.loads((run_dir / "report.json").read_text())["runs"][-1]["testcases"][0]
    assert case["result"] == "pass", proc.stdout[-3000:]  # looked for in the batch shell, it would be missing
    run_dir = tmp_path / "hpl"
    proc = run_reframe(run_dir, "-r", "-n", f"HPLCheck%scale={local_scales()[0]}$", env=env)
    case = json.loads((run_dir / "report.json").read_text())["runs"][-1]["testcases"][0]
    assert case["fail_phase"] == "sanity", proc.stdout[-3000:]
    assert case["fail_reason"].endswith("benchmark program not found: xhpl-the-step-lacks")


# --- 2. transport evidence only where a transport is declared, from two ranks ---------------------

EVIDENCE = list(transports().evidence_env)


def printing_ranks(script):
    """The ranks the launched command exports the evidence variables in, as the job script says, and
    the variables, e.g. ([0, 16383], {'UCX_LOG_LEVEL': 'info', ...})."""
    inner = step_script(program_launch(script))
    match = re.search(r"case \S+ in ([\d|]+)\) export ([^;]+);; esac", inner)
    assert match, inner
    return [int(rank) for rank in match[1].split("|")], dict(word.split("=", 1) for word in match[2].split())


def evidence_seen(launch, rank):
    """UCX_LOG_LEVEL as the program of the launched step's rank `rank` (srun's SLURM_PROCID) sees it: the
    launch line's `sh -c` script, run with a program that prints it in place of the benchmark's."""
    assert step_script(launch).endswith('exec "$@"')  # the host's program comes after the script
    proc = subprocess.run(["sh", "-c", step_script(launch), "scalebench", "sh", "-c", 'echo "${UCX_LOG_LEVEL:-}"'],
                          env={"PATH": "/usr/bin:/bin", "SLURM_PROCID": str(rank)}, capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.fixture(scope="module")
def evidence_jobs(tmp_path_factory):
    return dry_run(SITES / "evidence.yaml", tmp_path_factory.mktemp("evidence") / "run", "-n",
                   r"HPLCheck%scale=(1_node|16_nodes)$|OSULatencyCheck%placement=inter_node")


def test_a_stack_without_a_transport_sets_no_evidence_variable(evidence_jobs):
    jobs = [(case, script) for case, script in evidence_jobs.values() if case["environ"] == "intel-mpi"]
    assert len(jobs) == 3
    for case, script in jobs:
        assert not [name for name in EVIDENCE if name in script], case["display_name"]


@pytest.mark.parametrize("stack", ["openmpi-ucx", "openmpi-pyxis"])
def test_only_the_first_and_last_rank_print_the_transport(evidence_jobs, stack):
    """On the host and in an image alike: the batch shell exports none of the variables, the launched
    command exports them in rank 0 and the last rank alone."""
    jobs = [(case, script) for case, script in evidence_jobs.values()
            if case["environ"] == stack and case["num_tasks"] > 1]
    assert jobs
    for case, script in jobs:
        launch = program_launch(script)
        assert not [name for name in EVIDENCE if name in script.split(launch)[0]], case["display_name"]
        tasks = int(sbatch(script)["--ntasks"])
        ranks, variables = printing_ranks(script)
        assert ranks == [0, tasks - 1] and variables == transports().evidence_env, case["display_name"]
        if stack == "openmpi-ucx":  # run as its ranks would: the variables reach ranks 0 and tasks-1 only
            seen = {rank: evidence_seen(launch, rank) for rank in (0, 1, tasks - 1)}
            assert seen == {0: "info", 1: "" if tasks > 2 else "info", tasks - 1: "info"}


@pytest.fixture(scope="module")
def zen4_full_hpl(tmp_path_factory):
    site = REPO / "site_configs" / "sites" / "archetypes" / "zen4-ib.yaml"
    environ = dict(lmod_environ(), SCALEBENCH_MODULE_STUBS="1")  # its stacks load Lmod modules
    return dry_run(site, tmp_path_factory.mktemp("zen4") / "run", "-n", r"HPLCheck%scale=1024_nodes$",
                   environ=environ)


def test_the_full_system_hpl_writes_a_few_kb_of_evidence(zen4_full_hpl):
    """The 1,024-node, 16,384-rank HPL of the shipped 1,000+ node archetype: two ranks print, at the
    measured bytes of its declared transport's layer (transports.yaml), whatever the rank count."""
    jobs = {case["environ"]: script for case, script in zen4_full_hpl.values()}
    assert set(jobs) == {"openmpi-ucx", "mpich-ofi"}
    assert not [name for name in EVIDENCE if name in jobs["mpich-ofi"]]  # no transport declared
    script = jobs["openmpi-ucx"]
    tasks = int(sbatch(script)["--ntasks"])
    ranks, _ = printing_ranks(script)
    assert tasks == 16384 and ranks == [0, 16383]
    volume = transports().volumes["ucx"]  # the stack declares ucx:ib
    assert len(ranks) * (volume.per_rank_bytes + volume.per_peer_bytes * (tasks - 1)) < 4 * 2**20


@pytest.mark.parametrize("site", sorted((REPO / "site_configs" / "sites" / "archetypes").glob("*.yaml")),
                         ids=lambda path: path.stem)
def test_plan_estimates_at_most_a_few_mb_of_evidence_for_any_shipped_job(site):
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "plan", str(site), "--json"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    most = json.loads(proc.stdout)["transport_evidence"]
    assert most is None or most["estimated_bytes"] < 4 * 2**20, most


# --- 3. a container's or a uenv's start-up is in the time limit ------------------------------------

def seconds(time_option):
    hours, minutes, secs = (int(v) for v in time_option.split(":"))
    return 3600 * hours + 60 * minutes + secs


@pytest.fixture(scope="module")
def gpu_hpl(tmp_path_factory):
    site = REPO / "site_configs" / "sites" / "archetypes" / "gpu-h100.yaml"
    return dry_run(site, tmp_path_factory.mktemp("gpu") / "run", "-n", r"HPLCheck%scale=(1_node|128_nodes)$")


@pytest.mark.parametrize("image", ["hpl-pyxis", "hpl-apptainer"])
@pytest.mark.parametrize("scale, nodes", [("1_node", 1), ("128_nodes", 128)])
def test_an_image_jobs_time_limit_adds_its_start_up_to_the_same_solve(gpu_hpl, image, scale, nodes):
    """NVIDIA's HPL on the host and from its image solve the same deck; the image's job asks for the
    start-up more: every node pulls and unpacks the image first (launch.yaml's default at that node count)."""
    host_case, host = gpu_hpl[f"HPLCheck %scale={scale}", "nvhpc-hpl"]
    case, script = gpu_hpl[f"HPLCheck %scale={scale}", image]
    assert host_case["result"] == case["result"] == "pass"
    deck = (Path(case["stagedir"]) / "HPL.dat").read_text()
    assert deck == (Path(host_case["stagedir"]) / "HPL.dat").read_text()
    added = seconds(sbatch(script)["--time"]) - seconds(sbatch(host)["--time"])
    assert added == launch.startup().seconds(nodes) and int(sbatch(script)["--nodes"]) == nodes


def test_a_uenv_jobs_time_limit_adds_its_start_up(uenv_jobs, tmp_path):
    """OSU's limit is the partition's default (1h) plus the start-up; HPL's, its own plus the start-up:
    the same site with the stack's start-up said to be none asks for exactly that less."""
    site = yaml.safe_load((SITES / "uenv.yaml").read_text())
    assert site["partitions"][0]["time_limit"] == "1h"
    _, osu = uenv_jobs["OSULatencyCheck %placement=inter_node", "prgenv-gnu"]
    assert seconds(sbatch(osu)["--time"]) == 3600 + launch.startup().seconds(2)
    site["stacks"][0]["startup"] = {"base_s": 0, "per_node_s": 0}
    (tmp_path / "uenv.yaml").write_text(yaml.safe_dump(site))
    instant = dry_run(tmp_path / "uenv.yaml", tmp_path / "run", "-n", r"HPLCheck%scale=2_nodes$")
    _, hpl = uenv_jobs["HPLCheck %scale=2_nodes", "prgenv-gnu"]
    _, hpl_instant = instant["HPLCheck %scale=2_nodes", "prgenv-gnu"]
    assert seconds(sbatch(hpl)["--time"]) - seconds(sbatch(hpl_instant)["--time"]) == launch.startup().seconds(2)
