"""The reproducers of issue 14, one section per class of the outside probe's findings: each ends as a
named one-line error (exit 2), a warning that names what was left out, or a right answer, never a
traceback, a hang or a silently wrong number. scripts/bench/probe_cli.py runs many more of each class."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import reframe_reports as rr
from cli_calls import cli, one_error_line
from scalebench.benchmarks import parse_text
from scalebench.reporting.store import ingest
from scalebench.validation import C_INT_MAX

SCALEBENCH = Path(sys.executable).with_name("scalebench")
DATA = Path(__file__).resolve().parents[2] / "data"
HPL_OUT = (DATA / "hpl" / "mnt_reform_hpl23.txt").read_text()
TIMEOUT_S = 60  # generous: a hang is what these would otherwise be


def scalebench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCALEBENCH), *args], capture_output=True, text=True, timeout=TIMEOUT_S)


def hpl_row(n=10000, nb=192, p=1, q=2, time_s="6.50", gflops="1.0256e+02", residual="1.2e-03", status="PASSED"):
    return (f"WR11C2R4 {n:>12} {nb:>5} {p:>5} {q:>5} {time_s:>18} {gflops:>19}\n"
            f"||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= {residual:>16} ...... {status}\n")


THRESHOLD_LINE = "- Computational tests pass if scaled residuals are less than                16.0\n"


def good_results(root: Path) -> Path:
    rr.write_run(root, "good", [rr.testcase("HPLCheck", {"rmax": (900.0, "Gflop/s"), "rpeak_gflops": (
        1000.0, "Gflop/s"), "efficiency": (90.0, "%")}, params={"scale": f"{n}_nodes"}, num_nodes=n,
        num_tasks=2 * n) for n in (1, 2, 4)])
    return root


# --- 1. any input was read whole, whatever it is ------------------------------------------------------

@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "f"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", ["parse", "tune rank", "accept --thresholds", "report run report"])
def test_a_fifo_is_refused_not_waited_on(tmp_path, fifo, command):
    results = good_results(tmp_path / "results")
    if command == "parse":
        proc = scalebench("parse", "hpl", str(fifo))
    elif command == "tune rank":
        proc = scalebench("tune", "rank", str(fifo))
    elif command == "accept --thresholds":
        proc = scalebench("accept", str(results), "--thresholds", str(fifo))
    else:
        only = tmp_path / "only" / "runs" / "x"
        only.mkdir(parents=True)
        (only / "report.json").symlink_to(fifo)
        proc = scalebench("report", str(only.parents[1]), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert "not a regular file" in one_error_line(proc.stderr)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this machine")
def test_dev_zero_is_refused_not_read_for_ever():
    proc = scalebench("parse", "hpl", "/dev/zero")
    assert proc.returncode == 2 and "/dev/zero is not a regular file" in one_error_line(proc.stderr)


def test_fifos_among_other_files_the_library_reads(tmp_path, fifo, monkeypatch):
    """A Spack lock (hashed for provenance) and a tutorial case copied into a job: named, not waited on;
    a tutorial's gzipped file unpacks to at most textfile's limit."""
    import gzip

    from scalebench.errors import InputError
    from scalebench.benchmarks.openfoam import cases as openfoam
    from scalebench.site import rundir

    assert rundir.file_digest(fifo) == f"unreadable {fifo} (lock file: {fifo} is not a regular file)"
    case = openfoam.OpenfoamCase(name="c", tutorial="t", solver="s", cells=1, steps=1)
    (tmp_path / "tutorials" / "t").mkdir(parents=True)
    os.mkfifo(tmp_path / "tutorials" / "t" / "pipe")
    with pytest.raises(InputError, match="tutorials_dir: cannot copy .*pipe.* is a named pipe"):
        openfoam.copy_tutorial(tmp_path / "tutorials", case, tmp_path / "case")
    (tmp_path / "tutorials" / "t" / "pipe").unlink()
    (tmp_path / "tutorials" / "t" / "big.gz").write_bytes(gzip.compress(b"0" * 4096))
    monkeypatch.setattr(openfoam.textfile, "DEFAULT_LIMIT", 1024)
    with pytest.raises(InputError, match="big.gz unpacks to more than 1024 bytes"):
        openfoam.copy_tutorial(tmp_path / "tutorials", case, tmp_path / "case2")


def test_utf16_output_is_named_not_reported_as_missing_rows(tmp_path, capsys):
    path = tmp_path / "hpl.out"
    path.write_bytes(HPL_OUT.encode("utf-16"))
    status, out, err = cli(capsys, "parse", "hpl", str(path))
    assert status == 2 and "UTF-16 text; convert it to UTF-8" in one_error_line(err)


# --- 2. YAML and JSON were trusted structurally -------------------------------------------------------

def _alias_levels(levels: int, indent: str) -> str:
    lines = [f"{indent}a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{indent}a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("command", ["accept", "report"])
def test_an_alias_bomb_in_params_is_refused_quickly(tmp_path, command):
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text("criteria:\n  - benchmark: HPLCheck\n    min: 1\n    params:\n"
                          + _alias_levels(10, "      "))
    extra = ("--out", str(tmp_path / "out")) if command == "report" else ()
    proc = scalebench(command, str(good_results(tmp_path / "r")), "--thresholds", str(thresholds), *extra)
    assert proc.returncode == 2 and "once its aliases (*name) are expanded" in one_error_line(proc.stderr)


def _aliases_in_at(levels: int) -> str:
    """Criteria whose `at:` lists grow by aliases, level on level: 9**levels values in the last."""
    text = "criteria:\n  - {benchmark: HPLCheck, min: 1, at: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9]}\n"
    for i in range(1, levels):
        text += f"  - {{benchmark: HPLCheck, min: 1, at: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]}}\n"
    return text


@pytest.mark.parametrize("levels, message", [(5, "criteria[1].at: expected every, largest, smallest, a count or a "
                                                 "list of counts, got [[1, 2, 3, 4, ...], "),
                                             (8, "once its aliases (*name) are expanded")])
def test_aliases_deep_in_at_give_a_short_message(tmp_path, capsys, levels, message):
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(_aliases_in_at(levels))
    status, _, err = cli(capsys, "accept", str(good_results(tmp_path / "r")), "--thresholds", str(thresholds))
    assert status == 2 and message in one_error_line(err)


def test_nesting_5000_deep_is_a_named_error_everywhere(tmp_path, capsys):
    deep = "[" * 5000 + "]" * 5000
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text(f"criteria: {deep}\n")
    status, _, err = cli(capsys, "accept", str(good_results(tmp_path / "r")), "--thresholds", str(thresholds))
    assert status == 2 and "nested more than 64 levels deep" in one_error_line(err)
    env = tmp_path / "envs" / "e"
    env.mkdir(parents=True)
    (env / "spack.yaml").write_text(f"spack: {deep}\n")
    status, out, _ = cli(capsys, "spack", "validate", str(env))
    assert status == 1 and "nested more than 64 levels deep" in out
    run = tmp_path / "deep" / "runs" / "x"
    run.mkdir(parents=True)
    (run / "report.json").write_text("[" * 200000 + "]" * 200000)
    status, _, err = cli(capsys, "report", str(tmp_path / "deep"), "--out", str(tmp_path / "out"))
    assert status == 2 and "nested more than 1024 levels deep" in one_error_line(err)


def test_session_info_as_a_list_and_a_400_digit_figure_are_skipped_by_name(tmp_path, capsys):
    results = good_results(tmp_path / "r")
    listed = results / "runs" / "listed"
    listed.mkdir()
    report = json.loads(rr.REAL_REPORT.read_text())
    (listed / "report.json").write_text(json.dumps(dict(report, session_info=[1])))
    rr.write_run(results, "huge", [rr.testcase("HPLCheck", {"rmax": (10**400, "Gflop/s")}, params={"scale": "x"})])
    status, out, err = cli(capsys, "report", str(results), "--out", str(tmp_path / "out"), "--format", "csv")
    assert status == 0
    assert f"{listed / 'report.json'}: malformed ReFrame report (session_info must be an object" in err
    assert "runs/huge/report.json: figure rmax: 1000" in err and "is beyond a float's range" in err


def test_a_case_file_nested_deep_fails_the_case_not_the_check():
    from scalebench.benchmarks.openfoam.cases import OpenfoamCase
    from scalebench.benchmarks.openfoam.outcome import openfoam_outcome

    case = OpenfoamCase(name="c", tutorial="t", solver="s", cells=1, steps=1)
    for text in ("[" * 5000 + "]" * 5000, "[1]"):
        outcome = openfoam_outcome(case, lambda name: text, stdout="log", tasks=1, steps=1)
        assert outcome.problems[0].startswith("case set-up failed: ")


@pytest.mark.parametrize("what", ["thresholds", "spack.yaml"])
def test_files_that_are_not_utf8_are_named(tmp_path, capsys, what):
    if what == "thresholds":
        path = tmp_path / "t.yaml"
        path.write_bytes("criteria:\n  - {benchmark: HPLCheck, min: 1, name: caf\u00e9}\n".encode("latin-1"))
        status, _, err = cli(capsys, "accept", str(good_results(tmp_path / "r")), "--thresholds", str(path))
        assert status == 2 and "not UTF-8 text (byte 53 is b'\\xe9')" in one_error_line(err)
    else:
        env = tmp_path / "envs" / "e"
        env.mkdir(parents=True)
        (env / "spack.yaml").write_bytes("spack:\n  specs: [caf\u00e9]\n".encode("latin-1"))
        status, out, _ = cli(capsys, "spack", "validate", str(env))
        assert status == 1 and "not UTF-8 text (byte 20" in out


# --- 3. spack validate expanded matrices combinatorially and followed includes anywhere ---------------

def _env(root: Path, spack: str) -> Path:
    (root / "sites" / "x").mkdir(parents=True)
    (root / "e").mkdir()
    (root / "e" / "spack.yaml").write_text(spack)
    return root / "e"


def test_a_definition_crossed_ten_times_is_a_finding_not_a_hang(tmp_path):
    env = _env(tmp_path, "spack:\n  include:\n  - ../sites/$SCALEBENCH_SPACK_SITE\n  definitions:\n"
                         "  - d: [hpl, lammps, openfoam, hpl, lammps, openfoam, hpl, lammps, openfoam]\n"
                         "  specs:\n  - matrix:\n" + "    - [$d]\n" * 10)
    proc = scalebench("spack", "validate", str(env))
    assert proc.returncode == 1
    assert "spack.specs[0].matrix: expands to 3486784401 specs or more; scalebench checks at most 10000" in proc.stdout


@pytest.mark.parametrize("include", ["/etc/passwd", "../../../../../../../../etc/passwd"])
def test_an_include_outside_the_tree_is_named_not_read(tmp_path, capsys, include):
    env = _env(tmp_path, f"spack:\n  include:\n  - {include}\n  - ../sites/$SCALEBENCH_SPACK_SITE\n  specs: [hpl]\n")
    status, out, err = cli(capsys, "spack", "validate", str(env))
    assert status == 1 and f"'{include}' leads outside the environment tree" in out and "not read" in out
    assert "root:" not in out + err and "/etc/passwd: <root>" not in out


# --- 4. parsed rows were trusted ----------------------------------------------------------------------

@pytest.mark.parametrize("field, value, reason", [
    ("gflops", "-4.2610e+00", "Gflops -4.261 Gflop/s is not positive"),
    ("gflops", "0.0000e+00", "Gflops 0 Gflop/s is not positive"),
    ("n", 0, "N=0: HPL takes 1 to 2147483647"),
    ("p", 0, "P=0: HPL takes 1 to 2147483647"),
    ("residual", "nan", "residual is not finite (nan)"),
    ("residual", "-1.0e+00", "residual -1 is negative"),
    ("residual", "1.0e+03", "residual 1000 is above the threshold 16"),
    ("time_s", "-6.50", "time -6.5 s is negative"),
    ("time_s", "nan", "time is not finite (nan)"),
])
def test_a_passed_row_that_cannot_be_is_failed_with_its_reason(capsys, tmp_path, field, value, reason):
    path = tmp_path / "hpl.out"
    path.write_text(THRESHOLD_LINE + hpl_row(**{field: value}))
    status, out, _ = cli(capsys, "parse", "hpl", str(path))
    data = json.loads(out)
    assert status == 0 and data["rmax_gflops"] is None
    assert data["rows"][0]["status"] == "FAILED" and data["rows"][0]["reason"] == reason


def test_tune_never_ranks_or_freezes_an_impossible_winner(tmp_path, capsys):
    path = tmp_path / "hpl.out"
    path.write_text(THRESHOLD_LINE + hpl_row(gflops="-4.2610e+00") + hpl_row(time_s="7.41", gflops="8.9970e+01"))
    status, _, err = cli(capsys, "tune", "freeze", str(path), "--system", "s", "--partition", "p",
                         "--decks-dir", str(tmp_path / "decks"))
    assert status == 0 and "frozen: WR11C2R4 N=10000 NB=192 1x2 89.97 Gflop/s" in err
    assert "left out: 1 impossible values" in err


def test_a_summary_claiming_more_passed_tests_than_rows_is_warned_about(tmp_path, capsys):
    path = tmp_path / "hpl.out"
    path.write_text(THRESHOLD_LINE + hpl_row() + "Finished      5 tests with the following results:\n"
                    "              5 tests completed and passed residual checks,\n"
                    "              0 tests completed and failed residual checks,\n"
                    "              0 tests skipped because of illegal input values.\nEnd of Tests.\n")
    status, out, err = cli(capsys, "parse", "hpl", str(path))
    assert status == 0
    assert "warning: the 'Finished' summary counts 5 tests completed but 1 result rows were found" in err
    assert json.loads(out)["problems"] == ["the 'Finished' summary counts 5 tests completed but 1 result rows "
                                           "were found"]


@pytest.mark.parametrize("kind", ["osu", "netpipe", "hpcc"])
def test_a_last_line_cut_while_written_is_dropped_and_said(kind):
    text = next(p for p in sorted((DATA / kind).glob("*.txt")) if not p.name.endswith(".source.txt")).read_text()
    lines = text.rstrip("\n").split("\n")
    last = max(i for i, line in enumerate(lines) if len(line.strip()) > 3)
    cut = "\n".join(lines[:last] + [lines[last][:-2]])  # the last two characters never written
    whole = parse_text(kind, "\n".join(lines[:last]) + "\n")
    got = parse_text(kind, cut)
    (warning,) = got.pop("warnings")
    assert warning.startswith("the last line, '") and warning.endswith(", has no line end (the output was cut "
                                                                       "while written): dropped")
    assert got == whole


def test_osu_row_cut_mid_number_is_not_read_as_a_value():
    text = "# OSU MPI Bandwidth Test v7.3\n# Size      Bandwidth (MB/s)\n2097152 23181.31\n4194304 2328"
    out = parse_text("osu", text)
    assert out["rows"] == [[2097152, 23181.31]] and "'4194304 2328'" in out["warnings"][0]


# --- 5. impossible values reached the reports and verdicts -------------------------------------------

def test_an_efficiency_past_100_percent_of_nominal_rpeak_is_kept(tmp_path):
    """Rpeak is at the nominal clock, and a turbo clock beats it: 101% is a measurement, not a typo."""
    case = rr.testcase("HPLCheck", {"rmax": (64.5, "Gflop/s"), "efficiency": (100.8, "%")},
                       params={"scale": "1_core"}, num_nodes=1, num_tasks=1)
    rr.write_run(tmp_path / "r", "turbo", [case])
    sessions, warnings = ingest([tmp_path / "r"])
    assert warnings == [] and sessions[0].cases[0].figure("efficiency") == 100.8


@pytest.mark.parametrize("label, figures, counts", [
    ("Rpeak 0", {"rmax": (45.7, "Gflop/s"), "rpeak_gflops": (0.0, "Gflop/s")}, {}),
    ("Rpeak -64", {"rmax": (45.7, "Gflop/s"), "rpeak_gflops": (-64.0, "Gflop/s")}, {}),
    ("efficiency -50%", {"rmax": (45.7, "Gflop/s"), "efficiency": (-50.0, "%")}, {}),
    ("efficiency 1e300%", {"rmax": (45.7, "Gflop/s"), "efficiency": (1e300, "%")}, {}),
    ("efficiency 250%", {"rmax": (45.7, "Gflop/s"), "efficiency": (250.0, "%")}, {}),
    ("Rmax 0", {"rmax": (0.0, "Gflop/s")}, {}),
    ("nodes -1", {"rmax": (45.7, "Gflop/s")}, {"num_nodes": -1}),
    ("nodes 1e30", {"rmax": (45.7, "Gflop/s")}, {"num_nodes": 1e30}),
    ("ranks 0", {"rmax": (45.7, "Gflop/s")}, {"num_tasks": 0}),
])
def test_a_run_with_an_impossible_value_is_skipped_by_name(tmp_path, capsys, label, figures, counts):
    results = good_results(tmp_path / "r")
    case = rr.testcase("HPLCheck", figures, params={"scale": "1_nodes"}, num_nodes=1, num_tasks=2)
    case.update(counts)
    rr.write_run(results, "bad", [case])
    status, out, err = cli(capsys, "report", str(results), "--out", str(tmp_path / "out"), "--format", "csv")
    assert status == 0
    assert f"warning: skipped HPLCheck %scale=1_nodes in {results / 'runs' / 'bad' / 'report.json'}: " in err
    assert "| 900.00 " in out.replace("  ", " | ") or "900.00" in out  # the median is the good runs' alone
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text("criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 95%}\n")
    status, out, _ = cli(capsys, "accept", str(results), "--thresholds", str(thresholds))
    assert status == 1 and "1e+300" not in out  # 90 % of the good runs, below 95 %: no 1e300 % PASS


def test_optional_no_is_a_type_error_not_true(tmp_path, capsys):
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text("criteria:\n  - {benchmark: HPLCheck, min: 1, at: 4096, optional: \"no\"}\n")
    status, _, err = cli(capsys, "accept", str(good_results(tmp_path / "r")), "--thresholds", str(thresholds))
    assert status == 2 and "criteria[0].optional: must be true or false, got 'no'" in one_error_line(err)


# --- 6. unbounded numbers ----------------------------------------------------------------------------

@pytest.mark.parametrize("command", [("deck",), ("tune", "deck")])
def test_n_never_exceeds_hpls_c_int(capsys, command):
    status, out, _ = cli(capsys, *command, "--nodes", "1000000", "--ranks-per-node", "2", "--memory-per-node", "64TiB")
    ns = next(line for line in out.splitlines() if line.rstrip().endswith(" Ns"))
    assert status == 0 and all(int(n) <= C_INT_MAX for n in ns.split()[:-1])


@pytest.mark.parametrize("clock", ["1e308", "1e-320"])
def test_peak_clock_out_of_any_cpus_range_is_an_error(capsys, clock):
    status, out, err = cli(capsys, "peak", "--clock-ghz", clock, "--json")
    assert status == 2 and out == "" and f"clock_ghz: {float(clock)!r} is not a number from 0.01 to 100.0" in err


def test_peak_overrides_are_labelled_by_where_they_came_from(capsys):
    status, out, _ = cli(capsys, "peak", "--clock-ghz", "2.5", "--cores", "4", "--flops-per-cycle", "16")
    assert status == 0 and "clock_ghz = 2.5 (command line)" in out and "(site config)" not in out


# --- 7. exit codes and messages ----------------------------------------------------------------------

def test_an_internal_error_exits_3_with_one_line_and_a_log(tmp_path, capsys, monkeypatch):
    import scalebench.cli as cli_module

    def crash(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli_module, "cmd_peak", crash)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    status, out, err = cli(capsys, "peak")
    line = one_error_line(err)
    assert status == 3 and line.startswith("scalebench peak: internal error (RuntimeError: a bug); please report")
    log = Path(line.rsplit(" ", 1)[1])
    assert log.parent == tmp_path and "Traceback" in log.read_text() and "RuntimeError: a bug" in log.read_text()


def test_accept_fail_and_bad_input_have_different_exit_codes(tmp_path, capsys):
    results = good_results(tmp_path / "r")
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text("criteria:\n  - {benchmark: HPLCheck, figure: rmax, min: 1000}\n")
    assert cli(capsys, "accept", str(results), "--thresholds", str(thresholds))[0] == 1
    thresholds.write_text("criteria:\n  - {benchmark: HPLCheck, figure: rmaxx, min: 1000}\n")
    assert cli(capsys, "accept", str(results), "--thresholds", str(thresholds))[0] == 2


@pytest.mark.parametrize("value", ["a|b", "line\nbreak", "<script>alert(1)</script>", "back\\|slash"])
def test_markdown_holds_whatever_a_value_holds(tmp_path, capsys, value):
    """The value as a parameter (headings, captions), as a host name (a table cell) and as a node list (a
    note under a row)."""
    results = tmp_path / "r"
    cases = rr.lammps("tcp", {1: 100.0, 2: 190.0}, workload=value)
    for case in cases:
        case["job_nodelist"] = ["nodeZZ" + value]
    rr.write_run(results, "a", cases, hostname="hostZZ" + value)
    status, _, _ = cli(capsys, "report", str(results), "--out", str(tmp_path / "out"), "--format", "md")
    md = (tmp_path / "out" / "report.md").read_text()
    assert status == 0 and "<script" not in md and not any(line.startswith("break") for line in md.splitlines())
    tables = notes = 0
    for block in md.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        cells = {len(row.replace("\\\\", "").replace("\\|", "").split("|")) for row in rows}
        assert len(cells) <= 1, block
        tables += any("hostZZ" in row for row in rows)
        notes += any(line.startswith("- [") and "Node lists: nodeZZ" in line for line in block.splitlines())
    assert tables and notes, "the value is in no table or note"


@pytest.mark.parametrize("args, message", [
    (("parse", "hpl", ""), "argument file: no file or directory name given"),
    (("spack", "validate", "{tmp}/some_file.txt"), "some_file.txt is not a directory of environments"),
    (("report", "{tmp}/some_file.txt", "--out", "{tmp}/out"), "is neither a run report (.json) nor a perflog"),
])
def test_messages_name_the_mistake(tmp_path, capsys, args, message):
    (tmp_path / "some_file.txt").write_text("junk\n")
    status, _, err = cli(capsys, *(a.format(tmp=tmp_path) for a in args))
    assert status == 2 and message in one_error_line(err)
    assert not (tmp_path / "out").exists()


def test_drawing_says_nothing_on_stderr():
    from scalebench.reporting import plots
    from scalebench.reporting.document import Chart, Line, Panel

    chart = Chart("c", "c", (Panel("\u4e2d", "x", "y", (Line("\u4e2d", (1.0, 2.0), (1.0, 2.0), "g"),)),))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plots.render_all([chart])
    assert caught == []


# --- 8. tune freeze file handling --------------------------------------------------------------------

def test_freeze_into_a_file_as_decks_dir_is_named_and_leaves_it(tmp_path, capsys):
    path = tmp_path / "hpl.out"
    path.write_text(THRESHOLD_LINE + hpl_row())
    decks = tmp_path / "decks"
    decks.write_text("keep\n")
    status, _, err = cli(capsys, "tune", "freeze", str(path), "--system", "s", "--partition", "p",
                         "--decks-dir", str(decks))
    assert status == 2 and f"decks_dir: cannot create {decks}/s: Not a directory" in one_error_line(err)
    assert decks.read_text() == "keep\n"


def test_freeze_force_onto_a_directory_leaves_no_backup(tmp_path, capsys):
    path = tmp_path / "hpl.out"
    path.write_text(THRESHOLD_LINE + hpl_row())
    (tmp_path / "decks" / "s" / "p.yaml").mkdir(parents=True)
    status, _, err = cli(capsys, "tune", "freeze", str(path), "--system", "s", "--partition", "p",
                         "--decks-dir", str(tmp_path / "decks"), "--force")
    assert status == 2 and "p.yaml: not a regular file, so no frozen deck to replace" in one_error_line(err)
    assert sorted(p.name for p in (tmp_path / "decks" / "s").iterdir()) == ["p.yaml"]


def test_a_job_asking_more_memory_than_its_node_has_is_refused():
    from scalebench.errors import InputError
    from scalebench.site.partition import JobOptions

    with pytest.raises(InputError, match="not between 1 MiB and the partition's memory_per_node"):
        JobOptions.from_site({"memory": "99999999999999999TiB"}, "p.job_options", 768 * 2**30)
    assert JobOptions.from_site({"memory": "700GiB"}, "p.job_options", 768 * 2**30).memory == f"{700 * 1024}M"


def test_more_trials_than_hpl_dat_lists_is_refused():
    from scalebench.errors import InputError
    from scalebench.hpl.case_plan import HplSettings

    with pytest.raises(InputError, match="at most 20"):
        HplSettings(trials=99999999999999999999)


def test_a_known_name_refused_for_another_reason_is_not_suggested_to_itself():
    from scalebench.validation import did_you_mean
    assert did_you_mean("gflops_per_watt", ["gflops_per_watt", "rmax"]) == ""
    assert did_you_mean("gflops_per_wat", ["gflops_per_watt", "rmax"]) == " (did you mean 'gflops_per_watt'?)"
