"""Acceptance over time, through real ReFrame: every run lands in ReFrame's results database beside
the run directories, references frozen from accepted runs are loaded by the plain checks, and a
slower run fails exactly the figures that got slower.

HPL is the wrapper of wrapped_site.py printing prepared outputs, so the slowdown is exact and the
test asserts it without timing anything.
"""
import json
import os
import subprocess

import pytest
import yaml

from conftest import VENV_BIN, file_hashes, require_tools, run_reframe
from hpl_outputs import hpl_output, solve
from wrapped_site import install_wrappers, site_file

pytestmark = pytest.mark.integration

N = 2304  # the 1_core scale's N on the wrapped site with time_budget_s=0.1
CLEAN = (10.0, 10.2, 9.9)  # Gflop/s of the accepted runs
THRESHOLDS = """
criteria:
  - name: HPL efficiency at every node count
    benchmark: HPLCheck
    figure: efficiency
    min: 20%
"""


def hpl_run(root, results, name, gflops, *extra):
    output = root / f"{name}.out"
    output.write_text(hpl_output([solve(gflops, N)] * 3))
    env = dict(os.environ, SCALEBENCH_SITE=str(root / "site.yaml"), FAKE_HPL_OUTPUT=str(output))
    # Prepared outputs measure nothing on this machine: what else ran on it while they were printed
    # (the node probe) is no evidence about them.
    return run_reframe(results / "runs" / name, "-r", "-n", "HPLCheck%scale=1_core$", "-S", "time_budget_s=0.1",
                       "-S", "efficiency_floor=0", "-S", f"references_dir={root / 'references'}",
                       "-S", "node_probe=false", *extra, env=env, timeout=300)


def scalebench(*args):
    return subprocess.run([str(VENV_BIN / "scalebench"), *args], capture_output=True, text=True, timeout=300)


def only_case(run_dir):
    report = json.loads((run_dir / "report.json").read_text())
    (case,) = [c for run in report["runs"] for c in run["testcases"]]
    return case


@pytest.fixture(scope="module")
def accepted(tmp_path_factory):
    """(root, results) after three clean runs and `references freeze`."""
    require_tools("mpirun")
    root = tmp_path_factory.mktemp("references")
    site_file(root, install_wrappers(root))
    (root / "thresholds.yaml").write_text(THRESHOLDS)
    results = root / "results"
    for index, gflops in enumerate(CLEAN):
        proc = hpl_run(root, results, f"clean{index}", gflops)
        assert proc.returncode == 0, proc.stdout[-3000:]
    return root, results


def test_every_run_is_in_reframes_results_database(accepted):
    root, results = accepted
    env = dict(os.environ, SCALEBENCH_SITE=str(root / "site.yaml"), SCALEBENCH_RESULTS=str(results))
    proc = subprocess.run([str(VENV_BIN / "reframe"), "-C", "site_configs/local.py", "--list-stored-sessions"],
                          env=env, capture_output=True, text=True, timeout=120, cwd=VENV_BIN.parent.parent)
    assert proc.returncode == 0, proc.stderr
    uuids = {only_case(results / "runs" / f"clean{i}")["uuid"].split(":")[0] for i in range(len(CLEAN))}
    assert uuids and all(u in proc.stdout for u in uuids), proc.stdout
    assert (results / "reframe.db").is_file()
    # A query makes no run directory.
    assert sorted(p.name for p in (results / "runs").iterdir()) == [f"clean{i}" for i in range(len(CLEAN))]

    proc = subprocess.run([str(VENV_BIN / "reframe"), "-C", "site_configs/local.py",
                           "--performance-compare=now-1d:now/now-1d:now/mean:/"],
                          env=env, capture_output=True, text=True, timeout=120, cwd=VENV_BIN.parent.parent)
    assert proc.returncode == 0, proc.stderr
    assert "HPLCheck" in proc.stdout and "rmax" in proc.stdout, proc.stdout


def test_freeze_refuses_runs_that_fail_acceptance(accepted, tmp_path):
    root, results = accepted
    strict = tmp_path / "strict.yaml"
    strict.write_text(THRESHOLDS.replace("min: 20%", "min: 99%"))
    proc = scalebench("references", "freeze", str(results), "--system", "fakes", "--thresholds", str(strict),
                      "--references-dir", str(tmp_path / "refs"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no references frozen" in proc.stdout
    assert not (tmp_path / "refs").exists()


@pytest.fixture(scope="module")
def frozen(accepted):
    root, results = accepted
    proc = scalebench("references", "freeze", str(results), "--system", "fakes", "--thresholds",
                      str(root / "thresholds.yaml"), "--references-dir", str(root / "references"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return root, results, yaml.safe_load((root / "references" / "fakes.yaml").read_text())


def test_references_are_the_median_with_a_bound_on_the_worse_side(frozen):
    _, _, data = frozen
    (case,) = data["references"]["one:wrapped"].values()
    rmax = case["rmax"]
    gflops = sorted(solve(g, N)[6] for g in CLEAN)
    assert rmax["value"] == pytest.approx(gflops[1], rel=1e-4)  # HPL prints 5 digits
    assert rmax["upper"] is None and rmax["lower"] < 0 and rmax["runs"] == len(CLEAN)
    assert data["provenance"]["acceptance"].startswith("PASSED")
    assert len(data["provenance"]["sessions"]) == len(CLEAN)


def test_a_second_freeze_never_replaces_the_file(frozen):
    root, results, _ = frozen
    before = file_hashes(root / "references")
    proc = scalebench("references", "freeze", str(results), "--system", "fakes", "--thresholds",
                      str(root / "thresholds.yaml"), "--references-dir", str(root / "references"))
    assert proc.returncode == 2 and "references exist already" in proc.stderr
    assert file_hashes(root / "references") == before


@pytest.fixture(scope="module")
def slower(frozen):
    """The run directory of a run twice the rmax bound below the median."""
    root, results, data = frozen
    (case,) = data["references"]["one:wrapped"].values()
    proc = hpl_run(root, results, "slower", CLEAN[0] * (1 + 2 * case["rmax"]["lower"]))
    assert proc.returncode != 0
    return results / "runs" / "slower"


def test_a_slower_run_fails_the_performance_stage_on_the_slower_figures(slower):
    run = only_case(slower)
    assert (run["result"], run["fail_phase"]) == ("fail", "performance"), run["fail_reason"]
    failing = {name.split(":")[-1] for name, entry in run["perfvalues"].items()
               if entry[2] is not None and entry[0] < entry[1] * (1 + entry[2])}
    assert "rmax" in failing and "rmax" in run["fail_reason"]


def test_a_run_within_the_noise_passes(frozen):
    root, results, data = frozen
    proc = hpl_run(root, results, "noise", CLEAN[0] * 0.995)
    assert proc.returncode == 0, proc.stdout[-3000:]
    (case,) = data["references"]["one:wrapped"].values()
    (rmax,) = [entry for name, entry in only_case(results / "runs" / "noise")["perfvalues"].items()
               if name.endswith(":rmax")]
    assert rmax[1] == pytest.approx(case["rmax"]["value"])  # held to the frozen reference, and passed


def test_the_report_shows_each_figure_against_its_reference(slower, tmp_path):
    proc = scalebench("report", str(slower), "--out", str(tmp_path / "r"), "--format", "md")
    assert proc.returncode == 0, proc.stderr
    text = (tmp_path / "r" / "report.md").read_text()
    section = text.split("## Against the references")[1].split("\n## ")[0]
    rmax = next(line for line in section.splitlines() if "| rmax |" in line)
    assert "OUTSIDE" in rmax and "≥ " in rmax
