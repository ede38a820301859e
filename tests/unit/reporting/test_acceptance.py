"""Acceptance thresholds: the example file, verdicts with margins, one-line errors, the CLI's exit code."""
from pathlib import Path

import pytest

import reframe_reports as rr
from scalebench.cli import main
from scalebench.errors import InputError
from scalebench.reporting import acceptance, series, store as results
from scalebench.reporting.table import figure_units

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "site_configs" / "acceptance.yaml"


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    for i, (stack, cases) in enumerate(rr.two_stack_study().items()):
        rr.write_run(root, f"run-{stack}", cases)
    return root


def _rows(*paths):
    return results.load(paths, index=False).table


def _verdicts(path: Path, rows):
    return acceptance.evaluate(acceptance.load(path, figure_units(rows)), series.build(rows))


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "acceptance.yaml"
    path.write_text(text)
    return path


def test_example_file_is_valid_and_judges_the_real_run():
    verdicts = _verdicts(EXAMPLE, _rows(rr.REAL_REPORT))
    hpl = [v for v in verdicts if v.criterion.figure == "efficiency" and v.criterion.metric == "value"]
    # The real 1-node run: 51.7% of Rpeak at 1 node (the whole-node point), short of 75%.
    assert [(v.where, v.stack, v.at, round(v.measured, 2), v.status) for v in hpl] == [
        ("local:default", "openmpi-sm", "1 node(s)", 51.74, "FAIL")]
    optional = [v for v in verdicts if v.criterion.optional]
    assert {v.status for v in optional} == {"NO DATA"} and not any(v.failed for v in optional)
    assert acceptance.failed(verdicts)


def test_verdicts_measured_threshold_and_margin(study, tmp_path):
    path = _file(tmp_path, """
criteria:
  - {name: HPL efficiency, benchmark: HPLCheck, figure: efficiency, min: 75%}
  - {name: HPL parallel efficiency at 4 nodes, benchmark: HPLCheck, figure: rmax, metric: parallel_efficiency,
     min: 90%, at: 4}
  - {name: LAMMPS LJ, benchmark: LAMMPSCheck, params: {workload: lj}, min: 500, at: largest, stack: ucx}
  - {name: OpenFOAM time, benchmark: OpenFOAMCheck, figure: wall_time, max: 230, at: [4]}
""")
    verdicts = _verdicts(path, _rows(study))
    table = {(v.criterion.name, v.stack, v.at): v for v in verdicts}
    assert len([v for v in verdicts if v.criterion.name == "HPL efficiency"]) == 6  # 2 stacks x 3 node counts
    assert table[("HPL efficiency", "tcp", "4 node(s)")].status == "PASS"  # 77.5 >= 75
    pe_tcp = table[("HPL parallel efficiency at 4 nodes", "tcp", "4 node(s)")]
    assert pe_tcp.measured == pytest.approx(3100 / (4 * 900)) and pe_tcp.status == "FAIL"
    assert table[("HPL parallel efficiency at 4 nodes", "ucx", "4 node(s)")].status == "PASS"
    assert table[("LAMMPS LJ", "ucx", "16 process(es)")].measured == 690
    assert [v.stack for v in verdicts if v.criterion.name == "LAMMPS LJ"] == ["ucx"]
    assert table[("OpenFOAM time", "tcp", "4 process(es)")].status == "FAIL"  # 242 s > 230 s
    assert table[("OpenFOAM time", "ucx", "4 process(es)")].status == "PASS"  # 207 s
    cells = dict(zip(acceptance.HEADER, acceptance._cells(pe_tcp)))
    assert (cells["Measured"], cells["Threshold"], cells["Margin"]) == ("86.1%", ">= 90.0%", "-3.9 pp (-4.3%)")
    cells = dict(zip(acceptance.HEADER, acceptance._cells(table[("OpenFOAM time", "ucx", "4 process(es)")])))
    assert (cells["Measured"], cells["Threshold"], cells["Margin"]) == ("207 s", "<= 230 s", "+23 s (+10.0%)")


