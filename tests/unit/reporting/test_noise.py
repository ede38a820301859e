"""Noise verdicts (scalebench.reporting.noise) on recorded figures: solves that disagree, a node probe that
measured foreign load, a ceiling below Rmax and a clock above nominal, as the HPL table, the report,
`accept` and `references freeze` show them. The figures are those of issue 28's 2-vCPU EPYC (2.0 GHz,
8 flop/cycle), shared with other work: 1-core solves 13.30, 18.05 and 13.31 Gflop/s against a nominal
Rpeak of 16.0 (113%); at 2 ranks a DGEMM ceiling of 13.3 under an Rmax of 23.41."""
import pytest

import reframe_reports as rr
from scalebench.cli import main
from scalebench import report
from scalebench.reporting import acceptance, noise, references
from scalebench.reporting import hpl_table
from scalebench.reporting.store import ingest
from scalebench.reporting.table import figure_units, from_sessions

HOG = {"nodes": 1, "expected_nodes": 1, "steal_pct": 0.0, "steal_node": "vm", "foreign_cores": 0.48,
       "foreign_node": "vm", "foreign_top": "sb-cpu-hog[4242] 0.47"}
QUIET = {**HOG, "foreign_cores": 0.02, "foreign_top": "sshd[17] 0.02"}


def hpl_case(scale, rmax, rpeak, *, solves, dgemm=None, repeats=None, interference=QUIET, ranks=1):
    figures = {"rmax": (rmax, "Gflop/s"), "rpeak_gflops": (rpeak, "Gflop/s"), "efficiency": (100 * rmax / rpeak, "%")}
    if dgemm is not None:
        figures["dgemm_ceiling"] = (dgemm, "Gflop/s")
        figures["dgemm_clock"] = (2.0 * dgemm / rpeak, "GHz")
    extra = {"trial_gflops": " ".join(f"{s:.2f}" for s in solves), "interference": interference,
             "dgemm_repeats": repeats or {}, "hpl_deck": {"n": 8832, "nb": 192, "p": 1, "q": ranks}}
    return rr.testcase("HPLCheck", figures, params={"scale": scale}, num_tasks=ranks, extra=extra)


ISSUE_RUN = [hpl_case("1_core", 18.05, 15.97, solves=(13.30, 18.05, 13.31), dgemm=16.9,
                      repeats={"before": [16.9, 16.8, 16.85, 16.9, 16.7], "after": []}),
             hpl_case("1_node", 23.41, 31.94, solves=(21.27, 23.41, 21.30), dgemm=13.3, ranks=2,
                      repeats={"before": [13.3, 9.8, 12.1, 13.0, 11.9], "after": []}, interference=HOG)]
QUIET_RUN = [hpl_case("1_core", 18.10, 15.97, solves=(18.02, 18.10, 18.05), dgemm=18.3,
                      repeats={"before": [18.3, 18.2, 18.25], "after": [18.2, 18.3, 18.28]}),
             hpl_case("1_node", 33.95, 31.94, solves=(33.80, 33.95, 33.90), dgemm=36.5, ranks=2,
                      repeats={"before": [36.4, 36.5, 36.2], "after": [36.3, 36.4, 36.5]})]


def cases_of(tmp_path, *runs):
    first = len(list((tmp_path / "runs").glob("*"))) if (tmp_path / "runs").is_dir() else 0
    for i, run in enumerate(runs, first):
        rr.write_run(tmp_path, f"run{i}", run, start=f"2026010{i + 1}T000000+0000")
    sessions, warnings = ingest([tmp_path])
    assert warnings == []
    return sessions


def test_a_36_percent_spread_is_noisy_and_says_so(tmp_path):
    (session,) = cases_of(tmp_path, ISSUE_RUN)
    one_core = next(c for c in session.cases if c.params["scale"] == "1_core")
    verdict = noise.case_noise(one_core)
    assert verdict.noisy and verdict.solve_cv == pytest.approx(0.184, abs=0.002)
    assert verdict.reasons == ("solves disagree: CV 18.4% (> 5%): 13.30 18.05 13.31 Gflop/s",)


def test_measured_interference_and_unsteady_repeats_are_named(tmp_path):
    (session,) = cases_of(tmp_path, ISSUE_RUN)
    node = next(c for c in session.cases if c.params["scale"] == "1_node")
    reasons = noise.case_noise(node).reasons
    assert "solves disagree: CV 5.6% (> 5%): 21.27 23.41 21.30 Gflop/s" in reasons
    assert "foreign load 0.48 cores on vm (> 0.25): sb-cpu-hog[4242] 0.47" in reasons
    assert "DGEMM repeats disagree by 26% (> 10%)" in reasons


def test_a_quiet_run_is_not_noisy(tmp_path):
    (session,) = cases_of(tmp_path, QUIET_RUN)
    assert [noise.case_noise(c).reasons for c in session.cases] == [(), ()]


