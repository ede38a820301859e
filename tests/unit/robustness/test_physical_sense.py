"""The reproducers of issue 30 for the parsers and the ingest: values that cannot be a measurement
(scalebench/data/quantities.yaml, one registry for every parser and the ingest) are never a number
in an output or a report, figures that contradict each other inside one output or one case are named,
and units are converted or refused. Each ends as the right figures with a named warning, or a named
one-line error (exit 2)."""
import json

import pytest

from hpl_outputs import hpcc_output, hpl_output, tv
from cli_calls import cli
from scalebench.hpl.output import parse_hpl
from scalebench.benchmarks import parse_text

DEFAULT_ROW = (tv(), 10000, 192, 1, 2, 6.50, 1.0256e2, "PASSED")


def hpl_rows(*rows: str, threshold: str = "16.0", banner: bool = True) -> str:
    """An HPL 2.3 run of result rows as printed ("WR11C2R4 1000 192 2 2 0.00 1.0000e+300"), each PASSED."""
    head = ("HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018\n" if banner else "")
    head += f"- Computational tests pass if scaled residuals are less than                {threshold}\n"
    return head + "".join(f"{row}\n||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.2e-03 ...... PASSED\n"
                          for row in rows)


# --- 5. HPL rows the time check used to skip -----------------------------------------------------------

@pytest.mark.parametrize("row, reason", [
    ("WR11C2R4 1000 192 2 2 0.00 1.0000e+300", "Gflops 1e+300 Gflop/s is beyond 1e+11 Gflop/s, more than any machine "
                                               "measures"),
    ("WR11C2R4 100000 192 2 2 0.00 1.0000e+00", "Gflops 1 does not follow from N=100000 and time 0 s (HPL would "
                                                "print at least 1.333e+08)"),
    ("WR11C2R4 2000000 192 2 2 1.00 5.3333e+09", "Gflops 5.3333e+09 on 4 process(es) is beyond 1e+06 Gflop/s per "
                                                 "process, more than any processor reaches"),
    ("WR11C2R4 10000 192 1 2 1e+09 6.6682e-07", "time 1e+09 s is beyond 3.2e+08 s, more than any machine measures"),
])
def test_a_row_timed_0_00_or_beyond_any_machine_is_failed(capsys, tmp_path, row, reason):
    path = tmp_path / "hpl.out"
    path.write_text(hpl_rows(row))
    status, out, err = cli(capsys, "parse", "hpl", str(path))
    data = json.loads(out)
    assert status == 0 and data["rmax_gflops"] is None
    assert data["rows"][0]["status"] == "FAILED" and data["rows"][0]["reason"] == reason
    assert f"warning: row 1 (N={data['rows'][0]['n']}" in err


def test_a_small_solve_printed_at_0_00_s_still_counts():
    """N=100 takes microseconds: 0.00 s is HPL's rounding, and 0.5 Gflop/s is above the floor it sets."""
    out = parse_hpl(hpl_rows("WR11C2R4 100 192 1 1 0.00 5.0000e-01"))
    assert out.rows[0].status == "PASSED" and out.rmax_gflops == 0.5


@pytest.mark.parametrize("command", ["rank", "freeze"])
def test_tune_never_ranks_or_freezes_a_row_timed_0_00_at_1e300(capsys, tmp_path, command):
    path = tmp_path / "hpl.out"
    path.write_text(hpl_rows("WR11C2R4 1000 192 2 2 0.00 1.0000e+300"))
    decks = tmp_path / "decks"
    extra = ["--system", "s", "--partition", "p", "--decks-dir", str(decks)] if command == "freeze" else []
    status, _, err = cli(capsys, "tune", command, str(path), *extra)
    assert status == 2 and "no PASSED row to rank (left out: 1 impossible values)" in err
    assert not decks.exists()


def test_each_appended_run_applies_its_own_threshold():
    """hpcc and HPL append to their output: the threshold a run states judges its rows, not the last one."""
    strict = hpl_rows("WR11C2R4 10000 192 1 2 6.50 1.0256e+02", threshold="1.0e-03")  # 1.2e-03 > 1e-3
    loose = hpl_rows("WR11C2R4 10000 192 1 2 6.40 1.0416e+02", threshold="16.0")
    out = parse_hpl(strict + loose)
    assert [r.status for r in out.rows] == ["FAILED", "PASSED"]
    assert out.rows[0].reason == "residual 0.0012 is above the threshold 0.001"
    assert out.rmax_gflops == 104.16 and out.threshold == 16.0  # the last one printed
    out = parse_hpl(loose + strict)
    assert [r.status for r in out.rows] == ["PASSED", "FAILED"] and out.rmax_gflops == 104.16