def test_parallel_efficiency_of_weak_scaling_runs(tmp_path):
    rr.write_run(tmp_path, "weak", rr.lammps("ucx", {1: 100.0, 4: 85.0}, scaling="weak"))
    path = _file(tmp_path, """
criteria:
  - {benchmark: LAMMPSCheck, params: {scaling: weak}, metric: parallel_efficiency, min: 80%, at: 4}
""")
    (verdict,) = _verdicts(path, _rows(tmp_path))
    assert verdict.measured == pytest.approx(0.85) and verdict.status == "PASS"  # T(1)/T(4), not S(4)/4


def test_no_data_fails_unless_optional(study, tmp_path):
    path = _file(tmp_path, """
criteria:
  - {benchmark: HPLCheck, figure: efficiency, min: 50, at: 64}
  - {benchmark: LAMMPSCheck, min: 1, stack: nosuchstack, optional: true}
""")
    verdicts = _verdicts(path, _rows(study))
    assert [v.status for v in verdicts] == ["NO DATA", "NO DATA", "NO DATA"]
    assert [v.failed for v in verdicts] == [True, True, False]
    assert verdicts[0].note == "not measured at 64 node(s)"


def test_an_acceptance_that_checked_nothing_fails_and_freezes_nothing(study, tmp_path, capsys):
    """Every criterion optional and NO DATA: nothing was measured, so nothing was accepted (issue 30, 3)."""
    path = _file(tmp_path, "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 50%, optional: true, "
                           "system: nosuchsystem}")
    verdicts = _verdicts(path, _rows(study))
    assert [v.status for v in verdicts] == ["NO DATA"] and not verdicts[0].failed
    assert acceptance.failed(verdicts)
    assert main(["accept", str(study), "--thresholds", str(path)]) == 1
    assert "acceptance FAILED: 0 PASS, 0 FAIL, 1 NO DATA" in capsys.readouterr().out
    refs = tmp_path / "refs"
    assert main(["references", "freeze", str(study), "--system", "*", "--thresholds", str(path),
                 "--references-dir", str(refs), "--min-runs", "1"]) == 1
    assert not refs.exists() or not any(refs.iterdir())


@pytest.mark.parametrize("text, message", [
    ("criteria:\n  - {benchmark: HPLCheck, figure: efficency, min: 75%}",
     "criteria[0].figure: unknown figure 'efficency' of HPLCheck (did you mean 'efficiency'?)"),
    ("criteria:\n  - {benchmark: HPLChek, min: 1}",
     "criteria[0].benchmark: unknown benchmark 'HPLChek' (did you mean 'HPLCheck'?)"),
    ("criteria:\n  - {benchmark: HPLCheck, mni: 1}", "criteria[0].mni: unknown key (did you mean 'min'?)"),
    ("criteria:\n  - {benchmark: HPLCheck, min: 1, max: 2}", "criteria[0]: give exactly one of min or max"),
    ("criteria:\n  - {benchmark: HPLCheck, metric: parallel_efficiency, min: 80}",
     "criteria[0].min: 80 looks like a percentage; write 80% (or 0.8)"),
    ("criteria:\n  - {benchmark: HPLCheck, metric: speedup, min: 80%}",
     "criteria[0].min: a percentage is meaningless for speedup"),
    ("criteria:\n  - {benchmark: HPLCheck, figure: n, metric: speedup, min: 2}",
     "criteria[0].metric: speedup needs a figure that is better higher or lower"),
    ("criteria:\n  - {benchmark: HPLCheck, min: 1, at: evry}",
     "criteria[0].at: 'evry' is not one of every, largest, smallest or a number (did you mean 'every'?)"),
    ("criteria:\n  - {benchmark: HPLCheck, min: 1\n", "line 3 not valid YAML"),
    ("thresholds: []", "expected one key, criteria, holding a list of criteria"),
])
def test_mistakes_are_one_line_errors_naming_file_and_key(tmp_path, text, message):
    path = _file(tmp_path, text)
    with pytest.raises(InputError) as err:
        acceptance.load(path, figure_units(_rows(rr.REAL_REPORT)))
    assert str(err.value).startswith(f"{path}:") and message in str(err.value) and "\n" not in str(err.value)


