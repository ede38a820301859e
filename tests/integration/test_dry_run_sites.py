"""ReFrame's dry run over every check, scale and stack of realistic sites: what it writes (job
scripts, decks) is what a real run would submit, so its invariants are checked on those files,
computed here from the site file alone, and the cases are exactly those `scalebench plan` lists.

Sites: the archetypes of site_configs/sites/archetypes/ (Zen 4 + InfiniBand at 1024 nodes, Ice
Lake + RoCE, A64FX, a 4-GPU partition, the seed study's 36-node 10 GbE cluster), the shipped
example, and the embedded default as a 4-, 16- and 64-core machine (the documented override of
host detection: a copy of site_configs/sites/local.yaml). Every other shipped site (the embedded
default itself, the throwaway test clusters) is held to its planned cases alone.
"""
import concurrent.futures
import json
import math
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, VENV_BIN, lmod_environ, sbatch
from scalebench.cli.cases import settings_of
from scalebench.hpl.deck import load_rules
from scalebench.site.siteconf import site_systems
from scalebench.check import Settings
from scalebench.site_plan import CHECKS, Filters, plan_cases, site_specs
from scalebench.units import parse_duration, parse_size

pytestmark = pytest.mark.integration

ARCHETYPES = REPO / "site_configs" / "sites" / "archetypes"
SITES = {path.stem: path for path in sorted(ARCHETYPES.glob("*.yaml"))}
SITES["example"] = REPO / "site_configs" / "sites" / "example.yaml"
# The other shipped sites: their dry runs only list their cases (their jobs are not Slurm's or are tiny).
OTHER_SITES = {path.stem: path for path in sorted((REPO / "site_configs" / "sites").glob("*.yaml"))
               if path.stem not in SITES}
LOCAL_CORES = (4, 16, 64)
RULES = load_rules()


def local_site(tmp_path, cores):
    data = yaml.safe_load((REPO / "site_configs" / "sites" / "local.yaml").read_text())
    data["partitions"][0].update(cores_per_node=cores, memory_per_node="192GiB")
    path = tmp_path / f"local-{cores}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def dry_run(name, site, run_dir, environ, *options):
    system = yaml.safe_load(site.read_text())["system"]
    config = "local.py" if name.startswith("local") else "slurm.py"
    # Off the cluster, the sites' Lmod modules are stubs (scalebench.site.modules): the job scripts
    # load them as a real run would.
    env = dict(environ, SCALEBENCH_SITE=str(site), SCALEBENCH_RUN_DIR=str(run_dir), SCALEBENCH_MODULE_STUBS="1")
    command = [str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / config),
               "-c", str(REPO / "reframe_tests"), "-c", str(REPO / "reframe_tests" / "tuning"),
               "--system", system, "--dry-run", "--exec-policy=serial", *options]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory):
    """{name: (site file, run directory, reframe's exit status and output)}, two dry runs at a time."""
    base = tmp_path_factory.mktemp("dry")
    sites = dict(SITES, **OTHER_SITES, **{f"local-{c}": local_site(base, c) for c in LOCAL_CORES})
    environ = lmod_environ()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(dry_run, name, site, base / name / "run", environ) for name, site in sites.items()}
        return {name: (sites[name], base / name / "run", futures[name].result()) for name in sites}


def planned(site):
    partitions, stacks, environs = site_specs(site_systems(site))
    return plan_cases(partitions, stacks, environs, Settings(), Filters(), checks=list(CHECKS))


def cases_of(run_dir):
    report = json.loads((run_dir / "report.json").read_text())
    return [case for run in report["runs"] for case in run["testcases"]]


def hpl_dat(text):
    lines = text.splitlines()
    count = int(lines[4].split()[0])
    ns = [int(v) for v in lines[5].split()[:count]]
    nbs = [int(v) for v in lines[7].split()[:int(lines[6].split()[0])]]
    grids = int(lines[9].split()[0])
    ps = [int(v) for v in lines[10].split()[:grids]]
    qs = [int(v) for v in lines[11].split()[:grids]]
    return ns, nbs, list(zip(ps, qs))


@pytest.mark.parametrize("name", [*SITES, *OTHER_SITES, *(f"local-{c}" for c in LOCAL_CORES)])
def test_dry_run_passes_and_runs_exactly_the_planned_cases(dry_runs, name):
    site, run_dir, proc = dry_runs[name]
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    cases = cases_of(run_dir)
    assert [c for c in cases if c["result"] not in ("pass", "skip")] == []  # no hook raised
    ran = {(c["display_name"], c["partition"], c["environ"]): c for c in cases}
    plan = {(p.display_name, p.partition.name, p.stack.name): p for p in planned(site)}
    assert set(ran) == set(plan)
    for key, case in plan.items():
        if case.left_out:
            assert ran[key]["result"] == "skip" and case.left_out in ran[key]["fail_reason"], key
        else:
            assert ran[key]["result"] == "pass", (key, ran[key]["fail_reason"])


