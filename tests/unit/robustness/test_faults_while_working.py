"""Faults while scalebench works: a kill, Ctrl-C or SIGTERM at a known point, a full disk, a
reader gone, files removed under a report, a run cut short. Each ends in its documented exit code with at
most one line of scalebench's own, no traceback, no process left behind, and no file under its final name
but a whole one.

The kill points are deterministic: SCALEBENCH_STOP_AT (scalebench.faultpoints) makes the process stop
itself there with SIGSTOP; the test sends its signal, then SIGCONT.
"""
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import reframe_reports as rr
import scalebench.cli
from cli_calls import cli, one_error_line
from conftest import unavailable
from scalebench import atomic, interrupts
from scalebench.errors import ResultsError
from scalebench.reporting import store
from scalebench.report import write_report

SCALEBENCH = Path(sys.executable).with_name("scalebench")
TIMEOUT = 60
# The command line with the chart worker drawing whatever the report's size (it starts from 8 MB of runs).
WITH_WORKER = ("import sys; from scalebench import report; report.WORKER_FROM_BYTES = 0; "
               "from scalebench._start import main; sys.exit(main())")
FAILING = "criteria:\n  - {name: HPL Rmax, benchmark: HPLCheck, figure: rmax, min: 1e9, at: every}\n"


# --- helpers ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Two runs of a study of every benchmark kind (charts of each kind), read once so that its index is
    there: each report below starts from the same state."""
    root = tmp_path_factory.mktemp("faults") / "results"
    for i, cases in enumerate(rr.two_stack_study().values()):
        rr.write_run(root, f"2026010{i + 1}T000000Z-head-{i}", cases, start=f"2026010{i + 1}T000000+0000")
    assert store.load([root]).notes  # the index written
    return root


def start(*args: str, stop_at: str = "", worker: bool = False, **popen) -> subprocess.Popen:
    """`scalebench ARGS` in a session of its own (its processes, and theirs, are found by it), stopping
    itself at `stop_at`."""
    env = {k: v for k, v in os.environ.items() if k != "SCALEBENCH_STOP_AT"}
    if stop_at:
        env["SCALEBENCH_STOP_AT"] = stop_at
    command = [sys.executable, "-c", WITH_WORKER] if worker else [str(SCALEBENCH)]
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen([*command, *args], env=env, start_new_session=True, **popen)


def _stat(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2:].split()  # after the command's name, which may hold spaces


def stopped(proc: subprocess.Popen) -> None:
    """Wait until the process has stopped itself at its point (state T)."""
    deadline = time.monotonic() + TIMEOUT
    while _stat(proc.pid)[0] != "T":
        assert proc.poll() is None and time.monotonic() < deadline, "never reached its stop point"
        time.sleep(0.01)


def children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def in_session(sid: int) -> list[int]:
    """The live processes of session `sid` (zombies waiting for init to reap them are gone)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                fields = _stat(int(entry.name))
                if int(fields[3]) == sid and fields[0] != "Z":
                    found.append(int(entry.name))
    return found


def nothing_left(sid: int, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while in_session(sid) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = in_session(sid)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"


def signalled(proc: subprocess.Popen, sig: int, group: bool = False) -> tuple[str, str]:
    """Send `sig` to the stopped process (or its whole group), let it go on; its stdout and stderr, which
    must close within the timeout (no child holds them)."""
    (os.killpg if group else os.kill)(proc.pid, sig)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=TIMEOUT)
    return (out.decode(), err.decode()) if isinstance(out, bytes) else (out, err)


def quiet(err: str, lines: int = 1) -> None:
    """No traceback, and at most `lines` lines."""
    assert "Traceback" not in err and "Exception ignored" not in err and "Fatal Python error" not in err, err
    assert len(err.strip().splitlines()) <= lines, err


def temporaries(root: Path) -> list[Path]:
    return [p for p in root.rglob(".*") if p.name.endswith(".tmp")]


