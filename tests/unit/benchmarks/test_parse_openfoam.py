"""OpenFOAM solver log parser: real vectors from tests/data/openfoam, then logs built from the log layout."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest

from scalebench.benchmarks.openfoam.output import parse_openfoam
from vectors import printed
from vectors import assert_linear_time, assert_parse_errors, assert_registered, assert_result_or_parse_error
from vectors import assert_same, assert_sources_present, check_extras, load_vector, mutated_texts, read_vector
from vectors import vector_names

VECTORS = vector_names("openfoam")

# Keys the parser adds beyond the expected files, and their values for each vector.
EXTRA_VALUES: Dict[str, Dict[str, Any]] = {
    "ofv2012_icoFoam_cavity_serial": {
        # 100 ExecutionTime lines from 0.01 to 0.11 s: (0.11 - 0.01) / 99; printed to 0.01 s,
        # so most deltas are 0.
        "seconds_per_step_mean": 0.1 / 99,
        "seconds_per_step_median": 0.0,
        "fatal_error": False,
        "nonfinite_residuals": False,
        "first_nonfinite_time": None,
        "last_residuals": {
            "Ux": {"solver": "smoothSolver", "initial": 2.3091e-07, "final": 2.3091e-07, "iterations": 0},
            "Uy": {"solver": "smoothSolver", "initial": 5.0684e-07, "final": 5.0684e-07, "iterations": 0},
            "p": {"solver": "DICPCG", "initial": 9.59103e-07, "final": 9.59103e-07, "iterations": 0},
        },
    },
    "ofv2312_simpleFoam_motorBike_parallel_np6": {
        "seconds_per_step_mean": (18.65 - 0.41) / 499,
        "seconds_per_step_median": 0.03,
        "fatal_error": False,
        "nonfinite_residuals": False,
        "first_nonfinite_time": None,
        "last_residuals": {
            "Ux": {"solver": "smoothSolver", "initial": 0.51673, "final": 0.267477, "iterations": 1000},
            "Uy": {"solver": "smoothSolver", "initial": 0.468535, "final": 0.0124153, "iterations": 2},
            "Uz": {"solver": "smoothSolver", "initial": 0.424417, "final": 0.0117166, "iterations": 2},
            "p": {"solver": "GAMG", "initial": 0.0538799, "final": 0.000452438, "iterations": 2},
            "omega": {"solver": "smoothSolver", "initial": 7.03562e-09, "final": 7.03562e-09, "iterations": 0},
            "k": {"solver": "smoothSolver", "initial": 9.05745e-09, "final": 9.05745e-09, "iterations": 0},
        },
    },
}


@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name: str) -> None:
    actual, expected = load_vector("openfoam", name)
    check_extras(actual, expected, EXTRA_VALUES[name], rel_tol=1e-9)
    assert_same(actual, expected)


def test_all_openfoam_vectors_present() -> None:
    assert sorted(EXTRA_VALUES) == VECTORS
    assert_sources_present("openfoam", VECTORS)


# --- synthetic logs, written from the solver log layout (argList banner, Time loop) ---

FOUNDATION_23_BANNER = [
    "/*---------------------------------------------------------------------------*\\",
    "| =========                 |                                                 |",
    "| \\\\      /  F ield         | OpenFOAM: The Open Source CFD Toolbox           |",
    "|  \\\\    /   O peration     | Version:  2.3.1                                 |",
    "|   \\\\  /    A nd           | Web:      www.OpenFOAM.org                      |",
    "|    \\\\/     M anipulation  |                                                 |",
    "\\*---------------------------------------------------------------------------*/",
]


def banner(build: str, exec_line: str, nprocs: Optional[int]) -> List[str]:
    lines = FOUNDATION_23_BANNER + [
        f"Build  : {build}",
        f"Exec   : {exec_line}",
        "Date   : Mar 02 2015",
        "Time   : 10:41:22",
        'Host   : "node001"',
        "PID    : 23405",
        "Case   : /home/user/run/cavity",
    ]
    if nprocs is not None:
        lines += [f"nProcs : {nprocs}", "Slaves : ", str(nprocs - 1), "("]
        lines += [f'"node001.{23406 + i}"' for i in range(nprocs - 1)] + [")", ""]
        lines += ["Pstream initialized with:", "    floatTransfer      : 0", "    nProcsSimpleSum    : 0"]
    lines += [
        "sigFpe : Enabling floating point exception trapping (FOAM_SIGFPE).",
        "",
        "// * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * * //",
        "Create time",
        "",
        "Create mesh for time = 0",
        "",
        "Starting time loop",
        "",
    ]
    return lines


def step(t: str, exec_s: float, clock_s: int, ux: str = "1", p_final: str = "7.55402e-07") -> List[str]:
    return [
        f"Time = {t}",
        "",
        "Courant Number mean: 0.0976825 max: 0.585607",
        f"DILUPBiCG:  Solving for Ux, Initial residual = {ux}, Final residual = 2.96338e-06, No Iterations 8",
        "DILUPBiCG:  Solving for Uy, Initial residual = 0, Final residual = 0, No Iterations 0",
        f"DICPCG:  Solving for p, Initial residual = 1, Final residual = {p_final}, No Iterations 35",
        "time step continuity errors : sum local = 8.90511e-09, global = -1.99712e-19, cumulative = -1.99712e-19",
        f"ExecutionTime = {exec_s:g} s  ClockTime = {clock_s} s",
        "",
    ]


def of_log(
    n_steps: int = 4,
    exec_line: str = "icoFoam -parallel",
    nprocs: Optional[int] = 4,
    end: bool = True,
    suffix: str = "",
) -> List[str]:
    lines = banner("2.3.1-bcfaaa7b8660", exec_line, nprocs)
    for i in range(1, n_steps + 1):
        lines += step(f"{0.005 * i:g}{suffix}", 0.5 + 0.25 * i, i // 2)
    if end:
        lines += ["End", ""]
        if nprocs is not None:
            lines += ["Finalising parallel run"]
    return lines


def test_foundation_23_parallel_log() -> None:
    out = parse_openfoam(printed(of_log()))
    d = out.to_dict()
    assert d["build"] == "2.3.1-bcfaaa7b8660"
    assert d["exec"] == "icoFoam -parallel" and d["application"] == "icoFoam"
    assert d["parallel"] is True and d["nprocs"] == 4
    assert d["n_time_steps"] == 4 and d["n_execution_time_lines"] == 4
    assert (d["first_time"], d["last_time"]) == (0.005, 0.02)
    assert d["final_execution_time_s"] == 1.5 and d["final_clock_time_s"] == 2.0
    assert d["last_complete_pair"] == {"execution_time_s": 1.5, "clock_time_s": 2.0}
    assert d["finished"] is True and d["finalising_parallel_run"] is True
    assert d["seconds_per_step_mean"] == 0.25 and d["seconds_per_step_median"] == 0.25
    assert d["last_residuals"]["p"] == {
        "solver": "DICPCG", "initial": 1.0, "final": 7.55402e-07, "iterations": 35,
    }
    assert d["nonfinite_residuals"] is False and d["fatal_error"] is False
    json.dumps(d, allow_nan=False)


def test_foundation_11_time_suffix_and_serial_without_nprocs() -> None:
    lines = of_log(n_steps=3, exec_line="foamRun -solver incompressibleFluid", nprocs=None, suffix="s")
    d = parse_openfoam(printed(lines)).to_dict()
    assert d["application"] == "foamRun"
    assert d["n_time_steps"] == 3 and d["last_time"] == 0.015
    assert d["parallel"] is False and d["nprocs"] == 1
    assert d["finished"] is True and d["finalising_parallel_run"] is False


def test_parallel_without_nprocs_line_has_unknown_nprocs() -> None:
    lines = [line for line in of_log() if not line.startswith("nProcs")]
    d = parse_openfoam(printed(lines)).to_dict()
    assert d["parallel"] is True and d["nprocs"] is None


def test_banner_time_and_create_mesh_lines_are_not_time_steps() -> None:
    lines = banner("v2306", "pimpleFoam", None)
    d = parse_openfoam(printed(lines)).to_dict()
    assert d["n_time_steps"] == 0 and d["first_time"] is None
    assert d["finished"] is False and d["final_execution_time_s"] is None
    assert d["last_complete_pair"] is None and d["seconds_per_step_mean"] is None


def test_log_cut_inside_execution_time_line() -> None:
    lines = of_log(n_steps=3, end=False)
    lines += ["Time = 0.02", "", "ExecutionTime = 1.5 s"]
    d = parse_openfoam(printed(lines)).to_dict()
    assert d["finished"] is False and d["finalising_parallel_run"] is False
    assert d["n_time_steps"] == 4 and d["n_execution_time_lines"] == 4
    assert d["final_execution_time_s"] == 1.5 and d["final_clock_time_s"] is None
    assert d["last_complete_pair"] == {"execution_time_s": 1.25, "clock_time_s": 1.0}


@pytest.mark.parametrize("token", ["nan", "-nan", "inf", "1.#QNAN"])
def test_nonfinite_residual_is_flagged_with_its_time(token: str) -> None:
    lines = banner("v2012", "simpleFoam", None)
    lines += step("1", 0.4, 0) + step("2", 0.8, 1, ux=token) + step("3", 1.2, 1, p_final=token)
    d = parse_openfoam(printed(lines)).to_dict()
    assert d["nonfinite_residuals"] is True and d["first_nonfinite_time"] == 2.0
    assert d["last_residuals"]["p"]["final"] == token
    json.dumps(d, allow_nan=False)


def test_fatal_error_and_floating_point_exception() -> None:
    lines = of_log(n_steps=2, end=False) + [
        "",
        "--> FOAM FATAL ERROR: ",
        "Maximum number of iterations exceeded",
        "",
        "    From function Foam::scalar Foam::species::thermo<Thermo, Type>::T(...) const",
        "FOAM parallel run exiting",
    ]
    assert parse_openfoam(printed(lines)).to_dict()["fatal_error"] is True
    fpe = of_log(n_steps=2, end=False) + [
        "#0  Foam::error::printStack(Foam::Ostream&) at ??:?",
        "#1  Foam::sigFpe::sigHandler(int) at ??:?",
        "#2  ? in /lib64/libc.so.6",
        "Floating point exception (core dumped)",
    ]
    out = parse_openfoam(printed(fpe))
    assert out.fatal_error is True and out.finished is False


def test_coupled_vector_residual() -> None:
    lines = banner("extend-4.1", "pUCoupledFoam", None) + [
        "Time = 1",
        "BiCGStab:  Solving for Up, Initial residual = (1 0.5 nan),"
        " Final residual = (0.01 0.002 nan), No Iterations 12",
        "ExecutionTime = 0.5 s  ClockTime = 1 s",
        "End",
    ]
    d = parse_openfoam(printed(lines)).to_dict()
    assert d["last_residuals"]["Up"]["initial"] == [1.0, 0.5, "nan"]
    assert d["nonfinite_residuals"] is True and d["first_nonfinite_time"] == 1.0


def test_appended_runs_report_the_last() -> None:
    first = of_log(n_steps=5, end=False)
    second = of_log(n_steps=2)
    second[second.index("Exec   : icoFoam -parallel")] = "Exec   : icoFoam -parallel -case restart"
    d = parse_openfoam(printed(first + second)).to_dict()
    assert d["exec"] == "icoFoam -parallel -case restart"
    assert d["n_time_steps"] == 2 and d["final_execution_time_s"] == 1.0
    assert d["finished"] is True


def test_nothing_recognisable_is_a_parse_error() -> None:
    texts = ["", "\n", "End\n", "hello\n", "\x00\xff garbage \ufffd", "Time   : 10:41:22\n"]
    assert_parse_errors(parse_openfoam, texts)


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = [
        "Time = " + "1" * n + "x",
        "Time = " + "1." * n,
        "ExecutionTime = " + "1" * n + " s  ClockTime = ",
        "ExecutionTime =" + " " * n + "x",
        "GAMG:  Solving for p, Initial residual = " + "(" * n,
        "GAMG:  Solving for " + "p" * n + ", Initial residual = 1, Final residual = 1, No Iterations 1",
        "GAMG:  Solving for p, Initial residual = " + "1 " * n + ", Final residual = 1, No Iterations 1",
        "Build  : " + "x" * n,
        "nProcs : " + "9" * n,
        "Exec   :" + " " * n + "x",
        "Solving for " * (n // 12),
    ]
    assert_linear_time(parse_openfoam, hostile)


def test_mutated_real_outputs_give_a_result_or_parse_error() -> None:
    samples = [read_vector("openfoam", "ofv2012_icoFoam_cavity_serial")[:20000], printed(of_log(n_steps=20))]
    alphabet = "Time=ExecutionClock s0123456789.e+-nan,()\n\r\t"
    texts = mutated_texts(samples, seed=20240603, rounds=200, max_edits=40, alphabet=alphabet)
    assert_result_or_parse_error(parse_openfoam, texts)


def test_registry_entry() -> None:
    assert_registered("openfoam", parse_openfoam, printed(of_log()))
