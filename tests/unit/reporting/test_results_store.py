"""What the results store counts as a run: each session once however many copies of it exist, never a
dry run; where a report goes; and the refusals around them (issues 27 and 30). Exit codes as docs/reference.md's
"Exit codes" says: 2 for bad input, one line."""
import json
import os
import shutil
from pathlib import Path

import pytest

import reframe_reports as rr
import scalebench.cli
from scalebench.cli import main
from scalebench.reporting import store
from scalebench.site import rundir, siteconf

DATA = Path(__file__).resolve().parents[2] / "data" / "reframe"
REAL_REPORT = DATA / "hpl_local_run_report.json"
DRY_RUN_REPORT = DATA / "hpl_dry_run_report.json"  # ReFrame 4.10.4's report of `reframe ... --dry-run`
LOCAL_SITE = Path(__file__).resolve().parents[3] / "site_configs" / "sites" / "local.yaml"
THRESHOLDS = "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 10%}\n"


def _run(results: Path, name: str, report: Path = REAL_REPORT) -> Path:
    run = results / "runs" / name
    run.mkdir(parents=True)
    shutil.copy(report, run / "report.json")
    return run


def _hpl_runs(capsys, *argv: str) -> list[str]:
    """The Runs column of `scalebench report`'s HPL table."""
    assert main(["report", *argv, "--format", "txt"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("System"))
    return [line.split()[-1] for line in lines[lines.index(header) + 1:] if line.startswith("local:")]


# --- a dry run is never a run -------------------------------------------------------------------------

def test_reframe_dry_run_marks_its_run_directory(tmp_path, monkeypatch):
    """load_site (what site_configs/*.py call) marks the directory when ReFrame's command line asks for a
    dry run, by the option or a prefix argparse accepts for it; a real run gets no mark."""
    for argv, marked in ((["reframe", "-c", "x", "--dry-run"], True), (["reframe", "--dry", "-n", "HPL"], True),
                         (["reframe", "-c", "x", "-r"], False), (["reframe", "--describe"], False),
                         (["reframe", "-S", "x=--dry-run", "-r"], False)):
        run = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
        monkeypatch.setenv("SCALEBENCH_RUN_DIR", str(run))
        siteconf.load_site(LOCAL_SITE, argv)
        assert (run / rundir.DRY_RUN_MARK).is_file() is marked, argv
        assert (run / "provenance.json").is_file()


@pytest.mark.parametrize("command", [["report", "--format", "csv"], ["accept", "--thresholds", "T"],
                                     ["compare"], ["screen"],
                                     ["references", "freeze", "--system", "local", "--thresholds", "T"]])
def test_a_marked_dry_run_is_read_by_no_command(tmp_path, capsys, command):
    """The reproduction of issue 27.4: after a dry run, every reader refuses (nothing else to read),
    naming the directory as a dry run; none reports its 'passed' cases."""
    run = _run(tmp_path, "20260101T000000Z-dry-1", REAL_REPORT)  # figures and all, but marked
    (run / rundir.DRY_RUN_MARK).write_text("dry\n")
    (tmp_path / "t.yaml").write_text(THRESHOLDS)
    words = 2 if command[0] == "references" else 1
    argv = [*command[:words], str(tmp_path), *(str(tmp_path / "t.yaml") if a == "T" else a for a in command[words:])]
    if command[0] == "references":
        argv += ["--references-dir", str(tmp_path / "refs")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{run}: a ReFrame dry run" in err
    assert not (tmp_path / "refs").exists() and not (tmp_path / "reports").exists()


def test_reframes_own_dry_run_report_is_recognised_without_the_mark(tmp_path, capsys):
    """A dry run of an older scalebench (or of plain ReFrame with another configuration): its report's
    command line says --dry-run. Beside a real run it is skipped with one warning, and counts nothing."""
    _run(tmp_path, "20260101T000000Z-real-1")
    dry = _run(tmp_path, "20260101T000001Z-dry-2", DRY_RUN_REPORT)
    assert _hpl_runs(capsys, str(tmp_path), "--out", str(tmp_path / "o")) == ["1", "1"]
    sessions, warnings = store.ingest([tmp_path])
    assert len(sessions) == 1 and sessions[0].report.startswith(str(tmp_path / "runs" / "20260101T000000Z-real-1"))
    assert warnings == [f"skipped {dry / 'report.json'}: a ReFrame dry run (its command line has --dry-run), "
                        "nothing measured"]
    marked = _run(tmp_path / "b", "r", DRY_RUN_REPORT)
    (marked / rundir.DRY_RUN_MARK).write_text("")
    assert main(["report", str(marked / "report.json"), "--out", str(tmp_path / "o2")]) == 2  # named as a file too


def test_a_dry_runs_perflogs_are_not_read_either(tmp_path):
    run = _run(tmp_path, "dry", DRY_RUN_REPORT)
    (run / "perflogs" / "local" / "default").mkdir(parents=True)
    shutil.copy(DATA / "hpl_local_perflog.log", run / "perflogs" / "local" / "default" / "HPLCheck.log")
    _run(tmp_path, "real")
    sessions, warnings = store.ingest([tmp_path])
    assert [s.source for s in sessions] == ["report"] and len(warnings) == 1


# --- a session counts once ---------------------------------------------------------------------------

def test_copies_of_a_run_count_once_and_are_named(tmp_path, capsys):
    """Issue 30.2: `cp -r results/runs/R results/runs/copy1` twice gave Runs 3."""
    run = _run(tmp_path, "20260101T000000Z-host-1")
    for copy in ("copy1", "copy2"):
        shutil.copytree(run, tmp_path / "runs" / copy)
    assert _hpl_runs(capsys, str(tmp_path), "--out", str(tmp_path / "o")) == ["1", "1"]
    sessions, warnings = store.ingest([tmp_path])
    assert len(sessions) == 1
    uuid = json.loads(REAL_REPORT.read_text())["session_info"]["uuid"]
    assert warnings == [f"skipped {tmp_path / 'runs' / c / 'report.json'}: a copy of the session read from "
                        f"{run / 'report.json'} (uuid:{uuid})" for c in ("copy1", "copy2")]


def test_references_freeze_refuses_one_session_copied_three_times(tmp_path, capsys):
    """Issue 27.5: freeze wrote `runs: 4, spread: 0.0` from one session and three copies."""
    run = _run(tmp_path, "20260101T000000Z-host-1")
    for i in range(3):
        shutil.copytree(run, tmp_path / "runs" / f"copy{i}")
    (tmp_path / "t.yaml").write_text(THRESHOLDS)
    refs = tmp_path / "refs"
    assert main(["references", "freeze", str(tmp_path), "--system", "local", "--thresholds",
                 str(tmp_path / "t.yaml"), "--references-dir", str(refs)]) == 2
    assert "1 run(s), fewer than 3" in capsys.readouterr().err and not refs.exists()


def test_without_a_session_uuid_a_copy_is_known_by_its_content(tmp_path):
    data = json.loads(REAL_REPORT.read_text())
    del data["session_info"]["uuid"]
    for name in ("a", "b"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "report.json").write_text(json.dumps(data))
    data["session_info"]["hostname"] = "elsewhere"  # another session, without a UUID either
    (tmp_path / "runs" / "c").mkdir()
    (tmp_path / "runs" / "c" / "report.json").write_text(json.dumps(data))
    sessions, warnings = store.ingest([tmp_path])
    assert sorted(s.hostname for s in sessions) == ["elsewhere", "vm"]
    assert len(warnings) == 1 and "runs/b/report.json: a copy of the session read from" in warnings[0]
    assert "(sha256:" in warnings[0]


def test_a_report_named_twice_is_read_once_without_a_warning(tmp_path):
    run = _run(tmp_path, "r")
    sessions, warnings = store.ingest([tmp_path, run / "report.json", Path(os.path.relpath(run / "report.json"))])
    assert len(sessions) == 1 and warnings == []


def test_a_copy_holding_only_the_perflogs_is_the_same_session(tmp_path):
    """A run's perflogs copied without its report (rsync of perflogs/ only): the same cases and figures."""
    run = _run(tmp_path, "20260101T000000Z-host-1")
    perflogs = tmp_path / "runs" / "copy" / "perflogs" / "local" / "default"
    perflogs.mkdir(parents=True)
    shutil.copy(DATA / "hpl_local_perflog.log", perflogs / "HPLCheck.log")
    sessions, warnings = store.ingest([tmp_path])
    assert len(sessions) == 1 and sessions[0].report == str(run / "report.json")
    assert warnings == [f"skipped the perflogs of {tmp_path / 'runs' / 'copy'}: a copy of a session already read "
                        "(the same cases with the same figures)"]
    alone, _ = store.ingest([tmp_path / "runs" / "copy"])  # alone, it is the run
    assert [s.source for s in alone] == ["perflogs"]


# --- links ---------------------------------------------------------------------------------------------

def test_a_symlinked_run_directory_is_named_not_followed(tmp_path):
    """Issue 30.13: it was skipped without a word. A link may lead out of the results or back into them
    (a loop): it is not followed; a link given by name is read."""
    elsewhere = _run(tmp_path / "archive", "r")
    (tmp_path / "results" / "runs").mkdir(parents=True)
    _run(tmp_path / "results", "own")
    (tmp_path / "results" / "runs" / "linked").symlink_to(elsewhere)
    (tmp_path / "results" / "runs" / "loop").symlink_to(tmp_path / "results")
    sessions, warnings = store.ingest([tmp_path / "results"])
    assert len(sessions) == 1
    assert warnings == [f"skipped {tmp_path / 'results' / 'runs' / name}: a symbolic link to a directory (to "
                        f"{target}), not followed; give its target to read it"
                        for name, target in (("linked", elsewhere), ("loop", tmp_path / "results"))]
    assert len(store.ingest([tmp_path / "results" / "runs" / "linked"])[0]) == 1


# --- acceptance with nothing to accept ------------------------------------------------------------------

@pytest.mark.parametrize("command", [["accept"], ["references", "freeze", "--system", "local"],
                                     ["report", "--format", "csv"]])
def test_an_acceptance_without_criteria_is_an_error(tmp_path, capsys, command):
    """Issue 30.3: `criteria: []` gave 'PASSED: 0 PASS, 0 FAIL', exit 0, and freeze froze on it."""
    for i in range(3):
        data = json.loads(REAL_REPORT.read_text())
        data["session_info"]["uuid"] = f"00000000-0000-0000-0000-00000000000{i}"
        (tmp_path / "runs" / str(i)).mkdir(parents=True)
        (tmp_path / "runs" / str(i) / "report.json").write_text(json.dumps(data))
    (tmp_path / "t.yaml").write_text("criteria: []\n")
    refs, out = tmp_path / "refs", tmp_path / "out"
    words = 2 if command[0] == "references" else 1
    argv = [*command[:words], str(tmp_path), *command[words:], "--thresholds", str(tmp_path / "t.yaml"),
            *{"references": ["--references-dir", str(refs)], "report": ["--out", str(out)]}.get(command[0], [])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (f"scalebench {command[0]}: error: {tmp_path / 't.yaml'}: criteria: an empty list; an acceptance "
                   "needs at least one criterion\n")
    assert not refs.exists() and not out.exists()


# --- where a report goes -------------------------------------------------------------------------------

def test_a_report_goes_beside_the_results_it_reads(tmp_path, capsys, monkeypatch):
    """Issue 30.8: without --out it went into the repository's results/, whatever was read."""
    data = tmp_path / "data" / "res"
    run = _run(data, "20260101T000000Z-host-1")
    monkeypatch.setenv("SCALEBENCH_RESULTS", str(data))
    for given in (data, data / "runs", run, run / "report.json"):
        assert main(["report", str(given), "--format", "csv"]) == 0
        target = Path(capsys.readouterr().out.splitlines()[-1].removeprefix("Report: "))
        assert target.parent.parent == data / "reports" and target.is_file(), given
    loose = _run(tmp_path / "loose", "x").parent.parent  # a directory holding runs/ of its own
    other = _run(tmp_path / "other", "y")
    assert main(["report", str(data), str(loose), "--format", "csv"]) == 2
    assert "--out: the results given are in 2 results directories" in capsys.readouterr().err
    assert main(["report", str(data), str(other), "--out", str(tmp_path / "o"), "--format", "csv"]) == 0


def test_a_default_report_directory_that_cannot_be_written_says_to_use_out(tmp_path, capsys):
    _run(tmp_path, "r")
    (tmp_path / "reports").write_text("a file where the reports would go\n")
    assert main(["report", str(tmp_path), "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert "(the default, beside the results: name another with --out)" in err and err.count("\n") == 1


# --- scalebench run -------------------------------------------------------------------------------------

def test_run_with_a_missing_config_exits_2_and_creates_nothing(tmp_path, capsys, monkeypatch):
    """Issue 30.13: it exited 1 (ReFrame's) and left a run directory behind."""
    monkeypatch.setattr(scalebench.cli, "_reframe", lambda *a, **k: pytest.fail("reframe started"))
    assert main(["run", "--results", str(tmp_path / "res"), "--config", str(tmp_path / "nonexistent.py")]) == 2
    assert capsys.readouterr().err == (f"scalebench run: error: --config: cannot read {tmp_path / 'nonexistent.py'}: "
                                       "No such file or directory\n")
    assert main(["run", "--results", str(tmp_path / "res"), "--checks", str(tmp_path / "none")]) == 2
    assert not (tmp_path / "res").exists()


def test_a_run_reframe_refused_leaves_no_empty_run_directory(tmp_path, monkeypatch):
    monkeypatch.setattr(scalebench.cli, "_reframe", lambda *a, **k: 2)  # e.g. an option ReFrame does not know
    assert main(["run", "--results", str(tmp_path), "--", "--no-such-option"]) == 2  # bad input
    assert not (tmp_path / "runs").exists()  # nor the runs/ it made
