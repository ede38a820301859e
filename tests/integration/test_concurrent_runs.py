"""Two full runs (`scalebench run --report`, real ReFrame and HPL on this machine) started at the same
moment into one results directory, then one report over it: nothing lost, nothing mixed, and the run
already there untouched.
"""
from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import VENV_BIN, file_hashes, local_scales, perflog_rows, require_xhpl
from reframe_reports import hpl, write_run

pytestmark = pytest.mark.integration

# Each run's NB: it is in every perflog line, deck and report case of that run, so a line that
# strayed into the other run's files would show.
NB = {"a": 128, "b": 192}
RUN_DIR_LINE = re.compile(r"^  run directory: (.+)$", re.M)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    require_xhpl()
    tmp = tmp_path_factory.mktemp("concurrent")
    results = tmp / "results"
    earlier = write_run(results, "20260101T000000Z-vm-1", hpl("openmpi-sm", {1: 50.0}, system="local",
                                                              partition="default"))
    earlier_before = file_hashes(earlier)
    procs, logs = {}, {}
    for name, nb in NB.items():
        logs[name] = (tmp / f"{name}.out").open("w+")
        procs[name] = subprocess.Popen(
            [str(VENV_BIN / "scalebench"), "run", "--results", str(results), "--report", "--",
             "-n", f"HPLCheck%scale={local_scales()[0]}$", "-S", "time_budget_s=0.3", "-S", "efficiency_floor=0", "-S", f"nb={nb}"],
            stdout=logs[name], stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        status = {name: proc.wait(timeout=300) for name, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.poll() is None:  # its session: scalebench, reframe and the MPI job under them
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    output = {}
    for name, handle in logs.items():
        handle.seek(0)
        output[name] = handle.read()
        handle.close()
    run_dirs = {name: Path(RUN_DIR_LINE.search(text).group(1)) for name, text in output.items()}
    report_dir = tmp / "report"
    report = subprocess.run([str(VENV_BIN / "scalebench"), "report", str(results), "--out", str(report_dir),
                             "--format", "md,csv"], capture_output=True, text=True, timeout=120)
    return SimpleNamespace(results=results, earlier=earlier, earlier_before=earlier_before, status=status,
                           output=output, run_dirs=run_dirs, report=report, report_dir=report_dir)


def _report_json(run_dir: Path) -> dict:
    return json.loads((run_dir / "report.json").read_text())


def test_both_runs_succeed_in_their_own_new_directory(two_runs):
    assert two_runs.status == {"a": 0, "b": 0}, two_runs.output
    dirs = two_runs.run_dirs
    assert dirs["a"] != dirs["b"]
    assert {d.parent for d in dirs.values()} == {two_runs.results / "runs"}
    assert sorted(p.name for p in (two_runs.results / "runs").iterdir()) == sorted(
        [two_runs.earlier.name, dirs["a"].name, dirs["b"].name])
    # The two ReFrame sessions really ran at the same time.
    sessions = [_report_json(d)["session_info"] for d in dirs.values()]
    (start_a, end_a), (start_b, end_b) = [[datetime.strptime(info[key], "%Y%m%dT%H%M%S%z")
                                           for key in ("time_start", "time_end")] for info in sessions]
    assert start_a < end_b and start_b < end_a


def test_nothing_lost(two_runs):
    for run_dir in two_runs.run_dirs.values():
        case, = [tc for run in _report_json(run_dir)["runs"] for tc in run["testcases"]]
        assert case["result"] == "pass", case["fail_reason"]
        logged = {row["perf_var"] for row in perflog_rows(run_dir)}
        assert logged == {key.rpartition(":")[2] for key in case["perfvalues"]}
        outputs = list((run_dir / "output").rglob("rfm_job.out"))
        assert len(outputs) == 1 and "End of Tests." in outputs[0].read_text()
        assert (run_dir / "report" / "report.md").is_file() and (run_dir / "report" / "report.csv").is_file()
    assert file_hashes(two_runs.earlier) == two_runs.earlier_before


def test_nothing_mixed(two_runs):
    for name, run_dir in two_runs.run_dirs.items():
        other = next(d for n, d in two_runs.run_dirs.items() if n != name)
        case, = [tc for run in _report_json(run_dir)["runs"] for tc in run["testcases"]]
        assert case["hpl_deck"]["nb"] == NB[name]
        assert Path(case["stagedir"]).is_relative_to(run_dir) and Path(case["outputdir"]).is_relative_to(run_dir)
        rows = perflog_rows(run_dir)
        assert rows and all(f" NB={NB[name]} " in row["deck_summary"] for row in rows)
        # No file of this run names the other run's directory.
        for path in run_dir.rglob("*"):
            if path.is_file():
                assert other.name not in path.read_text(errors="replace"), path


def test_report_over_the_results_has_every_case_of_both_runs(two_runs):
    assert two_runs.report.returncode == 0, two_runs.report.stderr
    with (two_runs.report_dir / "report.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    for run_dir in (two_runs.earlier, *two_runs.run_dirs.values()):
        report = run_dir / "report.json"
        expected = {(tc["display_name"], key.rpartition(":")[2]) for run in _report_json(run_dir)["runs"]
                    for tc in run["testcases"] for key in tc["perfvalues"]}
        assert {(r["case"], r["figure"]) for r in rows if r["report"] == str(report)} == expected
    assert len(rows) == sum(len(tc["perfvalues"]) for d in (two_runs.earlier, *two_runs.run_dirs.values())
                            for run in _report_json(d)["runs"] for tc in run["testcases"])
    assert "Warnings" not in (two_runs.report_dir / "report.md").read_text()
