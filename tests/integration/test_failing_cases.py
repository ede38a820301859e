"""Failing cases through the real checks: ReFrame runs HPLCheck, LAMMPSCheck, OpenFOAMCheck and
NetPIPECheck on outputs that must not pass (a FAILED or NaN residual, fewer solves than asked, a
wrong process count, no "End of Tests", NaN energies, a diverged solver, a curve cut short). Each
fails sanity with its reason in the report, and nothing written before is changed.

The programs are small wrappers: HPL's prints a prepared output; the others run the real
application and then spoil what it wrote, as a broken run would.
"""
import json
import os
import subprocess

import pytest

from conftest import VENV_BIN, file_hashes, require_tools, run_reframe
from hpl_outputs import hpl_output, solve
from wrapped_site import install_wrappers, site_file

pytestmark = pytest.mark.integration

ROW = solve(10.0, 2304)  # one solve on the 1_core scale's 1 x 1 grid


def failed(row):
    return row[:7] + ("FAILED",)


# name -> (HPL output, the reason sanity must give)
HPL_OUTPUTS = {
    "clean": (hpl_output([ROW] * 3), None),
    "failed_residual": (hpl_output([ROW, failed(ROW), ROW]), "FAILED the residual check: 340 > threshold 16"),
    "nan_residual": (hpl_output([ROW] * 3, residuals=[1e-3, float("nan"), 1e-3]), "row 2 (N=2304 NB=192 1x1) FAILED: "
                                                                                  "residual is not finite (nan)"),
    "fewer_rows_than_trials": (hpl_output([ROW]), "1 test passed but 3 expected"),
    "wrong_process_count": (hpl_output([ROW[:3] + (1, 2) + ROW[5:]] * 3), "the program reports 2 processes, 1 were "
                                                                           "launched"),
    "no_end_of_tests": (hpl_output([ROW] * 3, end_of_tests=False), "no 'End of Tests.' line"),
}

@pytest.fixture(scope="module")
def wrapped(tmp_path_factory):
    """(site file, results directory, {name: run directory}) after every HPL output has run."""
    require_tools("mpirun")
    root = tmp_path_factory.mktemp("failing")
    site = site_file(root, install_wrappers(root))
    results = root / "results"
    runs = {}
    for name, (text, _) in HPL_OUTPUTS.items():
        output = root / f"{name}.out"
        output.write_text(text)
        runs[name] = results / "runs" / name
        env = dict(os.environ, SCALEBENCH_SITE=str(site), FAKE_HPL_OUTPUT=str(output))
        run_reframe(runs[name], "-r", "-n", "HPLCheck%scale=1_core$", "-S", "time_budget_s=0.1", "-S",
                    "efficiency_floor=0", env=env, timeout=300)
    return site, results, runs


def case_of(run_dir, prefix):
    report = json.loads((run_dir / "report.json").read_text())
    return next(c for run in report["runs"] for c in run["testcases"] if c["display_name"].startswith(prefix))


@pytest.mark.parametrize("name", [n for n, (_, reason) in HPL_OUTPUTS.items() if reason])
def test_hpl_sanity_fails_with_the_reason(wrapped, name):
    _, _, runs = wrapped
    case = case_of(runs[name], "HPLCheck")
    assert (case["result"], case["fail_phase"]) == ("fail", "sanity"), case["fail_reason"]
    assert HPL_OUTPUTS[name][1] in case["fail_reason"]
    assert "HPL run not clean" in case["fail_reason"]


def test_the_wrapper_passes_a_clean_output(wrapped):
    """The control: the same wrapper and site pass when the output is clean, so the failures above
    are the outputs' doing."""
    _, _, runs = wrapped
    case = case_of(runs["clean"], "HPLCheck")
    assert case["result"] == "pass", case["fail_reason"]
    assert case["trial_gflops"] == " ".join([f"{ROW[6]:.2f}"] * 3)


def test_the_report_lists_each_failure_and_no_earlier_run_is_changed(wrapped, tmp_path):
    _, results, runs = wrapped
    before = file_hashes(runs["clean"])
    out = tmp_path / "report"
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "report", str(results), "--out", str(out), "--format", "md"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = (out / "report.md").read_text()
    for name, (_, reason) in HPL_OUTPUTS.items():
        if reason:  # as Markdown shows it: <, > and & escaped
            assert reason.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in text, name
    assert file_hashes(runs["clean"]) == before


def run_wrapped(wrapped, tmp_path, pattern, *extra):
    site, _, _ = wrapped
    run_dir = tmp_path / "run"
    env = dict(os.environ, SCALEBENCH_SITE=str(site))
    proc = run_reframe(run_dir, "-r", "-n", pattern, *extra, env=env, checks=".", timeout=600)
    return proc, run_dir


def test_lammps_with_nan_energies_fails_sanity(wrapped, tmp_path):
    require_tools("lmp")
    proc, run_dir = run_wrapped(wrapped, tmp_path, "LAMMPSCheck%scale=1_core%workload=lj%scaling=strong",
                                "-S", "atoms=2000", "-S", "steps=20")
    assert proc.returncode != 0
    case = case_of(run_dir, "LAMMPSCheck")
    assert (case["result"], case["fail_phase"]) == ("fail", "sanity")
    assert "NaN or inf in the thermo output" in case["fail_reason"]


def test_openfoam_with_a_diverging_solver_fails_sanity(wrapped, tmp_path):
    require_tools("blockMesh", "icoFoam")
    proc, run_dir = run_wrapped(wrapped, tmp_path, "OpenFOAMCheck%scale=1_core%case=cavity%scaling=strong",
                                "-S", "cells=400", "-S", "steps=5")
    assert proc.returncode != 0
    case = case_of(run_dir, "OpenFOAMCheck")
    assert (case["result"], case["fail_phase"]) == ("fail", "sanity"), case["fail_reason"]
    assert "non-finite residuals" in case["fail_reason"]


def test_netpipe_with_a_curve_cut_short_fails_sanity(wrapped, tmp_path):
    require_tools("NPopenmpi")
    proc, run_dir = run_wrapped(wrapped, tmp_path, "NetPIPECheck%placement=intra_node", "-S", "max_bytes=65536")
    assert proc.returncode != 0
    case = case_of(run_dir, "NetPIPECheck")
    assert (case["result"], case["fail_phase"]) == ("fail", "sanity"), case["fail_reason"]
    assert "NetPIPE's curve stops at" in case["fail_reason"] and "the run ended early" in case["fail_reason"]
