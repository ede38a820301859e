"""Results store ingest and the Markdown/terminal report, on a real ReFrame 4.10 run report."""
import json
import shutil
import uuid
from pathlib import Path

import pytest

from scalebench.errors import ResultsError
from scalebench import report
from scalebench.reporting import sections, store as results, tidy
from scalebench.reporting.hpl_table import hpl_terminal_table

REAL_REPORT = Path(__file__).resolve().parents[2] / "data" / "reframe" / "hpl_local_run_report.json"


@pytest.fixture
def results_dir(tmp_path):
    run = tmp_path / "runs" / "20260101T000000Z-host-1"
    run.mkdir(parents=True)
    shutil.copy(REAL_REPORT, run / "report.json")
    return tmp_path


def test_ingest_reads_cases_and_figures(results_dir):
    sessions, warnings = results.ingest([results_dir])
    assert warnings == [] and len(sessions) == 1
    ran = [c for c in sessions[0].cases if c.result != "skip"]
    assert {c.params["scale"] for c in ran} == {"1_core", "1_node"}
    one_node = next(c for c in ran if c.params["scale"] == "1_node")
    assert one_node.num_tasks == 2 and one_node.stack == "openmpi-sm"
    assert one_node.figures["rmax"] == (66.23, "Gflop/s")
    assert one_node.provenance["hpl_deck"]["n"] == 10368


def test_records_are_one_row_per_figure(results_dir):
    rows = results.load([results_dir]).table.records
    assert rows.height == 10  # 2 cases x (rmax, rpeak_gflops, efficiency, n, time)
    assert set(rows["figure"]) == {"rmax", "rpeak_gflops", "efficiency", "n", "time"}


def test_malformed_reports_and_cases_are_skipped_with_a_warning_naming_the_file(results_dir):
    """A report that is not JSON is skipped; in one that is, only the broken test case is."""
    bad = results_dir / "runs" / "broken"
    bad.mkdir()
    (bad / "report.json").write_text(REAL_REPORT.read_text()[:5000])  # cut mid-file
    partial = results_dir / "runs" / "partial"
    partial.mkdir()
    data = json.loads(REAL_REPORT.read_text())
    del data["runs"][0]["testcases"][0]["system"]
    data["session_info"]["uuid"] = str(uuid.uuid4())  # another session, not a copy
    (partial / "report.json").write_text(json.dumps(data))
    sessions, warnings = results.ingest([results_dir])
    assert len(sessions) == 2
    assert len(warnings) == 2
    assert any("broken/report.json" in w and "not readable JSON" in w for w in warnings)
    assert any(w.startswith("skipped HPLCheck %scale=1_core in ") and "partial/report.json" in w
               and "malformed (KeyError: 'system')" in w for w in warnings)
    partial_session = next(s for s in sessions if "partial" in s.report)
    assert len(partial_session.cases) == len(data["runs"][0]["testcases"]) - 1


def test_other_json_files_are_ignored(results_dir):
    (results_dir / "notes.json").write_text('{"not": "a report"}')
    sessions, warnings = results.ingest([results_dir])
    assert len(sessions) == 1 and warnings == []


def test_missing_results_path_is_a_named_error(tmp_path):
    with pytest.raises(ResultsError, match="does not exist"):
        results.ingest([tmp_path / "nope"])


def test_report_table_and_markdown(results_dir, tmp_path):
    written = report.write_report([results_dir], tmp_path / "out", formats=("md",))
    text = written.files["md"].read_text()
    assert "| local:default | openmpi-sm | 1_node | 1 | 2 | 10368 | 192 | 1 x 2 | 66.23 | 128.0 | 51.7% |" in text
    assert "time budget: 8 s" in text  # the N policy is stated
    assert "ReFrame overhead" in text
    table = hpl_terminal_table(written.table)
    assert table.splitlines()[0].split()[:3] == ["System", "Stack", "Scale"]


def test_report_never_replaces_an_existing_report(results_dir, tmp_path):
    first = report.write_report([results_dir], tmp_path / "out", formats=("md", "csv")).files
    first_text = {fmt: path.read_text() for fmt, path in first.items()}
    second = report.write_report([results_dir], tmp_path / "out", formats=("md", "csv")).files
    assert second["md"].name == "report-2.md" and second["csv"].name == "report-2.csv"
    assert {fmt: path.read_text() for fmt, path in first.items()} == first_text


# --- the store: perflogs, provenance, append-only, concurrency --------------------------------------

REAL_PERFLOG = REAL_REPORT.with_name("hpl_local_perflog.log")


