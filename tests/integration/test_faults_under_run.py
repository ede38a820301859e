"""Faults under a real `scalebench run` (ReFrame, mpirun and the built xhpl on this machine):
Ctrl-C to `scalebench run` alone while xhpl runs, and ReFrame killed outright mid-check. Each test waits
for xhpl to be running (a process of the run, found by the SCALEBENCH_RUN_DIR of its environment), is
bounded by timeouts, and leaves no process behind.
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

import reframe_reports as rr
from conftest import VENV_BIN, local_scales, require_xhpl

pytestmark = pytest.mark.integration

RUN_DIR_LINE = re.compile(r"^  run directory: (.+)$", re.M)
TIMEOUT = 240


def _of_run(run_dir: Path) -> dict[int, str]:
    """{pid: command} of the processes whose environment has this run's SCALEBENCH_RUN_DIR."""
    wanted = f"SCALEBENCH_RUN_DIR={run_dir}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if wanted in (entry / "environ").read_bytes().split(b"\0"):
                    found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    return found


@contextlib.contextmanager
def hpl_running(tmp_path: Path):
    """`scalebench run` of HPL at this machine's smallest scale, once xhpl runs: (its process, its run
    directory, its output file). Whatever is left of the run afterwards is killed (and the test fails
    where it says so)."""
    require_xhpl()
    out = (tmp_path / "run.out").open("w+")
    proc = subprocess.Popen([str(VENV_BIN / "scalebench"), "run", "--results", str(tmp_path / "results"), "--",
                             "-n", f"HPLCheck%scale={local_scales()[0]}$"], stdout=out, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    run_dir = None
    try:
        deadline = time.monotonic() + TIMEOUT
        while run_dir is None or not any("xhpl" in c for c in _of_run(run_dir).values()):
            assert proc.poll() is None and time.monotonic() < deadline, Path(out.name).read_text()
            found = RUN_DIR_LINE.search(Path(out.name).read_text())
            run_dir = Path(found.group(1)) if found else None
            time.sleep(0.1)
        yield proc, run_dir, Path(out.name)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for pid in _of_run(run_dir) if run_dir else ():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        out.close()


def _gone(run_dir: Path, within: float = 30.0) -> dict[int, str]:
    """What is left of the run after `within` seconds: nothing, when it ended as it should."""
    deadline = time.monotonic() + within
    while _of_run(run_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    return _of_run(run_dir)


def test_ctrl_c_to_scalebench_run_alone_lets_reframe_abort_and_write_its_report(tmp_path):
    """Item 7: SIGINT to `scalebench run` alone gave ReFrame 0.25 s and a SIGKILL (subprocess.call): no
    report.json, mpirun and xhpl left running. Now ReFrame gets the SIGINT, aborts its check, writes its
    report, and scalebench exits 130 with one line; nothing of the run is left."""
    with hpl_running(tmp_path) as (proc, run_dir, out):
        os.kill(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=TIMEOUT) == 130
        assert not _gone(run_dir)
        output = out.read_text()
    assert output.splitlines()[-1] == (f"scalebench run: interrupted (SIGINT): reframe aborted its checks and wrote "
                                       f"its report, {run_dir / 'report.json'}"), output[-3000:]
    assert "Traceback" not in output
    report = json.loads((run_dir / "report.json").read_text())
    assert [case["result"] for case in report["runs"][-1]["testcases"]] == ["abort"]


def test_reframe_killed_mid_check_is_a_run_cut_short(tmp_path):
    """Item 6: ReFrame SIGKILLed mid-check (the OOM killer): its MPI job is ended by scalebench, which
    says ReFrame wrote no report; report and accept name the run cut short with what it was running,
    count it nowhere, and accept cannot decide (it was 0 and 1 without a word)."""
    results = tmp_path / "results"
    rr.write_run(results, "20260101T000000Z-vm-1", rr.hpl("openmpi-sm", {1: 50.0}, system="local",
                                                          partition="default"))
    with hpl_running(tmp_path) as (proc, run_dir, out):
        reframe = next(pid for pid, command in _of_run(run_dir).items() if "/reframe " in command)
        os.kill(reframe, signal.SIGKILL)
        assert proc.wait(timeout=TIMEOUT) == 1
        assert not _gone(run_dir)
        assert out.read_text().splitlines()[-1] == ("scalebench run: reframe exited with status -9 without writing its "
                                                    "report (the lines above say why)")
    assert not (run_dir / "report.json").exists()
    report = subprocess.run([str(VENV_BIN / "scalebench"), "report", str(results), "--out", str(tmp_path / "report"),
                             "--format", "md"], capture_output=True, text=True, timeout=TIMEOUT)
    assert report.returncode == 0, report.stderr
    named = [line for line in report.stderr.splitlines() if f"{run_dir}: cut short" in line]
    assert len(named) == 1 and "(killed: its process" in named[0], report.stderr
    assert f"it was running HPLCheck %scale={local_scales()[0]} /" in named[0] and "not counted as a run" in named[0]
    assert "from 1 run report(s)" in (tmp_path / "report" / "report.md").read_text()
    thresholds = tmp_path / "acceptance.yaml"
    thresholds.write_text("criteria:\n  - {name: HPL Rmax, benchmark: HPLCheck, figure: rmax, min: 1, at: [1, 2]}\n")
    accept = subprocess.run([str(VENV_BIN / "scalebench"), "accept", str(results), "--thresholds", str(thresholds)],
                            capture_output=True, text=True, timeout=TIMEOUT)
    assert accept.returncode == 1 and "acceptance NOT DECIDED (a run was cut short" in accept.stdout, accept.stdout


def test_scalebench_run_killed_with_its_group_leaves_reframe_to_write_its_report(tmp_path):
    """Item 6 as the probe did it: SIGKILL to the process group of `scalebench run`. ReFrame runs in a group
    of its own and gets SIGTERM as scalebench dies (PR_SET_PDEATHSIG): it aborts its check and writes its
    report, and its MPI job ends with it."""
    with hpl_running(tmp_path) as (proc, run_dir, out):
        os.killpg(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=TIMEOUT) == -signal.SIGKILL
        assert not _gone(run_dir, within=TIMEOUT)
    report = json.loads((run_dir / "report.json").read_text())
    assert [case["result"] for case in report["runs"][-1]["testcases"]] == ["abort"]