def program_launch(script: str) -> str:
    """The job script's launch of the program: its srun line that is not the node probe's step
    (`srun --overlap`, scalebench.nodeprobe.job)."""
    return next(line for line in script.splitlines() if line.startswith("srun ") and "--overlap" not in line.split())

@pytest.mark.parametrize("name", [*SITES])
def test_every_job_script_asks_slurm_for_what_the_scale_needs(dry_runs, name):
    site, run_dir, _ = dry_runs[name]
    partitions = {p["name"]: p for p in yaml.safe_load(site.read_text())["partitions"]}
    checked = 0
    for case in cases_of(run_dir):
        if case["result"] != "pass" or case["display_name"].startswith("HPLScalingCheck"):
            continue
        part = partitions[case["partition"]]
        options = sbatch((Path(case["stagedir"]) / "rfm_job.sh").read_text())
        nodes, tasks = int(options["--nodes"]), int(options["--ntasks"])
        per_node = int(options["--ntasks-per-node"])
        scale = case.get("scale")
        if scale:  # a scaling check: the scale's node count, whatever the grid leaves idle
            assert nodes == (int(scale.split("_")[0]) if scale.endswith(("node", "nodes")) else 1), case["display_name"]
        assert 1 <= nodes <= part["max_nodes"] and nodes <= tasks <= nodes * per_node, case["display_name"]
        assert tasks * int(options["--cpus-per-task"]) <= nodes * part["cores_per_node"]
        if "--time" not in options:  # Slurm's default for the partition, which the site file leaves to it
            assert "time_limit" not in part and not case["display_name"].startswith("HPL"), case["display_name"]
        else:
            hours, minutes, seconds = (int(v) for v in options["--time"].split(":"))
            if "--reservation" in options:  # a job in the partition's reservation may last as long as it
                assert options["--reservation"] == part["reservation"]["name"]
                assert 3600 * hours + 60 * minutes + seconds <= parse_duration(part["reservation"]["time_limit"])
            elif "max_time_limit_s" in part:
                assert 3600 * hours + 60 * minutes + seconds <= parse_duration(part["max_time_limit_s"])
        if case["display_name"].startswith("HPL") or nodes > 1:  # whole nodes, as the site's job_options say
            sharing = part.get("job_options", {})
            memory = sharing.get("memory", "whole")
            assert options.get("--exclusive", False) is sharing.get("exclusive", True)
            assert options.get("--hint") == ("multithread" if sharing.get("hyperthreads") else "nomultithread")
            assert options.get("--mem") == ("0" if memory == "whole" else f"{parse_size(memory) // 2**20}M")
        checked += 1
    assert checked > 0


def memory_ranks_own(part, cores_used):
    """Bytes one node gives a case, from the site file alone: its GPUs' memory for a GPU binary,
    else the node's memory, or the share of the cores a sub-node scale uses."""
    if "gpus" in part:
        return part["gpus"]["count"] * parse_size(part["gpus"]["memory"])
    return parse_size(part["memory_per_node"]) * min(cores_used, part["cores_per_node"]) // part["cores_per_node"]


@pytest.mark.parametrize("name", [*SITES, *(f"local-{c}" for c in LOCAL_CORES)])
def test_every_hpl_deck_matches_its_job_and_fits_the_memory_its_ranks_own(dry_runs, name):
    site, run_dir, _ = dry_runs[name]
    partitions = {p["name"]: p for p in yaml.safe_load(site.read_text())["partitions"]}
    decks = 0
    for case in cases_of(run_dir):
        if case["result"] != "pass" or not case["display_name"].startswith(("HPLCheck", "HPLTuneCheck")):
            continue
        stage = Path(case["stagedir"])
        deck_file = stage / ("hpccinf.txt" if (stage / "hpccinf.txt").exists() else "HPL.dat")
        ns, nbs, grids = hpl_dat(deck_file.read_text())
        tasks, per_node = case["num_tasks"], case["num_tasks_per_node"]
        if case["display_name"].startswith("HPLTuneCheck"):
            assert all(p * q <= tasks and p <= q or p * q < tasks for p, q in grids)
        else:
            assert len(grids) == 1 and grids[0][0] * grids[0][1] == tasks, case["display_name"]
            assert grids[0][0] <= grids[0][1]
        part = partitions[case["partition"]]
        cores_used = per_node * case["num_cpus_per_task"]
        for n in ns:
            assert len(nbs) > 1 or n % nbs[0] == 0  # a single deck's N holds whole blocks
            for p, q in grids:
                busiest = math.ceil(p * q / case["num_nodes"])
                matrix_on_busiest_node = n * n * 8 * busiest / (p * q)
                assert matrix_on_busiest_node <= RULES.memory_fraction * memory_ranks_own(part, cores_used) * 1.0001
        decks += 1
    assert decks > 0


