"""Results store ingest and the Markdown/terminal report, on a real ReFrame 4.10 run report."""
import json
import shutil
from pathlib import Path

import pytest

from scalebench import report, results
from scalebench.errors import ResultsError

REAL_REPORT = Path(__file__).resolve().parents[1] / "data" / "reframe" / "hpl_local_run_report.json"


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
    sessions, _ = results.ingest([results_dir])
    rows = list(results.records(sessions))
    assert len(rows) == 10  # 2 cases x (rmax, rpeak_gflops, efficiency, n, time)
    assert {r.figure for r in rows} == {"rmax", "rpeak_gflops", "efficiency", "n", "time"}


def test_malformed_and_truncated_reports_are_skipped_with_a_warning_naming_the_file(results_dir):
    bad = results_dir / "runs" / "broken"
    bad.mkdir()
    (bad / "report.json").write_text(REAL_REPORT.read_text()[:5000])  # cut mid-file
    partial = results_dir / "runs" / "partial"
    partial.mkdir()
    data = json.loads(REAL_REPORT.read_text())
    del data["runs"][0]["testcases"][0]["system"]
    (partial / "report.json").write_text(json.dumps(data))
    sessions, warnings = results.ingest([results_dir])
    assert len(sessions) == 1
    assert len(warnings) == 2
    assert any("broken/report.json" in w and "not readable JSON" in w for w in warnings)
    assert any("partial/report.json" in w and "malformed ReFrame report" in w for w in warnings)


def test_other_json_files_are_ignored(results_dir):
    (results_dir / "notes.json").write_text('{"not": "a report"}')
    sessions, warnings = results.ingest([results_dir])
    assert len(sessions) == 1 and warnings == []


def test_missing_results_path_is_a_named_error(tmp_path):
    with pytest.raises(ResultsError, match="does not exist"):
        results.ingest([tmp_path / "nope"])


def test_report_table_and_markdown(results_dir, tmp_path):
    target, sessions, _ = report.write_report([results_dir], tmp_path / "out")
    text = target.read_text()
    assert "| local:default | openmpi-sm | 1_node | 1 | 2 | 10368 | 192 | 1 x 2 | 66.23 | 128.0 | 51.7% |" in text
    assert "time budget: 8 s" in text  # the N policy is stated
    assert "ReFrame overhead" in text
    table = report.hpl_terminal_table(sessions)
    assert table.splitlines()[0].split()[:3] == ["System", "Stack", "Scale"]


def test_report_never_replaces_an_existing_report(results_dir, tmp_path):
    first, _, _ = report.write_report([results_dir], tmp_path / "out")
    first_text = first.read_text()
    second, _, _ = report.write_report([results_dir], tmp_path / "out")
    assert second != first and first.read_text() == first_text