def _perflog_run(root: Path, name: str) -> Path:
    run = root / "runs" / name
    (run / "perflogs" / "local" / "default").mkdir(parents=True)
    shutil.copy(REAL_PERFLOG, run / "perflogs" / "local" / "default" / "HPLCheck.log")
    return run


def _figures(paths):
    return sorted(results.load(paths).table.with_cases().select("name", "figure", "value", "unit").rows())


def test_a_run_without_report_is_read_from_its_perflogs_with_a_warning(tmp_path):
    _perflog_run(tmp_path, "interrupted")
    sessions, warnings = results.ingest([tmp_path])
    assert [s.source for s in sessions] == ["perflogs"]
    assert len(warnings) == 1 and "interrupted: cut short, no report.json" in warnings[0] and "10 figure(s)" in warnings[0]
    assert _figures([tmp_path]) == _figures([REAL_REPORT])  # the same figures as the real report of that run
    case = next(c for c in sessions[0].cases if c.params["scale"] == "1_node")
    assert case.num_tasks == 2 and case.cores == 2 and case.nodelist == "vm" and case.stack == "openmpi-sm"


def test_perflogs_are_ignored_when_the_report_is_there(results_dir):
    run = next((results_dir / "runs").iterdir())
    _perflog_run(results_dir, run.name)
    sessions, warnings = results.ingest([results_dir])
    assert warnings == [] and [s.source for s in sessions] == ["report"]


def test_a_broken_report_falls_back_to_the_perflogs(tmp_path):
    run = _perflog_run(tmp_path, "broken")
    (run / "report.json").write_text(REAL_REPORT.read_text()[:3000])
    sessions, warnings = results.ingest([tmp_path])
    assert [s.source for s in sessions] == ["perflogs"]
    assert any("broken/report.json: not readable JSON" in w for w in warnings)
    assert any("broken: no usable report.json" in w for w in warnings)


def test_a_torn_perflog_line_is_skipped_and_counted(tmp_path):
    run = _perflog_run(tmp_path, "torn")
    log = run / "perflogs" / "local" / "default" / "HPLCheck.log"
    log.write_text(log.read_text() + "2026-11-22T03:17:00|pass|HPLCheck %scale=2_nodes|local|def\n")
    loaded = results.load([tmp_path])
    assert loaded.table.record_count == 10
    assert any("HPLCheck.log: skipped 1 incomplete line(s)" in w for w in loaded.warnings)


def test_a_last_perflog_line_without_its_line_end_is_dropped_even_when_it_has_every_cell(tmp_path):
    """ReFrame was still writing it: its last cell may be a number cut short (66.23 -> 66.2)."""
    run = _perflog_run(tmp_path, "cut")
    log = run / "perflogs" / "local" / "default" / "HPLCheck.log"
    lines = log.read_text().splitlines(keepends=True)
    last = lines[-1].rstrip("\n")
    log.write_text("".join(lines[:-1]) + last[:-1])  # the complete line minus its last character and end
    loaded = results.load([tmp_path])
    assert loaded.table.record_count == 9
    assert any("HPLCheck.log: skipped its last line, cut short (no line end)" in w for w in loaded.warnings)


def test_provenance_of_the_run_not_of_the_checkout(results_dir, monkeypatch):
    run = next((results_dir / "runs").iterdir())
    (run / "provenance.json").write_text(json.dumps({"git_describe": "v1.2-3-gabcdef-dirty",
                                                     "spack_lock_sha256": "0123abcd"}))
    import subprocess

    def no_git(*args, **kwargs):
        raise AssertionError("report generation must not run git")

    monkeypatch.setattr(subprocess, "run", no_git)
    monkeypatch.setattr(subprocess, "Popen", no_git)
    sessions, _ = results.ingest([results_dir])
    session = sessions[0]
    assert session.git_describe == "v1.2-3-gabcdef-dirty" and session.version == "4.10.4"
    assert session.hostname == "vm" and "reframe -C" in session.cmdline
    case = next(c for c in session.cases if "rmax" in c.figures)
    assert case.spec_hash == "0123abcd" and case.binary == "hpcc"