def test_figures_of_unregistered_checks_come_from_the_results(tmp_path):
    rr.write_run(tmp_path, "run", [rr.testcase("SiteMemoryCheck", {"triad": (5e4, "MB/s")}, params={})])
    rows = _rows(tmp_path)
    path = _file(tmp_path, "criteria:\n  - {benchmark: SiteMemoryCheck, figure: triad, min: 40000}")
    assert [v.status for v in _verdicts(path, rows)] == ["PASS"]
    with pytest.raises(InputError, match="did you mean 'triad'"):
        acceptance.load(_file(tmp_path, "criteria:\n  - {benchmark: SiteMemoryCheck, figure: traid, min: 1}"), figure_units(rows))


def test_accept_exit_code_for_ci(study, tmp_path, capsys):
    passing = _file(tmp_path, "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 75%}")
    assert main(["accept", str(study), "--thresholds", str(passing)]) == 0
    out = capsys.readouterr().out
    assert "acceptance PASSED: 6 PASS, 0 FAIL, 0 NO DATA" in out and "Margin" in out
    failing = _file(tmp_path, "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 80%}")
    assert main(["accept", str(study), "--thresholds", str(failing)]) == 1
    assert "acceptance FAILED: 5 PASS, 1 FAIL, 0 NO DATA" in capsys.readouterr().out  # tcp at 4 nodes: 77.5%
    typo = _file(tmp_path, "criteria:\n  - {benchmark: HPLCheck, figure: rmaxx, min: 1}")
    assert main(["accept", str(study), "--thresholds", str(typo)]) == 2
    assert "did you mean 'rmax'" in capsys.readouterr().err


def test_report_carries_the_verdicts(study, tmp_path):
    from scalebench import report

    thresholds = _file(tmp_path, "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 80%}")
    written = report.write_report([study], tmp_path / "out", formats=("csv",), thresholds=thresholds)
    assert acceptance.failed(written.verdicts)
    loaded = results.load([study])
    blocks = report.build_document(loaded.table, loaded.warnings, written.verdicts, thresholds)
    assert any(getattr(b, "text", None) == "Acceptance" for b in blocks)


def test_ci_reads_the_verdicts_as_json_and_junit_with_the_terminals_counts(study, tmp_path, capsys):
    """A criterion failing at one point, one passing, one optional without data: a JUnit reader (junitparser,
    as CI systems parse it) counts what the terminal says, a failure per FAIL, a skip per NO DATA."""
    import json

    from junitparser import Failure, JUnitXml, Skipped

    thresholds = _file(tmp_path, """
criteria:
  - {name: HPL efficiency, benchmark: HPLCheck, figure: efficiency, min: 80%}
  - {name: HPL Rmax, benchmark: HPLCheck, figure: rmax, min: 1}
  - {name: LAMMPS somewhere else, benchmark: LAMMPSCheck, system: nowhere, min: 1, optional: true}
""")
    assert main(["accept", str(study), "--thresholds", str(thresholds)]) == 1
    terminal = capsys.readouterr().out.splitlines()[-1]
    assert terminal == "acceptance FAILED: 11 PASS, 1 FAIL, 1 NO DATA"
    junit = tmp_path / "accept.xml"
    assert main(["accept", str(study), "--thresholds", str(thresholds), "--json", "--junit", str(junit)]) == 1
    found = json.loads(capsys.readouterr().out)
    assert (found["outcome"], found["passed"], found["counts"]) == (
        "FAILED", False, {"PASS": 11, "FAIL": 1, "NO DATA": 1, "NOISY": 0})
    assert [v["status"] for v in found["verdicts"]].count("FAIL") == 1
    xml = JUnitXml.fromfile(str(junit))
    cases = [case for suite in xml for case in suite]
    assert len(cases) == 13
    failures = [case for case in cases if any(isinstance(r, Failure) for r in case.result)]
    skips = [case for case in cases if any(isinstance(r, Skipped) for r in case.result)]
    assert (len(failures), len(skips)) == (1, 1)
    assert "FAIL: measured 77.5%" in failures[0].result[0].message and failures[0].name.startswith("HPL efficiency")
    assert "NO DATA" in skips[0].result[0].message
    assert not list(tmp_path.glob(".*.tmp"))  # written whole, no temporary left