def test_an_appended_run_stating_no_threshold_gets_hpls_default_not_the_previous_one():
    first = hpl_rows("WR11C2R4 10000 192 1 2 6.50 1.0256e+02", threshold="1.0e-03")
    second = ("HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018\n"
              "WR11C2R4 10000 192 1 2 6.40 1.0416e+02\n"
              "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   1.2e-03 ...... PASSED\n")
    out = parse_hpl(first + second)
    assert [r.status for r in out.rows] == ["FAILED", "PASSED"] and out.rows[1].threshold is None


# --- 6. hpcc: values that cannot be, and a Summary against its own rows --------------------------------

def _hpcc(summary_edit=None, rows=(DEFAULT_ROW,)):
    text = hpcc_output(hpl_output(list(rows)))
    return summary_edit(text) if summary_edit else text


@pytest.mark.parametrize("key, value, warning", [
    ("HPL_Tflops", "-5", "the Summary: HPL_Tflops -5 Tflop/s is negative: dropped"),
    ("CommWorldProcs", "-8", "the Summary: CommWorldProcs -8 is not a count of at least 1: dropped"),
    ("CommWorldProcs", "0", "the Summary: CommWorldProcs 0 is not a count of at least 1: dropped"),
    ("MaxPingPongLatency_usec", "1e308", "the Summary: MaxPingPongLatency_usec 1e+308 us is beyond 3.2e+14 us, "
                                         "more than any machine measures: dropped"),
    ("StarDGEMM_Gflops", "inf", "the Summary: StarDGEMM_Gflops is not finite (inf): dropped"),
])
def test_an_hpcc_summary_value_that_cannot_be_is_null_and_named(key, value, warning):
    text = _hpcc(lambda t: t.replace("Success=1\n", f"Success=1\n{key}={value}\n") if key != "HPL_Tflops"
                 else t.replace("HPL_Tflops=0.10256\n", f"HPL_Tflops={value}\n"))
    out = parse_text("hpcc", text)
    assert out["last_summary"][key] is None and warning in out["warnings"]


def test_hpccs_minus_one_for_a_test_it_did_not_run_is_kept():
    out = parse_text("hpcc", _hpcc(lambda t: t.replace("Success=1\n", "Success=1\nPTRANS_GBs=-1\nPTRANS_n=-1\n")))
    assert out["last_summary"]["PTRANS_GBs"] == -1 and "warnings" not in out


@pytest.mark.parametrize("edit, problem", [
    (lambda t: t.replace("HPL_Tflops=0.10256", "HPL_Tflops=1000"),
     "the Summary's HPL_Tflops=1000 (1e+06 Gflop/s) is not the fastest HPL row of its run (102.56 Gflop/s): hpcc "
     "prints that row's rate"),
    (lambda t: t.replace("HPL_N=10000", "HPL_N=20000"),
     "the Summary's HPL_N=20000 is not that of the fastest HPL row (10000)"),
    (lambda t: t.replace("Success=1", "Success=0"),
     "the Summary says Success=0 but every HPL test passed (hpcc fails a run only for a failed or skipped HPL "
     "test)"),
    (lambda t: t.replace("Success=1", "Success=1\nCommWorldProcs=1"),
     "an HPL row on a 1x2 grid needs 2 processes, the Summary's CommWorldProcs=1"),
])
def test_an_hpcc_summary_that_contradicts_its_own_rows_is_a_problem(capsys, tmp_path, edit, problem):
    path = tmp_path / "hpccoutf.txt"
    path.write_text(_hpcc(edit))
    status, out, err = cli(capsys, "parse", "hpcc", str(path))
    data = json.loads(out)
    assert status == 0 and problem in data["warnings"] and problem in data["hpl"]["problems"]
    assert f"warning: {problem}" in err


def test_success_1_with_a_failed_row_is_a_problem():
    failed = (tv(), 10000, 192, 1, 2, 6.50, 1.0256e2, "FAILED")
    out = parse_text("hpcc", _hpcc(lambda t: t.replace("Success=0", "Success=1"), rows=(failed,)))
    assert "the Summary says Success=1 but 1 HPL test(s) failed or were skipped" in out["warnings"]


def test_the_hpl_check_fails_an_hpcc_run_whose_summary_contradicts_its_rows():
    from scalebench.hpl.outcome import hpl_outcome

    text = _hpcc(lambda t: t.replace("HPL_Tflops=0.10256", "HPL_Tflops=1000").replace(
        "Success=1", "Success=1\nCommWorldProcs=2"))
    result = hpl_outcome(text, "", hpcc=True, expected_cases=1, tasks=2, rpeak_gflops=200.0)
    assert any("is not the fastest HPL row of its run" in p for p in result.problems)