def test_the_seed_cluster_reproduces_table_1s_process_grids(dry_runs):
    """The study ran one rank per node on all ranks; its Table 1 gives 4x7 at 28 and 4x8 at 32
    nodes, the squarest P <= Q grid of each count."""
    _, run_dir, _ = dry_runs["seed-10gbe"]
    table_1 = {2: (1, 2), 4: (2, 2), 6: (2, 3), 8: (2, 4), 10: (2, 5), 12: (3, 4), 16: (4, 4), 18: (3, 6),
               20: (4, 5), 24: (4, 6), 25: (5, 5), 28: (4, 7), 30: (5, 6), 32: (4, 8), 36: (6, 6)}
    grids = {}
    for case in cases_of(run_dir):
        if case["display_name"].startswith("HPLCheck") and case["result"] == "pass":
            grids[case["num_nodes"]] = hpl_dat((Path(case["stagedir"]) / "HPL.dat").read_text())[2][0]
            assert case["num_tasks"] == case["num_nodes"] and case["num_cpus_per_task"] == 8
    assert grids == table_1


def test_gpu_hpl_runs_one_rank_per_gpu_with_the_vendor_binary(dry_runs):
    _, run_dir, _ = dry_runs["gpu-h100"]
    hpl = [c for c in cases_of(run_dir) if c["display_name"].startswith("HPLCheck") and c["result"] == "pass"]
    assert hpl
    for case in hpl:
        script = (Path(case["stagedir"]) / "rfm_job.sh").read_text()
        assert case["num_tasks_per_node"] == 4 and "#SBATCH --gres=gpu:h100:4" in script  # the GRES type asked for
        launch = re.search(r"^srun .*hpl\.sh.* --dat HPL\.dat$", script, re.MULTILINE)  # in an image or not
        assert launch and "--gpu-bind=map_gpu:0,1,2,3" in launch.group(0).split(), script  # one GPU per rank
        assert "ignores pfact, bcast" in case["deck_source"]


def test_a_benchmarks_knob_reaches_its_job_scripts_as_plan_says(tmp_path):
    """-S osu_buffers=device, OSU's benchmark's knob: every OSU job on the GPU partition passes its buffers on
    the devices (-d cuda D D), one GPU per rank, as `scalebench plan -S osu_buffers=device` lists."""
    site = SITES["gpu-h100"]
    proc = dry_run("gpu-h100", site, tmp_path / "run", lmod_environ(), "-n", "OSU", "-S", "osu_buffers=device")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    partitions, stacks, environs = site_specs(site_systems(site))
    plan = {(p.display_name, p.partition.name, p.stack.name): p.plan
            for p in plan_cases(partitions, stacks, environs, settings_of(["osu_buffers=device"]), Filters(("OSU",)))
            if p.plan and p.plan.job}
    checked = 0
    for case in cases_of(tmp_path / "run"):
        planned_case = plan.get((case["display_name"], case["partition"], case["environ"]))
        if case["result"] != "pass" or planned_case is None or case["partition"] != "gpu":
            continue
        launch = program_launch((Path(case["stagedir"]) / "rfm_job.sh").read_text()).split()
        assert planned_case.args[:2] == ("-d", "cuda")
        assert launch[-len(planned_case.args):] == list(planned_case.args), (case["display_name"], launch)
        assert any(word.startswith("--gpu-bind=map_gpu:") for word in launch), launch
        checked += 1
    assert checked > 0


def test_screening_takes_a_few_short_jobs_on_every_core(dry_runs):
    """1024 nodes in chunks of at most 512 (site_configs/screening.yaml): two jobs of ten minutes at
    most, one probe rank per core, ended at once by a rank that dies."""
    _, run_dir, _ = dry_runs["zen4-ib"]
    jobs = [c for c in cases_of(run_dir) if c["display_name"].startswith("ScreeningCheck") and c["result"] == "pass"]
    assert len(jobs) == 2
    for case in jobs:
        script = (Path(case["stagedir"]) / "rfm_job.sh").read_text()
        options = sbatch(script)
        assert (options["--nodes"], options["--ntasks"], options["--ntasks-per-node"]) == ("512", "65536", "128")
        hours, minutes, seconds = (int(v) for v in options["--time"].split(":"))
        assert 3600 * hours + 60 * minutes + seconds <= 600
        # the launched command exports the transport evidence in the first and last rank (test_dry_run_jobs.py)
        assert re.search(r"^srun .*--kill-on-bad-exit=1 sh -c '.*' scalebench screen-probe --dgemm-n \d+ ", script,
                         re.MULTILINE), script
        assert "export OPENBLAS_NUM_THREADS=1" in script


