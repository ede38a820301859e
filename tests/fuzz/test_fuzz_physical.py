"""The classes of issue 30, fuzzed: whatever numbers an output or a run report holds, no value that cannot
be a measurement (scalebench/data/quantities.yaml) ever comes out of a parser or the ingest as a number,
units end in the registry's, another partition's figure never replaces a case's own, and a kept case's
figures agree with each other (benchmarks.yaml relations). Fixed seeds, within the hard limit."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hostile
from fuzzing import FUZZ, HARD_LIMIT_S, hard_limit
from scalebench.registry import quantity_of
from scalebench.errors import ParseError, ResultsError
from scalebench.hpl.output import DEFAULT_THRESHOLD, parse_hpl
from scalebench.benchmarks import parse_text

# Printed numbers no measurement can be, and some that can.
NUMBERS = ("-2.05", "-0.51", "-9.4", "-5", "-8", "-1", "0", "1e308", "-1e308", "1.8e308", "inf", "-inf", "nan", "-nan",
           "1e300", "99999", "0.00", "1.05", "9.4", "100", "2", "64", "1e-300")


def _largest(unit: str) -> float:
    quantity = quantity_of(unit)
    return quantity.largest(unit) if quantity is not None else math.inf


def _measurements_sound(values, unit: str, allowed=()) -> list:
    """The values that are numbers a measurement in `unit` cannot be ([] when all are sound)."""
    return [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and v not in allowed
            and not (math.isfinite(v) and 0 <= v <= _largest(unit))]


def _parse(kind: str, text: str):
    try:
        with hard_limit(HARD_LIMIT_S):
            out = parse_text(kind, text)
    except ParseError:
        return None
    json.dumps(out, allow_nan=False)
    return out


numbers = st.sampled_from(NUMBERS)


@settings(FUZZ, max_examples=80)
@given(values=st.lists(numbers, min_size=1, max_size=8), latency=st.booleans())
def test_no_osu_row_or_peak_is_a_value_that_cannot_be(values, latency):
    unit = "us" if latency else "MB/s"
    header = "# Size          Latency (us)" if latency else "# Size      Bandwidth (MB/s)"
    rows = "".join(f"{2 ** i}   {v}\n" for i, v in enumerate(values))
    out = _parse("osu", f"# OSU MPI Test v7.3\n{header}\n{rows}")
    assert out is not None
    found = [v for _, v in out["rows"]] + [out["peak_value"], out.get("min_latency_us")]
    assert _measurements_sound(found, unit) == []
    refused = sum(v is None for _, v in out["rows"])
    assert len(out.get("warnings", [])) >= refused  # each one named


@settings(FUZZ, max_examples=60)
@given(rows=st.lists(st.tuples(numbers, numbers), min_size=1, max_size=6))
def test_no_netpipe_time_or_rate_is_a_value_that_cannot_be(rows):
    text = "".join(f"{2 ** i:>8} {mbps} {seconds}\n" for i, (mbps, seconds) in enumerate(rows))
    out = _parse("netpipe", text)
    if out is None:
        return
    assert _measurements_sound([r["usec"] for r in out["rows"]] + [out["min_latency_usec"]], "us") == []
    assert _measurements_sound([r["mbps"] for r in out["rows"]] + [out["peak_mbps"]], "Mbit/s") == []
    assert all(v is None or v > 0 for v in [r["usec"] for r in out["rows"]])


@settings(FUZZ, max_examples=80)
@given(loop=numbers, procs=st.sampled_from(("1", "2", "64", "0")), rate=numbers, tasks=st.sampled_from(("1", "2", "64")),
       atom_rate=numbers)
def test_no_lammps_figure_is_a_value_that_cannot_be_and_contradictions_are_named(loop, procs, rate, tasks, atom_rate):
    text = (f"LAMMPS (2 Aug 2023)\nLoop time of {loop} on {procs} procs for 100 steps with 32000 atoms\n\n"
            f"Performance: 9.191 tau/day, {rate} timesteps/s, {atom_rate} katom-step/s\n"
            f"99.8% CPU use with {tasks} MPI tasks x 1 OpenMP threads\n")
    out = _parse("lammps", text)
    if out is None:  # a token the Loop time line does not read ('-nan' ...): no run summary, named
        return
    assert _measurements_sound([out["loop_time_s"]], "s") == []
    assert _measurements_sound([out["timesteps_per_s"]], "timesteps/s") == []
    assert _measurements_sound([out["atom_steps_per_s"]], "atom-steps/s") == []
    assert out["procs"] in (None, 1, 2, 64) and out["mpi_tasks"] in (None, 1, 2, 64)
    warnings = " ".join(out.get("warnings", []))
    if out["procs"] is not None and out["mpi_tasks"] is not None and out["procs"] != out["mpi_tasks"]:
        assert "MPI tasks" in warnings
    loop_s, per_s = out["loop_time_s"], out["timesteps_per_s"]
    if loop_s and per_s is not None and abs(per_s - 100 / loop_s) > 0.02 * 100 / loop_s + 0.0005:
        assert "contradicts" in warnings


@settings(FUZZ, max_examples=60)
@given(times=st.lists(numbers, min_size=1, max_size=6))
def test_no_openfoam_time_is_a_value_that_cannot_be(times):
    text = "Build  : v2312\nExec   : icoFoam\n" + "".join(
        f"Time = {i + 1}\nExecutionTime = {t} s  ClockTime = {i} s\n" for i, t in enumerate(times)) + "End\n"
    out = _parse("openfoam", text)
    if out is None:
        return
    assert _measurements_sound([out["final_execution_time_s"], out["seconds_per_step_mean"],
                                out["seconds_per_step_median"]], "s") == []


@settings(FUZZ, max_examples=80)
@given(tflops=numbers, procs=st.sampled_from(("-8", "0", "1", "2", "8")), success=st.sampled_from(("0", "1", "2")),
       latency=numbers, status=st.sampled_from(("PASSED", "FAILED")))
def test_no_hpcc_summary_value_is_one_that_cannot_be_and_contradictions_are_named(tflops, procs, success, latency,
                                                                                  status):
    hpl = hostile.hpl_text([hostile.GOOD_ROW[:-1] + (status,)])
    text = ("This is the DARPA/DOE HPC Challenge Benchmark version 1.5.0 October 2012\nBegin of HPL section.\n" + hpl
            + "End of HPL section.\nBegin of Summary section.\n"
            + f"Success={success}\nCommWorldProcs={procs}\nHPL_Tflops={tflops}\nMaxPingPongLatency_usec={latency}\n"
            + "End of Summary section.\nEnd of HPC Challenge tests.\n")
    out = _parse("hpcc", text)
    assert out is not None
    metrics = out["key_metrics"]
    assert _measurements_sound([metrics.get("HPL_Tflops")], "Tflop/s", allowed=(-1,)) == []
    assert _measurements_sound([metrics.get("MaxPingPongLatency_usec")], "us", allowed=(-1,)) == []
    assert metrics.get("CommWorldProcs") in (None, 1, 2, 8)
    assert metrics.get("Success") in (None, 0, 1)
    warnings = " ".join(out.get("warnings", []))
    tf = metrics.get("HPL_Tflops")
    if isinstance(tf, (int, float)) and tf != -1 and not math.isclose(tf * 1000, 102.56, rel_tol=1e-3):
        assert "HPL_Tflops" in warnings and out["hpl"]["problems"]
    if metrics.get("Success") == 0 and status == "PASSED":
        assert "Success=0" in warnings


@st.composite
def appended_runs(draw):
    """HPL runs appended to one file, each with its own threshold and a row whose residual is drawn."""
    runs = []
    for _ in range(draw(st.integers(1, 4))):
        threshold = draw(st.sampled_from((None, "1.0e-03", "1.0", "16.0", "100.0")))
        residual = draw(st.sampled_from(("1.0e-04", "5.0e-03", "2.0", "20.0", "200.0")))
        runs.append((threshold, residual))
    return runs


@settings(FUZZ, max_examples=80)
@given(runs=appended_runs())
def test_each_appended_run_is_judged_by_its_own_threshold(runs):
    text = ""
    for threshold, residual in runs:
        text += "HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018\n"
        if threshold is not None:
            text += f"- Computational tests pass if scaled residuals are less than                {threshold}\n"
        text += (f"WR11C2R4        10000   192     1     2               6.50             1.0256e+02\n"
                 f"||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=   {residual} ...... PASSED\n")
    out = parse_hpl(text)
    for row, (threshold, residual) in zip(out.rows, runs):
        limit = float(threshold) if threshold is not None else DEFAULT_THRESHOLD
        assert (row.status == "PASSED") == (float(residual) <= limit), (row, threshold)


# --- run reports --------------------------------------------------------------------------------------

UNITS = ("Gflop/s", "Tflop/s", "Mflop/s", "flop/s", "GB/s", "furlongs", "", "%")
VALUES = (900.0, 0.9, 9.0e5, 9.0e11, 1e308, -900.0, "900", True, None, 0.0)


@pytest.fixture(scope="module")
def results_root(tmp_path_factory):
    return tmp_path_factory


@settings(FUZZ, max_examples=60)
@given(cases=st.lists(st.fixed_dictionaries({
    "rmax": st.tuples(st.sampled_from(VALUES), st.sampled_from(UNITS)),
    "efficiency": st.sampled_from((90.0, 9.0, 50.0, None)), "other_partition": st.booleans(),
    "nodes": st.sampled_from((1, 2, 4)), "tasks": st.sampled_from((1, 2, 8)),
    "grid": st.sampled_from(((1, 1), (2, 2), (2, 4)))}), min_size=1, max_size=5))
def test_ingest_keeps_registry_units_own_partitions_and_figures_that_agree(results_root, cases):
    import reframe_reports as rr
    from scalebench.reporting import store

    root = results_root.mktemp("results")
    testcases = []
    for i, c in enumerate(cases):
        figures = {"rmax": c["rmax"], "rpeak_gflops": (1000.0, "Gflop/s")}
        if c["efficiency"] is not None:
            figures["efficiency"] = (c["efficiency"], "%")
        case = rr.testcase("HPLCheck", figures, params={"scale": f"{i}_nodes"}, num_nodes=c["nodes"],
                           num_tasks=c["tasks"], extra={"hpl_deck": {"p": c["grid"][0], "q": c["grid"][1]}})
        if c["other_partition"]:
            case["perfvalues"]["other:gpu:rmax"] = [123456.0, 0, None, None, "Gflop/s", "pass"]
        testcases.append(case)
    rr.write_run(root, "r", testcases)
    try:
        with hard_limit(HARD_LIMIT_S):
            loaded = store.load([root], index=False)
    except ResultsError:  # every case left out, by name
        return
    sessions, warnings = loaded.sessions(), loaded.warnings
    for row in loaded.table.with_cases().to_dicts():
        if row["figure"] == "rmax" and row["usable"]:
            assert row["unit"] == "Gflop/s" and 0 < row["value"] <= 1e6 * (row["num_tasks"] or 1)
            assert row["value"] != 123456.0
    for session in sessions:
        for case in session.cases:
            assert case.num_tasks >= case.num_nodes and case.num_tasks >= case.provenance["hpl_deck"]["p"] * \
                case.provenance["hpl_deck"]["q"]
            rmax, rpeak, eff = (case.figure(n) for n in ("rmax", "rpeak_gflops", "efficiency"))
            if None not in (rmax, rpeak, eff):
                assert math.isclose(eff, 100 * rmax / rpeak, rel_tol=0.01)
    assert sum(len(s.cases) for s in sessions) + sum(w.startswith("skipped ") for w in warnings) == len(testcases)
