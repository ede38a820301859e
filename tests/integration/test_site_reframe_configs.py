"""scalebench's checks on a site's own ReFrame configuration, used as it is, with its facts: ReFrame's
dry run over configurations in the shapes real sites write (tests/data/reframe_configs/: a Cray EX CPU
system and a GH200 one in CSCS's shape, an EESSI-style national system, a university cluster in
ExCALIBUR's shape, ReFrame's tutorial) runs exactly the HPL cases `scalebench plan` lists for the same
configuration, in job scripts that carry the site's own access options; one system described both
ways (a site file, a configuration with facts) writes the same job scripts and decks; and a run with
nothing to run stops with one line instead of passing "0/0"."""
import concurrent.futures
import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, VENV_BIN, lmod_environ
from test_dry_run_sites import cases_of, hpl_dat, sbatch

pytestmark = pytest.mark.integration

CONFIGS = REPO / "tests" / "data" / "reframe_configs"
# configuration -> its system (--system)
SHAPES = {"cray_ex_rome": "ridgeback", "cray_ex_gh200": "gannet", "eessi_genoa_h100": "nordhaven",
          "university_icelake_spr": "camber", "reframe_tutorial_like": "sbtutor", "zen4ib": "zen4ib"}


def dry_run(config, system, run_dir, *options, facts=None, environ=None):
    """ReFrame's dry run of scalebench's checks with a site's configuration, into run_dir."""
    # HOME too: ReFrame keeps the topology it detects of a local partition under ~/.reframe
    env = dict(environ or os.environ, SCALEBENCH_MODULE_STUBS="1", NORDHAVEN_SCRATCH=str(run_dir / "scratch"),
               RFM_PREFIX=str(run_dir / "prefix"), HOME=str(run_dir / "home"))
    env.pop("SCALEBENCH_FACTS", None)
    if facts:
        env["SCALEBENCH_FACTS"] = str(facts)
    command = [str(VENV_BIN / "reframe"), "-C", str(config), "-c", str(REPO / "reframe_tests"),
               *(["--system", system] if system else []), "--dry-run", "-o", str(run_dir / "output"),
               "-s", str(run_dir / "stage"), "--report-file", str(run_dir / "report.json"), *options]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, cwd=run_dir.parent)


def plan(config, system, facts, *options):
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "plan", str(config), "--system", system,
                           "--facts", str(facts), "--json", *options], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def hpl_dry_runs(tmp_path_factory):
    """{shape: (its plan, its dry run's directory, ReFrame's outcome)}, HPLCheck alone, two at a time."""
    base = tmp_path_factory.mktemp("configs")
    environ = lmod_environ()  # zen4ib.py loads Lmod modules (stubs), as a site's login shell has them

    def one(shape):
        config, facts = CONFIGS / f"{shape}.py", CONFIGS / f"{shape}.facts.yaml"
        run_dir = base / shape
        run_dir.mkdir()
        proc = dry_run(config, SHAPES[shape], run_dir, "-n", "HPLCheck", facts=facts, environ=environ)
        return plan(config, SHAPES[shape], facts, "-n", "HPLCheck"), run_dir, proc

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {shape: pool.submit(one, shape) for shape in SHAPES}
        return {shape: future.result() for shape, future in futures.items()}


@pytest.mark.parametrize("shape", SHAPES)
def test_the_dry_run_runs_every_planned_hpl_case(hpl_dry_runs, shape):
    planned, run_dir, proc = hpl_dry_runs[shape]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    cases = cases_of(run_dir)
    assert [c for c in cases if c["result"] != "pass"] == []
    ran = {(c["display_name"], c["partition"], c["environ"]) for c in cases}
    assert ran == {(c["name"], c["partition"], c["stack"]) for c in planned["cases"]}
    assert len(ran) >= 5