# --- 6. the other parsers ------------------------------------------------------------------------------

def test_osu_rows_that_cannot_be_are_null_named_and_never_a_peak(capsys, tmp_path):
    path = tmp_path / "osu.txt"
    path.write_text("# OSU MPI Latency Test v7.3\n# Size          Latency (us)\n1   -2.05\n2   inf\n4   1e308\n"
                    "8   1.05\n16   1.10\n")
    status, out, err = cli(capsys, "parse", "osu", str(path))
    data = json.loads(out)
    assert status == 0 and data["rows"] == [[1, None], [2, None], [4, None], [8, 1.05], [16, 1.1]]
    assert data["peak_value"] == 1.1 and data["min_latency_us"] == 1.05
    assert "warning: Latency (us) at size 1 -2.05 us is negative: dropped" in err
    assert "warning: Latency (us) at size 4 1e+308 us is beyond 3.2e+14 us, more than any machine measures: " \
           "dropped" in err


def test_osu_latencies_out_of_order_are_named():
    text = ("# OSU MPI Latency Test v7.3\n# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n"
            "1                       1.50              1.90              1.60       10000\n")
    out = parse_text("osu", text)
    assert out["warnings"] == ["at size 1: min, average and max latency out of order (1.9, 1.5, 1.6)"]


LAMMPS_RUN = ("LAMMPS (2 Aug 2023)\nLoop time of {loop} on {procs} procs for 100 steps with 32000 atoms\n\n"
              "Performance: 9.191 tau/day, {rate} timesteps/s, 340.4 katom-step/s\n"
              "99.8% CPU use with {tasks} MPI tasks x 1 OpenMP threads\n")


@pytest.mark.parametrize("values, problem", [
    (dict(loop="-9.4"), "Loop time -9.4 s is negative: dropped"),
    (dict(rate="99999"), "99999 timesteps/s contradicts 100 steps in a Loop time of 9.4 s (10.64 timesteps/s)"),
    (dict(tasks="64"), "the Loop time line says 2 procs, the CPU line 64 MPI tasks"),
    (dict(rate="10.638", loop="9.4", procs="2", tasks="2"), None),
])
def test_lammps_figures_that_cannot_be_or_contradict_each_other_are_named(values, problem):
    fields = dict(loop="9.4", procs="2", rate="10.638", tasks="2") | values
    out = parse_text("lammps", LAMMPS_RUN.format(**fields))
    if problem is None:
        assert "warnings" not in out and out["timesteps_per_s"] == 10.638
        return
    assert problem in out["warnings"]
    if values.get("loop", "9.4").startswith("-"):
        assert out["loop_time_s"] is None


def test_the_lammps_check_fails_a_log_whose_figures_contradict_each_other():
    from scalebench.benchmarks.lammps.inputs import load_lammps_workloads
    from scalebench.benchmarks.lammps.outcome import lammps_outcome
    from scalebench.benchmarks.lammps.output import parse_lammps

    text = LAMMPS_RUN.format(loop="9.4", procs="2", rate="99999", tasks="2") + (
        "\nMPI task timing breakdown:\nSection |  min time  |  avg time  |  max time  |%varavg| %total\n"
        "---------------------------------------------------------------\n"
        "Pair    | 8.0        | 8.0        | 8.0        |   0.0 | 85.00\n"
        "Other   |            | 1.4        |            |       | 15.00\n\nTotal wall time: 0:00:10\n")
    workload = next(iter(load_lammps_workloads().values()))
    result = lammps_outcome(workload, "", parse_lammps(text), tasks=2, atoms=32000, steps=100)
    assert any("99999 timesteps/s contradicts" in p for p in result.problems)


def test_openfoam_times_that_cannot_be_or_fall_are_named():
    text = ("Build  : v2312\nExec   : icoFoam\nTime = 1\nExecutionTime = 1e308 s  ClockTime = 1 s\n"
            "Time = 2\nExecutionTime = 5.0 s  ClockTime = 6 s\nTime = 3\nExecutionTime = 4.0 s  ClockTime = 7 s\nEnd\n")
    out = parse_text("openfoam", text)
    assert out["warnings"] == ["ExecutionTime 1e+308 s is beyond 3.2e+08 s, more than any machine measures: dropped",
                               "ExecutionTime falls from 5 s to 4 s: it is a total since the start"]
    assert out["final_execution_time_s"] == 4.0 and out["n_execution_time_lines"] == 3
    assert out["seconds_per_step_mean"] is None and out["seconds_per_step_median"] is None  # no step takes -1 s