@contextlib.contextmanager
def tmpfs(path: Path, size: str):
    """A file system of `size` at `path` (a full disk in a few writes); unmounted whatever happens."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        unavailable("needs root and mount(8) for a tmpfs")
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True, timeout=30)
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], timeout=30, check=False)


def fill(mount: Path, leave: int) -> None:
    """Fill the file system at `mount` but `leave` bytes."""
    info = os.statvfs(mount)
    with open(mount / "filler", "ab") as handle:
        with contextlib.suppress(OSError):
            handle.write(b"\0" * max(0, info.f_bavail * info.f_frsize - leave))


# --- 1. a report's main process killed alone (the OOM killer) ------------------------------------------

def test_a_report_killed_alone_leaves_no_process_and_no_pipe_open(results, tmp_path):
    """Item 1: SIGKILL of the report's process while its chart worker draws: the worker dies with it, and
    whoever reads the report's output is not left waiting (communicate returns)."""
    proc = start("report", str(results), "--out", str(tmp_path / "out"), "--format", "html",
                 stop_at="report:charts", worker=True)
    stopped(proc)
    assert children(proc.pid), "the chart worker was not started"
    signalled(proc, signal.SIGKILL)
    assert proc.returncode == -signal.SIGKILL
    nothing_left(proc.pid)


# --- 2, 4 and 10: kills and interruptions at fixed points ----------------------------------------------

@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT, signal.SIGTERM])
def test_a_report_cut_before_publishing_leaves_no_file_under_a_final_name(results, tmp_path, sig):
    """Item 2: the CSV written, nothing published yet: no report.* at all (the issue found report.csv cut
    and report.html empty), the temporaries gone (SIGINT, SIGTERM) or, after SIGKILL, swept by the next
    report into the directory, which takes the names report.* (not report-2.*)."""
    out = tmp_path / "out"
    out.mkdir()
    proc = start("report", str(results), "--out", str(out), "--format", "csv,txt", stop_at="written:report.csv")
    stopped(proc)
    _, err = signalled(proc, sig)
    assert not [p for p in out.iterdir() if not p.name.startswith(".")]
    nothing_left(proc.pid)
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig and not temporaries(out)
        quiet(err)
        assert err.strip() == f"scalebench report: interrupted ({signal.Signals(sig).name})"
        return
    assert proc.returncode == -sig and temporaries(out)
    write_report([results], out, ("csv", "txt"))
    assert sorted(p.name for p in out.iterdir()) == ["report.csv", "report.txt"]


def test_a_default_report_killed_leaves_a_directory_the_next_one_removes(tmp_path):
    """Item 10: the default output is a new reports/<UTC time>/ each time: what a killed report left there
    (its directory, holding only its temporaries) is removed by the next report beside it."""
    root = tmp_path / "results"
    rr.write_run(root, "r1", rr.hpl("ucx", {1: 900.0, 2: 1700.0}))
    proc = start("report", str(root), "--format", "csv", stop_at="written:report.csv")
    stopped(proc)
    signalled(proc, signal.SIGKILL)
    [left] = list((root / "reports").iterdir())
    assert [p.name for p in left.iterdir()][0].startswith(".report.csv~")
    time.sleep(1.1)  # the next report's directory is another second's
    write_report([root], formats=("csv",))
    [kept] = list((root / "reports").iterdir())
    assert kept != left and [p.name for p in kept.iterdir()] == ["report.csv"]


def test_an_interruption_while_publishing_takes_back_what_was_published(results, tmp_path):
    """Item 2: Ctrl-C between the report's files being named: none of them stays (all or none)."""
    out = tmp_path / "out"
    proc = start("report", str(results), "--out", str(out), "--format", "csv,txt", stop_at="publish:report.txt")
    stopped(proc)
    assert (out / "report.csv").is_file()  # published already, before the text
    _, err = signalled(proc, signal.SIGINT)
    assert proc.returncode == 130
    quiet(err)
    assert not list(out.iterdir()) if out.exists() else True