def test_tidy_csv_has_parameters_and_provenance_columns(results_dir):
    import csv
    import io

    loaded = results.load([results_dir])
    tidy.write_csv(tidy.frame(loaded.table), results_dir / "tidy.csv")
    table = list(csv.DictReader(io.StringIO((results_dir / "tidy.csv").read_text())))
    assert len(table) == loaded.table.record_count == 10
    one = next(r for r in table if r["scale"] == "1_node" and r["figure"] == "rmax")
    assert (one["system"], one["partition"], one["stack"], one["benchmark"]) == ("local", "default", "openmpi-sm",
                                                                                 "HPLCheck")
    assert (one["num_nodes"], one["num_tasks"], one["cores"], one["value"], one["unit"]) == ("1", "2", "2", "66.23",
                                                                                             "Gflop/s")
    assert one["deck"] == "N=10368 NB=192 1x2 mem=3.4%" and one["binary"] == "hpcc" and one["nodelist"] == "vm"
    assert one["reframe_version"] == "4.10.4" and one["report"].endswith("report.json")
    eff = next(r for r in table if r["scale"] == "1_node" and r["figure"] == "efficiency")
    assert eff["reference"] == "50.0"  # the efficiency floor ReFrame checked


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_ingest_and_reports_never_touch_the_runs(results_dir, tmp_path):
    _perflog_run(results_dir, "interrupted")
    before = _tree(results_dir / "runs")
    report.write_report([results_dir], results_dir / "runs" / "interrupted" / "report", formats=("md", "csv"))
    after = {k: v for k, v in _tree(results_dir / "runs").items() if not k.startswith("interrupted/report/")}
    assert after == before


def test_concurrent_runs_and_reports_lose_nothing(tmp_path):
    """Runs writing their directories and reports written into one directory at the same time."""
    import threading

    def run(i: int) -> None:
        run_dir = tmp_path / "runs" / f"20260101T000000Z-host-{i}"
        run_dir.mkdir(parents=True)
        data = json.loads(REAL_REPORT.read_text())
        data["session_info"].update(hostname=f"host{i}", uuid=str(uuid.uuid4()))
        (run_dir / "report.json").write_text(json.dumps(data))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    sessions, warnings = results.ingest([tmp_path])
    assert warnings == [] and sorted(s.hostname for s in sessions) == [f"host{i}" for i in range(8)]

    written: list = []
    writers = [threading.Thread(target=lambda: written.append(
        report.write_report([tmp_path / "runs"], tmp_path / "out", formats=("csv",)).files["csv"]))
        for _ in range(6)]
    for t in writers:
        t.start()
    for t in writers:
        t.join()
    assert len(set(written)) == 6
    assert all(len(path.read_text().splitlines()) == 1 + 8 * 10 for path in written)


# --- the command line ----------------------------------------------------------------------------------