# --- 4. run-report figures at ingest ---------------------------------------------------------------------

def _ingest(tmp_path, *cases):
    import reframe_reports as rr
    from scalebench.reporting.store import load

    rr.write_run(tmp_path / "results", "r", list(cases))
    loaded = load([tmp_path / "results"], index=False)
    rows = loaded.table.with_cases().to_dicts()
    return (loaded.warnings, {(r["name"], r["figure"]): (r["value"], r["unit"]) for r in rows},
            tmp_path / "results" / "runs" / "r" / "report.json")


def _hpl(figures, num_nodes=1, num_tasks=2, scale="1_node", **extra):
    import reframe_reports as rr

    return rr.testcase("HPLCheck", figures, params={"scale": scale}, num_nodes=num_nodes, num_tasks=num_tasks, **extra)


@pytest.mark.parametrize("rmax", [(0.9, "Tflop/s"), (900000.0, "Mflop/s"), (9.0e11, "flop/s"), (900.0, "Gflop/s"),
                                  (0.9, "TFLOPS"), (900.0, "GFlops")])
def test_a_figure_in_another_unit_of_its_quantity_is_converted(tmp_path, rmax):
    warnings, rows, _ = _ingest(tmp_path, _hpl({"rmax": rmax, "rpeak_gflops": (1000.0, "Gflop/s"),
                                               "efficiency": (90.0, "%")}))
    assert warnings == []
    value, unit = rows[("HPLCheck %scale=1_node", "rmax")]
    assert unit == "Gflop/s" and value == pytest.approx(900.0, rel=1e-12)


def test_a_reference_is_converted_with_its_figure(tmp_path):
    from scalebench.reporting.store import load
    import reframe_reports as rr

    case = _hpl({"rmax": (0.9, "Tflop/s")})
    case["perfvalues"]["local:default:rmax"][1] = 0.85  # ReFrame's reference, in the figure's unit
    rr.write_run(tmp_path / "results", "r", [case])
    (row,) = load([tmp_path / "results"], index=False).table.records.to_dicts()
    assert row["value"] == pytest.approx(900.0) and row["ref"] == pytest.approx(850.0)


@pytest.mark.parametrize("figures, warning", [
    ({"rmax": (900.0, "furlongs")}, "figure rmax: unit 'furlongs' is not Gflop/s and cannot be converted to it: dropped"),
    ({"rmax": (900.0, "GB/s")}, "figure rmax: unit 'GB/s' is not Gflop/s and cannot be converted to it: dropped"),
    ({"rmax": ("900", "Gflop/s")}, "figure rmax: '900' is not a number: dropped"),
    ({"rmax": (True, "Gflop/s")}, "figure rmax: True is not a number: dropped"),
    ({"rmax": ("fast", "Gflop/s")}, "figure rmax: 'fast' is not a number: dropped"),
])
def test_a_figure_that_is_no_number_or_in_a_foreign_unit_is_dropped_by_name(tmp_path, capsys, figures, warning):
    warnings, rows, report = _ingest(tmp_path, _hpl({**figures, "n": (10000.0, "N")}))
    assert warnings == [f"HPLCheck %scale=1_node in {report}: {warning}"]
    assert ("HPLCheck %scale=1_node", "rmax") not in rows and ("HPLCheck %scale=1_node", "n") in rows
    status, _, err = cli(capsys, "report", str(tmp_path / "results"), "--out", str(tmp_path / "out"), "--format", "md")
    assert status == 0 and f"warning: HPLCheck %scale=1_node in {report}: {warning}" in err


def test_a_figure_of_another_partition_never_replaces_the_cases_own(tmp_path):
    case = _hpl({"rmax": (900.0, "Gflop/s")})
    case["perfvalues"]["other:gpu:rmax"] = [500000.0, 0, None, None, "Gflop/s", "pass"]
    warnings, rows, report = _ingest(tmp_path, case)
    assert rows[("HPLCheck %scale=1_node", "rmax")] == (900.0, "Gflop/s")
    assert warnings == [f"HPLCheck %scale=1_node in {report}: figure rmax: recorded for other:gpu, not this case's "
                        f"local:default: dropped"]