def test_the_full_system_hpl_runs_in_its_reservation(dry_runs):
    _, run_dir, _ = dry_runs["zen4-ib"]
    cases = {c["display_name"]: c for c in cases_of(run_dir)}
    full = cases["HPLCheck %scale=1024_nodes"]
    options = sbatch((Path(full["stagedir"]) / "rfm_job.sh").read_text())
    assert (options["--nodes"], options["--ntasks"], options["--ntasks-per-node"]) == ("1024", "16384", "16")
    assert options["--reservation"] == "fullsystem" and "capped to N=" not in full["n_policy"]
    hours = int(shlex.split(options["--time"].replace(":", " "))[0])
    assert 24 < hours <= 72  # longer than the partition's day, within the reservation's three
    half = sbatch((Path(cases["HPLCheck %scale=512_nodes"]["stagedir"]) / "rfm_job.sh").read_text())
    assert "--reservation" not in half  # smaller cases run in the partition


@pytest.mark.parametrize("name", [*SITES])
def test_every_job_loads_its_stacks_modules_and_binds_its_ranks(dry_runs, name):
    site, run_dir, _ = dry_runs[name]
    data = yaml.safe_load(site.read_text())
    modules = {stack["name"]: stack.get("modules", []) for stack in data["stacks"]}
    checked = 0
    for case in cases_of(run_dir):
        if case["result"] != "pass" or case["display_name"].startswith("HPLScalingCheck"):
            continue
        script = (Path(case["stagedir"]) / "rfm_job.sh").read_text()
        loads = re.findall(r"^module load (\S+)$", script, re.MULTILINE)
        assert loads == modules[case["environ"]], (case["display_name"], loads)
        launch = program_launch(script)
        assert "--cpu-bind=cores" in launch.split() and f"--cpus-per-task={case['num_cpus_per_task']}" in launch
        assert f"export OMP_NUM_THREADS={case['num_cpus_per_task']}" in script
        checked += 1
    assert checked > 0


def test_a_containerised_hpl_looks_for_its_program_inside_the_image(dry_runs):
    _, run_dir, _ = dry_runs["gpu-h100"]
    checked = set()
    for case in cases_of(run_dir):
        if not case["display_name"].startswith("HPLCheck") or case["result"] != "pass":
            continue
        script = (Path(case["stagedir"]) / "rfm_job.sh").read_text()
        launch = program_launch(script)
        if case["environ"] == "nvhpc-hpl":  # on the host: the job checks the program before launching it
            assert "command -v hpl.sh" in script and launch.endswith(" hpl.sh --dat HPL.dat")
            continue
        # in the image: no check on the host (hpl.sh is not there), the launched command checks
        assert "command -v" not in script.split(launch)[0], case["display_name"]
        words = shlex.split(launch)
        inner = words[words.index("-c") + 1]
        assert "command -v /workspace/hpl.sh" in inner and 'exec "$SCALEBENCH_PROGRAM" "$@"' in inner
        assert words[-3:] == ["scalebench", "--dat", "HPL.dat"] and "--gpu-bind=map_gpu:0,1,2,3" in words
        if case["environ"] == "hpl-pyxis":
            assert "--container-image=nvcr.io#nvidia/hpc-benchmarks:24.03" in words
            assert "--container-mounts=$PWD:$PWD" in words and "--container-workdir=$PWD" in words
        else:
            start = words.index("apptainer")
            assert words[start:start + 3] == ["apptainer", "exec", "--nv"]
            assert "/apps/images/hpc-benchmarks-24.03.sif" in words and "/scratch" in words
        assert "UCX_LOG_LEVEL" not in script  # no transport declared: no evidence to print (test_dry_run_jobs.py)
        checked.add(case["environ"])
    assert checked == {"hpl-pyxis", "hpl-apptainer"}


def test_a_dry_run_is_marked_and_never_read_as_a_run(dry_runs, tmp_path):
    """Issue 27.4: after dry runs, `scalebench report results/` listed their cases as PASS, Runs 1."""
    runs = [str(run_dir) for _, run_dir, _ in dry_runs.values()]
    assert all((Path(run) / "DRY-RUN").is_file() for run in runs)
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "report", *runs, "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "a ReFrame dry run" in proc.stderr, proc.stderr
    assert not (tmp_path / "r").exists()
