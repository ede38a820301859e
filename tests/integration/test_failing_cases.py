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
import textwrap

import pytest

from conftest import VENV_BIN, file_hashes, require_tools, run_reframe
from hpl_outputs import hpl_output, tv

pytestmark = pytest.mark.integration

ROW = (tv(), 2304, 192, 1, 1, 0.5, 10.0, "PASSED")  # one solve on the 1_core scale's 1 x 1 grid


def failed(row):
    return row[:7] + ("FAILED",)


# name -> (HPL output, the reason sanity must give)
HPL_OUTPUTS = {
    "clean": (hpl_output([ROW] * 3), None),
    "failed_residual": (hpl_output([ROW, failed(ROW), ROW]), "FAILED the residual check: 340 > threshold 16"),
    "nan_residual": (hpl_output([ROW] * 3, residuals=[1e-3, float("nan"), 1e-3]), "residual of row 2 (N=2304 NB=192 "
                                                                                  "1x1) is not finite (nan)"),
    "fewer_rows_than_trials": (hpl_output([ROW]), "1 test passed but 3 expected"),
    "wrong_process_count": (hpl_output([ROW[:3] + (1, 2) + ROW[5:]] * 3), "the program reports 2 processes, 1 were "
                                                                           "launched"),
    "no_end_of_tests": (hpl_output([ROW] * 3, end_of_tests=False), "no 'End of Tests.' line"),
}

FAKE_HPL = "#!/bin/sh\n# HPL that prints what it is told to\nexec cat \"$FAKE_HPL_OUTPUT\"\n"
NAN_LAMMPS = """#!/bin/sh
# the real lmp (not this wrapper, first on PATH), then a NaN in every thermo row's energy, as a
# diverged run prints
PATH=${PATH#*:}
[ "$1" = -h ] && exec lmp -h
lmp "$@" || exit $?
sed -i -E 's/^( +[0-9]+ +[-0-9.e+]+ +)[-0-9.e+]+/\\1nan/' log.lammps
"""
DIVERGED_ICOFOAM = """#!/bin/sh
# the real icoFoam, its residuals turned to nan from the third step on, as a diverging solver prints
PATH=${PATH#*:} icoFoam "$@" | awk '/^Time = /{n++} n>=3{gsub(/Final residual = [^,]+/, "Final residual = nan")} 1'
"""
CUT_NETPIPE = """#!/bin/sh
# the real NetPIPE, its curve cut after 20 sizes, as a run killed half-way leaves it
NPopenmpi "$@" || exit $?
[ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ] && head -n 20 np.out > np.cut && mv np.cut np.out
exit 0
"""


def site_file(tmp_path, fakes):
    """A two-core machine whose stack runs the wrappers; Open MPI may oversubscribe (tests pinned to a
    core still run)."""
    site = tmp_path / "site.yaml"
    site.write_text(textwrap.dedent(f"""
        system: fakes
        partitions:
          - {{name: one, scheduler: local, launcher: mpirun, max_nodes: 1, cores_per_node: 2, memory_per_node: 2GiB,
              clock_ghz: 2.0, flops_per_cycle: 16, microarch: x86_64, hpl_trials: 3, time_limit: 10m,
              environs: [wrapped]}}
        stacks:
          - name: wrapped
            features: [hpl, lammps, openfoam, netpipe]
            hpl_binary: {fakes}/xhpl
            lmp_binary: {fakes}/lmp
            netpipe_binary: {fakes}/NPcut
            launcher_options: [--oversubscribe, --bind-to, none]
            env_vars:
              PATH: {fakes}:$PATH
              OMPI_ALLOW_RUN_AS_ROOT: 1
              OMPI_ALLOW_RUN_AS_ROOT_CONFIRM: 1
              WM_PROJECT_DIR: /usr/share/openfoam
              FOAM_TUTORIALS: /usr/share/doc/openfoam-examples/examples
        """))
    return site


@pytest.fixture(scope="module")
def wrapped(tmp_path_factory):
    """(site file, results directory, {name: run directory}) after every HPL output has run."""
    require_tools("mpirun")
    root = tmp_path_factory.mktemp("failing")
    fakes = root / "bin"
    fakes.mkdir()
    for name, text in (("xhpl", FAKE_HPL), ("lmp", NAN_LAMMPS), ("icoFoam", DIVERGED_ICOFOAM), ("NPcut", CUT_NETPIPE)):
        (fakes / name).write_text(text)
        (fakes / name).chmod(0o755)
    site = site_file(root, fakes)
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
    assert case["trial_gflops"] == "10.00 10.00 10.00"


def test_the_report_lists_each_failure_and_no_earlier_run_is_changed(wrapped, tmp_path):
    _, results, runs = wrapped
    before = file_hashes(runs["clean"])
    out = tmp_path / "report"
    proc = subprocess.run([str(VENV_BIN / "scalebench"), "report", str(results), "--out", str(out), "--format", "md"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    text = (out / "report.md").read_text()
    for name, (_, reason) in HPL_OUTPUTS.items():
        if reason:
            assert reason in text, name
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