@pytest.mark.parametrize("figures, counts, reason", [
    ({"rmax": (900000.0, "Gflop/s"), "rpeak_gflops": (1000.0, "Gflop/s"), "efficiency": (90.0, "%")}, {},
     "figures contradict each other (efficiency = rmax / rpeak_gflops): efficiency 90 % but rmax / rpeak_gflops "
     "gives 9e+04 %"),
    ({"rmax": (45.74, "Gflop/s"), "n": (8256.0, "N"), "time": (0.5, "s")}, {},
     "figures contradict each other (rmax = hpl_rate(n, time)): rmax 45.74 is not what HPL computes for N=8256 in "
     "0.5 s"),
    ({"rmax": (900.0, "Gflop/s")}, {"num_nodes": 4, "num_tasks": 2}, "num_tasks: 2 tasks cannot fill 4 nodes"),
    ({"rmax": (3.0e6, "Gflop/s")}, {"num_nodes": 1, "num_tasks": 2},
     "figure rmax: 3e+06 Gflop/s on 2 tasks is beyond 1e+06 Gflop/s per process, more than any processor reaches"),
    ({"rmax": (900.0, "Gflop/s")}, {"num_nodes": 1, "num_tasks": 2, "extra": {"hpl_deck": {"p": 2, "q": 2}}},
     "hpl_deck: a 2x2 grid needs 4 tasks, the case ran 2"),
])
def test_a_case_whose_figures_contradict_each_other_is_skipped_by_name(tmp_path, figures, counts, reason):
    good = _hpl({"rmax": (45.74, "Gflop/s"), "rpeak_gflops": (64.0, "Gflop/s"), "efficiency": (71.46875, "%"),
                 "n": (8256.0, "N"), "time": (8.2, "s")}, scale="1_core", num_tasks=1)
    warnings, rows, report = _ingest(tmp_path, good, _hpl(figures, **counts))
    assert warnings == [f"skipped HPLCheck %scale=1_node in {report}: {reason}"]
    assert {case for case, _ in rows} == {"HPLCheck %scale=1_core"}  # the real run's figures agree


def test_hpcc_pingpong_figures_out_of_order_are_skipped(tmp_path):
    import reframe_reports as rr

    figures = {"pingpong_latency_min": (2.0, "us"), "pingpong_latency_avg": (1.0, "us"),
               "pingpong_latency_max": (3.0, "us")}
    good = _hpl({"rmax": (45.74, "Gflop/s")})
    warnings, rows, report = _ingest(tmp_path, good, rr.testcase("HPCCNetworkCheck", figures, params={}, num_tasks=2))
    assert warnings == [f"skipped HPCCNetworkCheck in {report}: figures contradict each other (pingpong_latency_min "
                        f"<= pingpong_latency_avg <= pingpong_latency_max): pingpong_latency_min 2, "
                        f"pingpong_latency_avg 1, pingpong_latency_max 3"]


def test_a_figure_dropped_from_a_perflog_is_named(tmp_path):
    from scalebench.reporting.store import load

    real = (__import__("pathlib").Path(__file__).parents[2] / "data" / "reframe" / "hpl_local_perflog.log").read_text()
    header, *lines = real.splitlines()
    columns = header.split("|")
    edited = []
    for line in lines:
        cells = dict(zip(columns, line.split("|")))
        if cells["perf_var"] == "rmax":
            cells["perf_unit"] = "Tflop/s"
            cells["perf_value"] = str(float(cells["perf_value"]) / 1000)
        if cells["perf_var"] == "n":
            cells["perf_value"] = "lots"
        edited.append("|".join(cells[c] for c in columns))
    path = tmp_path / "runs" / "r" / "perflogs" / "local" / "default" / "HPLCheck.log"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join([header, *edited]) + "\n")
    loaded = load([tmp_path], index=False)
    assert any(w.endswith("figure n: 'lots' is not a number: dropped") for w in loaded.warnings)
    rmax = [r for r in loaded.table.records.to_dicts() if r["figure"] == "rmax"]
    assert rmax and all(r["unit"] == "Gflop/s" and r["value"] > 1 for r in rmax)


def test_success_0_with_every_row_passed_is_a_problem_without_the_counts_too():
    """An excerpt without HPL's 'Finished' counts: a PASSED row still cannot go with Success=0."""
    text = ("This is the DARPA/DOE HPC Challenge Benchmark version 1.5.0 October 2012\nBegin of HPL section.\n"
            + hpl_rows("WR11C2R4 10000 192 1 2 6.50 1.0256e+02") + "End of HPL section.\n"
            "Begin of Summary section.\nSuccess=0\nHPL_Tflops=0.10256\nEnd of Summary section.\n")
    assert any(w.startswith("the Summary says Success=0") for w in parse_text("hpcc", text)["warnings"])