@pytest.mark.parametrize("shape", SHAPES)
def test_each_job_is_the_plans_and_carries_the_sites_access_options(hpl_dry_runs, shape):
    planned, run_dir, _ = hpl_dry_runs[shape]
    config = json.loads(_json_after_banner(shape))
    access = {p["name"]: p.get("access", []) for p in config}
    by_case = {(c["name"], c["partition"], c["stack"]): c for c in planned["cases"]}
    for case in cases_of(run_dir):
        stage = Path(case["stagedir"])
        script = (stage / "rfm_job.sh").read_text()
        plan = by_case[(case["display_name"], case["partition"], case["environ"])]
        for option in access[case["partition"]]:
            assert f"#SBATCH {option}" in script, (case["display_name"], option)
        options = sbatch(script)
        assert int(options["--nodes"]) == plan["job"]["nodes"]
        assert int(options["--ntasks"]) == plan["job"]["tasks"]
        ns, nbs, grids = hpl_dat((stage / "HPL.dat").read_text())
        deck = plan["hpl"]["deck"]
        assert (ns, nbs, grids) == ([deck["n"]], [deck["nb"]], [(deck["p"], deck["q"])])


def _json_after_banner(shape):
    """The partitions ReFrame picks for the shape's system (--show-config prints its banner first)."""
    proc = subprocess.run([str(VENV_BIN / "reframe"), "-C", str(CONFIGS / f"{shape}.py"), "--system", SHAPES[shape],
                           "--show-config=systems/0/partitions"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, RFM_RESOLVE_MODULE_CONFLICTS="n", RFM_COLORIZE="n"))
    text = proc.stdout
    return text[text.index("["):]


@pytest.mark.parametrize("shape, partition, asked", [
    ("eessi_genoa_h100", "gpu_h100", "#SBATCH --gpus-per-node=4"),  # _rfm_gpu; always_request_gpus: CPU HPL too
    ("cray_ex_gh200", "normal", "#SBATCH --gres=gpu:4"),  # NVIDIA's HPL, one rank per GPU, through _rfm_gpu
])
def test_gpu_jobs_ask_for_gpus_as_the_partition_takes_them(hpl_dry_runs, shape, partition, asked):
    _, run_dir, _ = hpl_dry_runs[shape]
    scripts = [(Path(c["stagedir"]) / "rfm_job.sh").read_text() for c in cases_of(run_dir) if c["partition"] == partition]
    assert scripts and all(script.count(asked) == 1 for script in scripts)
    assert not any("--gres=gpu" in s and "--gpus-per-node" in s for s in scripts)  # asked once, one way


def test_one_system_both_ways_writes_the_same_job_scripts_and_decks(hpl_dry_runs, tmp_path):
    """zen4ib.py with its facts, and the zen4-ib archetype as a site file."""
    _, by_config, _ = hpl_dry_runs["zen4ib"]
    env = dict(lmod_environ(), SCALEBENCH_SITE=str(REPO / "site_configs" / "sites" / "archetypes" / "zen4-ib.yaml"),
               SCALEBENCH_MODULE_STUBS="1", SCALEBENCH_RUN_DIR=str(tmp_path / "run"))
    proc = subprocess.run([str(VENV_BIN / "reframe"), "-C", str(REPO / "site_configs" / "slurm.py"), "-c",
                           str(REPO / "reframe_tests"), "--system", "zen4ib", "--dry-run", "-n", "HPLCheck"],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:]
    by_site_file = tmp_path / "run"
    compared = 0
    for case in cases_of(by_site_file):
        relative = Path(case["stagedir"]).relative_to(by_site_file / "stage")
        for name in ("rfm_job.sh", "HPL.dat"):
            assert (by_config / "stage" / relative / name).read_text() == (by_site_file / "stage" / relative / name).read_text()
            compared += 1
    assert compared >= 2 * 11


@pytest.mark.parametrize("options, facts, expected", [
    ((), True, "ReFrame picked its built-in system 'generic'"),  # --system forgotten off the cluster
    (("--system", "ridgeback"), False, "system ridgeback is not described for scalebench: set SCALEBENCH_FACTS"),
])
def test_a_run_with_nothing_to_run_stops_with_one_line(tmp_path, options, facts, expected):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    proc = dry_run(CONFIGS / "cray_ex_rome.py", None, run_dir, *options,
                   facts=CONFIGS / "cray_ex_rome.facts.yaml" if facts else None)
    assert proc.returncode == 2
    assert "Ran 0/0" not in proc.stdout and "PASSED" not in proc.stdout
    assert [line for line in proc.stderr.splitlines() if line.startswith("scalebench:")] == [
        next(line for line in proc.stderr.splitlines() if line.startswith("scalebench:"))]
    assert expected in proc.stderr