def test_run_with_report_prints_the_table_then_the_html_path_last(tmp_path, monkeypatch, capsys):
    """`scalebench run --report` (make run): ReFrame replaced by a copy of a real run report."""
    import scalebench.cli
    from scalebench.cli import main

    def fake_reframe(command, env, run_dir):
        shutil.copy(REAL_REPORT, Path(env["SCALEBENCH_RUN_DIR"]) / "report.json")
        return 0

    monkeypatch.setattr(scalebench.cli, "_reframe", fake_reframe)
    assert main(["run", "--results", str(tmp_path), "--report"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("Report: ") and out[-1].endswith("/report/report.html")
    assert any(line.split()[:3] == ["System", "Stack", "Scale"] for line in out)
    html = Path(out[-1].removeprefix("Report: "))
    assert html.is_file() and (html.parent / "report.md").is_file() and (html.parent / "report.csv").is_file()


def test_report_command_formats_and_errors(results_dir, tmp_path, capsys):
    from scalebench.cli import main

    assert main(["report", str(results_dir), "--out", str(tmp_path / "o"), "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"Report: {tmp_path / 'o' / 'report.csv'}"
    assert main(["report", str(results_dir), "--format", "pdf"]) == 2
    assert "--format: pdf not one of md, html, csv, txt" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_a_nan_figure_is_read_but_not_a_measurement(tmp_path):
    """Python's json writes NaN as a bare word (not JSON): the report is still read, the figure unusable."""
    text = REAL_REPORT.read_text().replace("45.74,", "NaN,", 1)  # the 1_core case's Rmax
    assert "NaN" in text
    run = tmp_path / "runs" / "nan"
    run.mkdir(parents=True)
    (run / "report.json").write_text(text)
    loaded = results.load([tmp_path])
    assert loaded.warnings == []
    rmax = {r["name"]: r for r in loaded.table.with_cases().filter(figure="rmax").to_dicts()}
    assert rmax["HPLCheck %scale=1_core"]["value"] is None and not rmax["HPLCheck %scale=1_core"]["usable"]
    assert rmax["HPLCheck %scale=1_node"]["value"] == 66.23


def test_reframe_overhead_counts_overlapping_jobs_once():
    # Wall 100 s; jobs busy over [0, 30] and [20, 50] (overlap) and [60, 70]: busy 60 s -> overhead 40 s.
    from scalebench.reporting.sections.appendix import _overhead

    assert _overhead(100.0, [(0.0, 30.0), (20.0, 50.0), (60.0, 70.0)]) == ("100.0", "40.0 (13.3 per case)")


def test_one_check_on_several_environments_is_several_cases_and_retries_keep_the_last(tmp_path):
    import reframe_reports as rr
    # ReFrame gives a check variant the same unique_name on every partition and environment.
    cases = [rr.testcase("NetPIPECheck", {"latency_1": (t, "us")}, params={"placement": "intra_node"},
                         environ=env, stack=env) for env, t in (("openmpi", 0.4), ("mpich", 0.5))]
    data = rr.report(cases)
    for case in data["runs"][0]["testcases"]:
        case["unique_name"] = "NetPIPECheck_0"
    retry = json.loads(json.dumps(data["runs"][0]))
    retry["run_index"] = 1
    retry["testcases"] = [dict(retry["testcases"][1], perfvalues={
        "local:default:latency_1": [0.45, 0, None, None, "us", "pass"]})]
    data["runs"].append(retry)
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    (run / "report.json").write_text(json.dumps(data))
    sessions, _ = results.ingest([tmp_path])
    assert sorted((c.stack, c.figures["latency_1"][0]) for c in sessions[0].cases) == [("mpich", 0.45),
                                                                                       ("openmpi", 0.4)]


def test_skip_reasons_come_from_the_run_log(tmp_path):
    import reframe_reports as rr
    cases = [rr.testcase("NetPIPECheck", {}, params={"placement": "inter_node"}, environ=env, stack=env,
                         result="skip") for env in ("openmpi", "mpich")]
    run = rr.write_run(tmp_path, "r", cases)
    (run / "reframe.log").write_text(
        "[2026-11-22T05:55:13.369900] info: reframe: [ \x1b[33m    SKIP\x1b[0m ] (1/8) NetPIPECheck "
        "%placement=inter_node /02dbaacd @local:default+openmpi [inter_node needs 2 nodes; the partition has 1]\n")
    sessions, _ = results.ingest([tmp_path])
    reasons = {c.environ: c.fail_reason for c in sessions[0].cases}
    assert reasons == {"openmpi": "inter_node needs 2 nodes; the partition has 1", "mpich": None}


SLURM_STDERR = """srun: Job step aborted: Waiting up to 7 seconds for job step to finish.
slurmstepd-n2: error: *** JOB 4 ON n2 CANCELLED AT 2026-11-22T06:05:44 DUE TO TIME LIMIT ***
srun: got SIGCONT
srun: error: n2: task 0: Terminated
srun: error: n2: task 0: Terminated
"""


def test_a_failed_case_carries_what_the_scheduler_said_into_the_failure_list(tmp_path):
    import reframe_reports as rr
    from scalebench.reporting.document import render_markdown
    failed, passed = [rr.testcase("HPLCheck", {}, params={"scale": scale}, result=result, fail_phase=phase,
                                  extra={"stagedir": f"/moved/away/runs/r/stage/local/default/openmpi/{scale}",
                                         "job_stderr": "rfm_job.err", "job_stdout": "rfm_job.out"})
                      for scale, result, phase in (("1_core", "fail", "sanity"), ("1_node", "pass", None))]
    run = rr.write_run(tmp_path, "r", [failed, passed])
    for scale in ("1_core", "1_node"):  # the results were moved: found under the report's run directory
        stage = run / "stage" / "local" / "default" / "openmpi" / scale
        stage.mkdir(parents=True)
        (stage / "rfm_job.err").write_text("x" * 100_000 + "\n" + SLURM_STDERR)  # only the tail is read
    sessions, _ = results.ingest([tmp_path])
    messages = {c.params["scale"]: c.job_messages for c in sessions[0].cases}
    assert messages == {"1_core": ("slurmstepd-n2: error: *** JOB 4 ON n2 CANCELLED AT 2026-11-22T06:05:44 "
                                   "DUE TO TIME LIMIT ***", "srun: error: n2: task 0: Terminated"),
                        "1_node": ()}  # a passed case's output is not read
    text = render_markdown(sections.failures_section(sessions), lambda chart: "")
    assert ("sanity: sanity failed; job output: `slurmstepd-n2: error: *** JOB 4 ON n2 CANCELLED AT "
            "2026-11-22T06:05:44 DUE TO TIME LIMIT ***`; `srun: error: n2: task 0: Terminated`") in text