def test_the_hpl_table_has_no_ratio_that_cannot_be(tmp_path):
    sessions = cases_of(tmp_path, ISSUE_RUN)
    rows = {line.scale: dict(zip(hpl_table.HPL_HEADER, hpl_table.hpl_cells(line)))
            for line in hpl_table.hpl_lines(from_sessions(sessions))}
    assert rows["1_node"]["Rmax/DGEMM"] == "ceiling not valid (interference or clock change)"  # not 176.0%
    assert rows["1_core"]["Efficiency"] == "113.0%, clock above nominal (turbo)"
    assert rows["1_core"]["Clock (GHz)"] == "2.12"  # 16.9 Gflop/s of DGEMM on one core at 8 flop/cycle
    assert rows["1_core"]["Solve CV"] == "18.4%"
    assert rows["1_core"]["Noise"].startswith("NOISY: solves disagree: CV 18.4%")
    assert "sb-cpu-hog" in rows["1_node"]["Noise"]
    table = hpl_table.hpl_terminal_table(from_sessions(sessions))
    assert "176" not in table and "ceiling not valid" in table


def test_a_clean_rerun_is_counted_and_the_noisy_run_is_not(tmp_path):
    sessions = cases_of(tmp_path, ISSUE_RUN, QUIET_RUN)
    rows = {line.scale: line for line in hpl_table.hpl_lines(from_sessions(sessions))}
    assert rows["1_core"].rmax == 18.10 and rows["1_core"].runs == 2  # the quiet run's, not the median of both
    assert rows["1_core"].noise == ("1 of 2 runs noisy, not counted (solves disagree: CV 18.4% (> 5%): "
                                    "13.30 18.05 13.31 Gflop/s)")
    cells = dict(zip(hpl_table.HPL_HEADER, hpl_table.hpl_cells(rows["1_node"])))
    assert cells["Rmax/DGEMM"] == "93.0%"


THRESHOLDS = "criteria:\n  - {benchmark: HPLCheck, figure: efficiency, min: 75%}\n"


def test_accept_says_noisy_and_which_cases_to_rerun(tmp_path, capsys):
    cases_of(tmp_path / "results", ISSUE_RUN)
    thresholds = tmp_path / "acceptance.yaml"
    thresholds.write_text(THRESHOLDS)
    assert main(["accept", str(tmp_path / "results"), "--thresholds", str(thresholds)]) == 1
    out = capsys.readouterr().out
    assert "acceptance NOT DECIDED (re-run the NOISY points' cases): 0 PASS, 0 FAIL, 0 NO DATA, 1 NOISY" in out
    assert "only noisy runs: re-run HPLCheck %scale=1_node on local:default (openmpi-sm)" in out
    assert ("re-run (noisy): HPLCheck %scale=1_node on local:default (openmpi-sm): solves disagree: CV 5.6% (> 5%): "
            "21.27 23.41 21.30 Gflop/s; foreign load 0.48 cores on vm (> 0.25): sb-cpu-hog[4242] 0.47; DGEMM repeats "
            "disagree by 26% (> 10%)\n") in out
    assert "1_core" not in out  # not the 1-node point's: the series counts the case using the most cores
    # the same configuration run again on a quiet machine: counted, and the noisy run is not
    cases_of(tmp_path / "results", QUIET_RUN)
    assert main(["accept", str(tmp_path / "results"), "--thresholds", str(thresholds)]) == 0
    assert "acceptance PASSED: 1 PASS, 0 FAIL, 0 NO DATA" in capsys.readouterr().out


def test_repeated_runs_that_disagree_are_noisy(tmp_path):
    for i, rate in enumerate((100.0, 140.0, 101.0)):
        rr.write_run(tmp_path, f"r{i}", rr.lammps("ucx", {4: rate}), start=f"2026010{i + 1}T000000+0000")
    sessions, _ = ingest([tmp_path])
    thresholds = tmp_path / "a.yaml"
    thresholds.write_text("criteria:\n  - {benchmark: LAMMPSCheck, min: 50}\n")
    results = from_sessions(sessions)
    (verdict,) = acceptance.judge(acceptance.load(thresholds, figure_units(results)), results)
    assert verdict.status == "NOISY" and verdict.note == "runs disagree: CV 20.1% over 3 runs (> 5%): re-run"
    text = report.render_text(report.build_document(results, []))
    # the applications table says so: NOISY in the Runs column, why under the row
    assert "  3 NOISY\n[1] 3 runs NOISY: runs disagree: CV 20.1% over 3 runs (> 5%)\n" in text