@pytest.mark.parametrize("sig, group", [(signal.SIGINT, False), (signal.SIGINT, True), (signal.SIGTERM, True)])
def test_ctrl_c_at_the_parser_or_while_charts_are_drawn_is_one_line(results, tmp_path, sig, group):
    """Item 4: interrupted while the parser imports every command (it was outside main's handler: a
    77-line traceback), or, with the whole process group (the terminal's Ctrl-C), while the chart worker
    draws (its own KeyboardInterrupt traceback): one line, 128 + the signal, no process left."""
    point = "report:charts" if group else "main:parse"
    proc = start("report", str(results), "--out", str(tmp_path / "out"), stop_at=point, worker=group)
    stopped(proc)
    _, err = signalled(proc, sig, group=group)
    assert proc.returncode == 128 + sig
    quiet(err)
    assert err.strip() == f"scalebench report: interrupted ({signal.Signals(sig).name})"
    assert not (tmp_path / "out").exists()
    nothing_left(proc.pid)


def test_an_interruption_inside_an_import_waits_for_its_end(tmp_path, monkeypatch):
    """An exception raised while an extension module initialises can crash it (orjson's did, SIGSEGV):
    a signal inside an import is raised once the import is done."""
    module = tmp_path / "slow_import_for_faults.py"
    module.write_text("import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\n"
                      "end = time.monotonic() + 0.2\nwhile time.monotonic() < end:\n    pass\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with interrupts.handled():
        with pytest.raises(interrupts.Interrupted), interrupts.armed():
            import slow_import_for_faults
            assert slow_import_for_faults.DONE
            time.sleep(5)  # the interruption comes here, from the retry
    assert sys.modules["slow_import_for_faults"].DONE


def test_a_segment_left_by_a_killed_index_write_is_swept(tmp_path):
    """Item 10: SIGKILL while the index segment is written leaves a hidden directory; the next report
    that writes the index removes it (its process is gone), and the index is whole."""
    root = tmp_path / "results"
    rr.write_run(root, "r1", rr.hpl("ucx", {1: 900.0, 2: 1700.0}))
    proc = start("report", str(root), "--out", str(tmp_path / "a"), "--format", "csv", stop_at="index:segment")
    stopped(proc)
    signalled(proc, signal.SIGKILL)
    assert len(temporaries(root / "index")) == 1
    assert any("kept in" in note for note in store.load([root]).notes)
    assert not temporaries(root / "index") and len(list((root / "index").glob("v1-*/*"))) == 1


def test_only_this_hosts_temporaries_of_dead_processes_are_swept(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    host = socket.gethostname()
    names = {"dead": f".a.csv~{host}~{dead.pid}~00ff.tmp", "alive": f".b.csv~{host}~{os.getpid()}~00ff.tmp",
             "other host": f".c.csv~elsewhere~{dead.pid}~00ff.tmp", "not ours": ".d.csv.tmp"}
    for name in names.values():
        (tmp_path / name).write_text("x")
    atomic.sweep(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(v for k, v in names.items() if k != "dead")


# --- 3, 9 and 10: a full disk ------------------------------------------------------------------------------

def test_a_report_on_a_full_disk_is_exit_2_naming_the_file(results, tmp_path, capsys):
    """Item 3: a 2 MB tmpfs: exit 2 with one line naming the file (it was exit 3, OSError), nothing
    left on it; the same for the default output, beside results on a full disk."""
    with tmpfs(tmp_path / "full", "2m") as mount:
        fill(mount, 16 * 1024)  # less than the report takes
        status, _, err = cli(capsys, "report", str(results), "--out", str(mount / "out"), "--format", "csv,txt")
        assert status == 2
        line = one_error_line(err)
        assert line.startswith(f"scalebench report: error: --out: cannot write {mount / 'out'}/report") and \
            line.endswith(": No space left on device"), line
        assert not (mount / "out").exists() and not temporaries(mount)
        (mount / "filler").unlink()
        shutil.copytree(results / "runs", mount / "results" / "runs")
        fill(mount, 64 * 1024)
        status, _, err = cli(capsys, "report", str(mount / "results"), "--format", "csv")
        assert status == 2 and "No space left on device" in err, err
        assert not (mount / "results" / "reports").exists() and not temporaries(mount)


def test_stdout_on_a_full_device_is_exit_2(results, tmp_path):
    """Item 3: `accept > /dev/full`: exit 2, `stdout: cannot write` (it was exit 3)."""
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([str(SCALEBENCH), "accept", str(results), "--thresholds",
                               str(_thresholds(tmp_path, FAILING))], stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=TIMEOUT)
    assert proc.returncode == 2
    quiet(proc.stderr)
    assert proc.stderr == "scalebench accept: error: stdout: cannot write: No space left on device\n"


@pytest.mark.parametrize("command", ["compare", "report"])
def test_stdout_on_a_full_device_is_exit_2_for_every_command(results, tmp_path, capsys, monkeypatch, command):
    extra = ["--out", str(tmp_path / "out"), "--format", "csv"] if command == "report" else []
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        status, _, err = cli(capsys, command, str(results), *extra)
    assert status == 2 and one_error_line(err) == f"scalebench {command}: error: stdout: cannot write: No space left " \
                                                  "on device"


def test_references_freeze_on_a_full_disk_leaves_nothing(tmp_path, capsys):
    """Items 3 and 10: exit 2 naming the file; no .<system>.yaml temporary left (there was)."""
    root = tmp_path / "results"
    for i, rmax in enumerate((900.0, 910.0, 905.0)):
        rr.write_run(root, f"r{i}", rr.hpl("ucx", {1: rmax}), start=f"2026010{i + 1}T000000+0000")
    passing = _thresholds(tmp_path, "criteria:\n  - {name: Rmax, benchmark: HPLCheck, figure: rmax, min: 1}\n")
    with tmpfs(tmp_path / "full", "1m") as mount:
        fill(mount, 0)
        status, _, err = cli(capsys, "references", "freeze", str(root), "--system", "cluster", "--thresholds",
                             str(passing), "--references-dir", str(mount))
        assert status == 2
        assert one_error_line(err) == (f"scalebench references: error: --references-dir: cannot write "
                                       f"{mount / 'cluster.yaml'}: No space left on device")
        assert sorted(p.name for p in mount.iterdir()) == ["filler"]


def test_run_on_a_full_results_disk_is_exit_2_and_leaves_nothing(tmp_path, capsys, monkeypatch):
    """Item 9: it exited 1, "failures are listed above", with an empty provenance.json. A full disk is
    refused before ReFrame starts; one ReFrame fills is said when it stops; the run directory's
    provenance.json is never written in part."""
    from scalebench.site import rundir

    with tmpfs(tmp_path / "full", "2m") as mount:
        fill(mount, 8 * 1024)
        status, _, err = cli(capsys, "run", "--results", str(mount / "results"))
        assert status == 2
        assert one_error_line(err).startswith(f"scalebench run: error: --results: {mount / 'results' / 'runs'}: "
                                              "the file system is full (")
        assert sorted(p.name for p in mount.iterdir()) == ["filler"]

        fill(mount, 0)
        monkeypatch.setenv("SCALEBENCH_RUN_DIR", str(mount / "claimed"))
        with pytest.raises(ResultsError, match="cannot write .*provenance.json: No space left on device"):
            rundir.claim_run_dir()
        assert list((mount / "claimed").iterdir()) == []
        monkeypatch.delenv("SCALEBENCH_RUN_DIR")
        (mount / "filler").unlink()
        (mount / "claimed").rmdir()

        def reframe_filling_the_disk(command, env, run_dir):
            (run_dir / "reframe.log").write_text("[2026-01-01T00:00:00] info: reframe: started\n")
            fill(mount, 0)
            return 1

        monkeypatch.setattr(scalebench.cli, "_reframe", reframe_filling_the_disk)
        status, _, err = cli(capsys, "run", "--results", str(mount / "results"))
        assert status == 2 and "the file system is full (" in one_error_line(err)
        assert "reframe stopped (status 1)" in err


# --- 8: a reader gone ----------------------------------------------------------------------------------

def test_a_reader_gone_keeps_the_exit_code(results, tmp_path):
    """Item 8: `accept ... | true` exited 0 on a FAILED verdict (BrokenPipeError returned EXIT_OK)."""
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    try:
        proc = subprocess.run([str(SCALEBENCH), "accept", str(results), "--thresholds",
                               str(_thresholds(tmp_path, FAILING))], stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=TIMEOUT)
    finally:
        os.close(write)
    assert proc.returncode == 1
    quiet(proc.stderr, lines=0)


def test_a_reader_gone_keeps_a_report_going(results, tmp_path, capsys, monkeypatch):
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w") as gone:
        monkeypatch.setattr(sys, "stdout", gone)
        status, _, err = cli(capsys, "report", str(results), "--out", str(tmp_path / "out"), "--format", "csv")
    assert status == 0 and err == "" and (tmp_path / "out" / "report.csv").is_file()


# --- 5: runs removed under a report ---------------------------------------------------------------------

def test_a_run_report_removed_after_the_walk_costs_that_run(tmp_path, capsys, monkeypatch):
    """Item 5: it was exit 3 (FileNotFoundError from an unguarded stat)."""
    root = tmp_path / "results"
    runs = [rr.write_run(root, f"r{i}", rr.hpl("ucx", {1: 900.0 + i})) for i in range(3)]
    found = store.find_sources

    def then_removed(*args, **kwargs):
        sources = found(*args, **kwargs)
        (runs[1] / "report.json").unlink()
        return sources

    monkeypatch.setattr("scalebench.report.find_sources", then_removed)  # its size, then its read
    status, out, err = cli(capsys, "report", str(root), "--out", str(tmp_path / "out"), "--format", "md")
    assert status == 0, err
    assert f"skipped {runs[1] / 'report.json'}: not readable JSON" in err and "Traceback" not in err
    assert "from 2 run report(s)" in (tmp_path / "out" / "report.md").read_text()


def test_a_run_directory_removed_during_the_walk_costs_that_run(tmp_path, capsys, monkeypatch):
    """Item 5: it lost the whole report (exit 2)."""
    root = tmp_path / "results"
    runs = [rr.write_run(root, f"r{i}", rr.hpl("ucx", {1: 900.0 + i})) for i in range(3)]
    walk = os.walk

    def removing(top, *args, **kwargs):
        for step in walk(top, *args, **kwargs):
            if Path(step[0]) == root / "runs":
                shutil.rmtree(runs[2])
            yield step

    monkeypatch.setattr(store.os, "walk", removing)
    status, _, err = cli(capsys, "report", str(root), "--out", str(tmp_path / "out"), "--format", "md")
    assert status == 0, err
    assert f"warning: skipped {runs[2]}: removed while the results were read" in err
    assert "from 2 run report(s)" in (tmp_path / "out" / "report.md").read_text()


# --- 6: a run cut short -----------------------------------------------------------------------------------

def _cut_run(root: Path, pid: int) -> Path:
    """A run as SIGKILL leaves it mid-check: provenance.json, reframe.log, stage/, no report."""
    run = root / "runs" / f"20260103T000000Z-{socket.gethostname()}-{pid}"
    (run / "stage").mkdir(parents=True)
    (run / "provenance.json").write_text(json.dumps({"created_utc": "2026-01-03T00:00:00Z"}))
    case = "HPLCheck %scale=4_nodes /100cb892 @cluster:cpu+ucx"
    (run / "reframe.log").write_text(
        "[2026-01-03T00:00:01] info: reframe: [ \x1b[32mRUN     \x1b[0m ] HPLCheck %scale=1_node /0a0b0c0d "
        "@cluster:cpu+ucx\n"
        "[2026-01-03T00:01:01] info: reframe: [ \x1b[32m      OK\x1b[0m ] (1/2) HPLCheck %scale=1_node /0a0b0c0d "
        "@cluster:cpu+ucx\n"
        f"[2026-01-03T00:01:02] info: reframe: [ \x1b[32mRUN     \x1b[0m ] {case}\n")
    return run


def test_a_run_killed_mid_check_is_named_and_not_counted(tmp_path, capsys):
    """Item 6: report and accept exited 0 and 1 without a word of it; accept now cannot decide."""
    root = tmp_path / "results"
    rr.write_run(root, "20260101T000000Z-head-1", rr.hpl("ucx", {1: 900.0, 2: 1700.0}))
    gone = subprocess.Popen(["true"])
    gone.wait()
    cut = _cut_run(root, gone.pid)
    expected = (f"{cut}: cut short, no report.json (killed: its process {gone.pid} is gone; begun "
                "2026-01-03T00:00:00Z): it was running HPLCheck %scale=4_nodes /100cb892 @cluster:cpu+ucx "
                "(since 2026-01-03T00:01:02); not counted as a run")
    status, _, err = cli(capsys, "report", str(root), "--out", str(tmp_path / "out"), "--format", "md")
    assert status == 0 and f"warning: {expected}" in err.splitlines()
    assert "from 1 run report(s)" in (tmp_path / "out" / "report.md").read_text()
    thresholds = _thresholds(tmp_path, "criteria:\n  - {name: Rmax, benchmark: HPLCheck, figure: rmax, min: 100, "
                                       "at: [1, 2, 4]}\n")
    status, out, err = cli(capsys, "accept", str(root), "--thresholds", str(thresholds))
    assert status == 1 and f"warning: {expected}" in err.splitlines()
    assert "acceptance NOT DECIDED (a run was cut short" in out and "CUT SHORT" in out
    assert f"run {cut} was cut short; re-run it" in out


def test_a_run_still_going_is_named_so(tmp_path):
    root = tmp_path / "results"
    rr.write_run(root, "20260101T000000Z-head-1", rr.hpl("ucx", {1: 900.0}))
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "reframe"])
    try:
        _cut_run(root, running.pid)
        warnings = store.load([root], index=False).warnings
    finally:
        running.kill()
        running.wait()
    assert any(f"(still running, process {running.pid}; begun" in w for w in warnings), warnings


# --- 7: scalebench run interrupted alone (ReFrame stood in for; tests/integration/test_faults_under_run.py runs it) ---

FAKE_REFRAME = """import os, signal, subprocess, sys, time
run = os.environ["SCALEBENCH_RUN_DIR"]
# a job as ReFrame's local scheduler starts one: in a session of its own, with the run's environment
job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
open(os.path.join(run, "job.pid"), "w").write(str(job.pid))
def abort(signum, frame):
    if sys.argv[1] == "ignores":
        return
    open(os.path.join(run, "report.json"), "w").write("{}")  # its report, aborted cases and all
    sys.exit(1)  # and the job is left behind, as a ReFrame killed mid-abort would leave it
signal.signal(signal.SIGINT, abort)
signal.signal(signal.SIGTERM, abort)
time.sleep(60)
"""

RUN_INTERRUPTED = """import sys
from pathlib import Path
import scalebench.cli as cli
from scalebench import interrupts
cli.RUN_GRACE_S = 2
run_dir = Path(sys.argv[2])
env = dict(__import__("os").environ, SCALEBENCH_RUN_DIR=str(run_dir))
with interrupts.handled():
    try:
        with interrupts.armed():
            cli._reframe([sys.executable, sys.argv[1], sys.argv[3]], env, run_dir)
    except interrupts.Interrupted as stop:
        print(stop.exit_code, stop.detail)
"""


@pytest.mark.parametrize("fake", ["aborts", "ignores"])
def test_run_interrupted_forwards_waits_and_leaves_no_job(tmp_path, fake):
    """Item 7: SIGINT to `scalebench run` alone: ReFrame got 0.25 s and SIGKILL (subprocess.call), and
    its job kept running. Now ReFrame gets the signal and time to write its report (or is killed after
    the grace time), and the run's job is ended by its SCALEBENCH_RUN_DIR."""
    (tmp_path / "reframe.py").write_text(FAKE_REFRAME)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    env = dict(os.environ, SCALEBENCH_STOP_AT="run:reframe")
    proc = subprocess.Popen([sys.executable, "-c", RUN_INTERRUPTED, str(tmp_path / "reframe.py"), str(run_dir), fake],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    stopped(proc)
    deadline = time.monotonic() + TIMEOUT
    while not (run_dir / "job.pid").is_file() or not (run_dir / "job.pid").read_text():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    job = int((run_dir / "job.pid").read_text())
    started = time.monotonic()
    out, err = signalled(proc, signal.SIGINT)
    assert "Traceback" not in err, err
    if fake == "aborts":
        assert out.strip() == f"130 reframe aborted its checks and wrote its report, {run_dir / 'report.json'}"
    else:
        assert out.strip() == f"130 reframe stopped (killed after 2 s) without its report: {run_dir} is listed as " \
                              "cut short"
        assert time.monotonic() - started < 20
    assert not Path(f"/proc/{job}").exists() or _stat(job)[0] == "Z", "the run's job was left running"


# --- 11: a contradiction ---------------------------------------------------------------------------------

def test_a_million_ranks_on_one_node_with_a_1x2_deck_is_named(tmp_path):
    """Item 11: it was reported with 1 000 000 ranks and no word."""
    root = tmp_path / "results"
    case = rr.hpl("ucx", {1: 900.0})[0]
    case["hpl_deck"] = dict(case["hpl_deck"], nodes=1, ranks_per_node=2, p=1, q=2, ranks=2)
    case["num_tasks"] = 1_000_000
    rr.write_run(root, "r1", [case, *rr.hpl("ucx", {2: 1700.0})])
    loaded = store.load([root], index=False)
    assert loaded.table.cases["num_tasks"].to_list() == [8]
    assert any("hpl_deck: made for 1 node(s) x 2 rank(s) (1x2 grid), the case ran 1000000 task(s) on 1 node(s): "
               "its counts contradict each other" in w for w in loaded.warnings), loaded.warnings


def _thresholds(tmp_path: Path, text: str) -> Path:
    path = tmp_path / f"thresholds-{abs(hash(text))}.yaml"
    path.write_text(text)
    return path



SPAWNING = """import sys, time
from scalebench import lifetime
child = lifetime.spawn([sys.executable, "-c", sys.argv[1], sys.argv[2]])
print(child.pid, flush=True)
time.sleep(60)
"""
CHILD = """import signal, sys, time
def ended(signum, frame):
    open(sys.argv[1], "w").write(str(signum))
    sys.exit(0)
signal.signal(signal.SIGTERM, ended)
print("ready", flush=True)
time.sleep(60)
"""


def test_a_child_gets_sigterm_when_scalebench_is_killed_outright(tmp_path):
    """Items 1, 6 and 7: scalebench.lifetime.spawn (ReFrame under `run`, the chart worker): a SIGKILL of
    scalebench sends the child SIGTERM (ReFrame then aborts its checks and writes its report)."""
    parent = subprocess.Popen([sys.executable, "-c", SPAWNING, CHILD, str(tmp_path / "ended")], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    lines = {parent.stdout.readline(), parent.stdout.readline()}  # the child's pid and its "ready", in any order
    assert "ready\n" in lines  # the child's own program runs, its handler set
    deadline = time.monotonic() + TIMEOUT
    parent.kill()
    parent.wait()
    while not (tmp_path / "ended").is_file():
        assert time.monotonic() < deadline, "the child outlived its parent"
        time.sleep(0.02)
    assert (tmp_path / "ended").read_text() == str(int(signal.SIGTERM))
    nothing_left(parent.pid)