def test_references_are_not_learned_from_noisy_runs(tmp_path, capsys):
    thresholds = tmp_path / "acceptance.yaml"
    thresholds.write_text(THRESHOLDS)
    freeze = ["references", "freeze", "--system", "local", "--thresholds", str(thresholds),
              "--references-dir", str(tmp_path / "refs")]
    cases_of(tmp_path / "noisy", ISSUE_RUN, ISSUE_RUN, ISSUE_RUN)
    assert main([*freeze, str(tmp_path / "noisy")]) == 1
    assert "acceptance NOT DECIDED" in capsys.readouterr().out and not (tmp_path / "refs").exists()
    sessions = cases_of(tmp_path / "results", QUIET_RUN, QUIET_RUN, QUIET_RUN, ISSUE_RUN)
    learned, notes = references.derive(sessions, "local")
    one_core = next(f for name, f in learned["default:openmpi"].items() if "1_core" in name)
    assert one_core["rmax"].runs == 3 and one_core["rmax"].value == 18.10
    assert sum("a noisy run (solves disagree" in note for note in notes) == 2
    assert main([*freeze, str(tmp_path / "results")]) == 0
    assert "left out: default:openmpi HPLCheck %scale=1_core of 20260104T000000+0000: a noisy run" \
        in capsys.readouterr().out


def test_the_report_shows_what_the_probe_measured(tmp_path):
    sessions = cases_of(tmp_path / "results", ISSUE_RUN)
    text = report.render_text(report.build_document(from_sessions(sessions), []))
    assert "Interference and noise" in text
    assert "sb-cpu-hog[4242] 0.47" in text and "1 measured case(s)" not in text
    assert "2 measured case(s) carry probe samples; 2 are noisy." in text


def test_an_edited_probe_record_is_read_for_what_it_holds(tmp_path):
    odd = {"nodes": "two", "expected_nodes": None, "foreign_cores": "lots", "steal_pct": float("inf"),
           "foreign_top": {"x" * 500: [1, 2]}, "clock_source": ["cpufreq"]}
    run = [hpl_case("1_core", 18.10, 15.97, solves=(18.02, 18.10), interference=odd),
           hpl_case("1_node", 33.9, 31.94, solves=(33.8, 33.9), ranks=2,
                    interference={**HOG, "foreign_top": "<script>" + "y" * 5000})]
    sessions = cases_of(tmp_path / "results", run)
    verdicts = [noise.case_noise(c) for c in sessions[0].cases]
    assert not verdicts[0].noisy  # nothing it holds is a measurement
    assert verdicts[1].noisy and len(verdicts[1].reasons[0]) < 400  # named, in a few words
    text = report.render_text(report.build_document(from_sessions(sessions), []))
    assert "Interference and noise" in text and "y" * 300 not in text


def test_microbenchmarks_are_recorded_not_judged(tmp_path):
    bandwidth, latency = rr.hockney(1.2, 12000.0)
    cases = rr.osu("ucx", bandwidth, latency)
    for case in cases:
        case["interference"] = HOG
    (session,) = cases_of(tmp_path, cases)
    assert all(not noise.case_noise(c).noisy for c in session.cases)


def test_quiet_is_said_only_of_a_run_that_recorded_what_to_judge_by(tmp_path):
    unjudged = hpl_case("1_core", 18.10, 15.97, solves=(18.10,), interference=None)  # one solve, no probe
    sessions = cases_of(tmp_path, QUIET_RUN[1:], [unjudged])
    rows = {line.scale: dict(zip(hpl_table.HPL_HEADER, hpl_table.hpl_cells(line)))
            for line in hpl_table.hpl_lines(from_sessions(sessions))}
    assert rows["1_node"]["Noise"] == "quiet" and rows["1_core"]["Noise"] == "-"


def test_the_table_draws_the_verdicts_each_case_draws(tmp_path):
    """The report judges from the columns (a year of runs), references freeze from Case objects: the two
    must agree case by case, probe records included, for judged and unjudged checks."""
    bandwidth, latency = rr.hockney(1.2, 12000.0)
    probed_osu = [{**case, "interference": HOG} for case in rr.osu("ucx", bandwidth, latency)]
    perflog_like = hpl_case("1_core", 18.1, 15.97, solves=(), interference=None)
    perflog_like["perfvalues"]["local:default:solve_cv"] = [9.0, 0, None, None, "%", "pass"]
    sessions = cases_of(tmp_path, ISSUE_RUN, QUIET_RUN, probed_osu, [perflog_like])
    results = from_sessions(sessions)
    made = results.cases_by_id()
    drawn = noise.table_verdicts(results, probed=True)
    assert {session for session, _ in made.values()} == {0, 1, 2, 3} and drawn
    for row, verdict in drawn.items():
        session, case = made[row]
        expected = noise.case_noise(case)
        assert verdict.session == session
        assert verdict.noise.reasons == expected.reasons and verdict.noise.solve_cv == expected.solve_cv
        assert verdict.noise.evidence == expected.evidence
        assert verdict.noise.probe == (case.recorded("interference") or None)
    assert sum(v.noise.noisy for v in drawn.values()) >= 2  # the issue's run, and the 9% CV of the perflog
    assert any(v.noise.probe is not None and not noise.judged(made[r][1].benchmark) for r, v in drawn.items())
    assert set(noise.rerun_labels(results, list(drawn))) == set(drawn)
