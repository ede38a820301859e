"""HPCC hpccoutf.txt parser: real vectors from tests/data/hpcc, then cases built from the HPCC layout."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest

from scalebench.errors import ParseError
from scalebench.hpl.hpcc_output import KEY_METRICS, parse_hpcc, summary_value
from vectors import printed
from vectors import assert_linear_time, assert_registered, assert_result_or_parse_error, assert_same
from vectors import assert_sources_present, load_vector, mutated_texts, pop_extra, read_vector, sample_texts
from vectors import vector_names

VECTORS = vector_names("hpcc")

# The expected files predate the `hpl` key (the HPL block of the LAST run); checked here instead,
# from the HPL section of each file's last run: (rows, counts, rmax, statuses).
HPL_OF_LAST_RUN: Dict[str, Optional[Dict[str, Any]]] = {
    "hpcc142_two_appended_runs": {
        "tv_n_nb": [("WC11C2R4", 2560, 80)],
        "gflops": [8.577],
        "status": ["PASSED"],
        "counts": {"passed": 1, "failed": 0, "skipped": 0},
        "rmax_gflops": 8.577,
    },
    "hpcc150_8procs_full": {
        "tv_n_nb": [("WR11C2R4", 1000, 80), ("WR11C2R4", 1000, 240), ("WR11C2R4", 3000, 80), ("WR11C2R4", 3000, 240)],
        "gflops": [5.012, 4.631, 8.125, 7.051],
        "status": ["PASSED"] * 4,
        "counts": {"passed": 4, "failed": 0, "skipped": 0},
        "rmax_gflops": 8.125,
    },
    "hpcc150_dgemm_only_hpl_minus1": None,
    "hpcc150_grep_excerpt_no_markers": None,
    "hpcc150_hpl_failed_nan_success0": {
        "tv_n_nb": [("WR10L2L2", 10000, 1536)],
        "gflops": [208.5],
        "status": ["FAILED"],
        "counts": {"passed": 0, "failed": 1, "skipped": 0},
        "rmax_gflops": None,
    },
}


@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name: str) -> None:
    actual, expected = load_vector("hpcc", name)
    hpl = pop_extra(actual, expected, "hpl")
    assert_same(actual, expected)
    want = HPL_OF_LAST_RUN[name]
    if want is None:
        assert hpl is None
        return
    assert [(r["tv"], r["n"], r["nb"]) for r in hpl["rows"]] == want["tv_n_nb"]
    assert [r["gflops"] for r in hpl["rows"]] == want["gflops"]
    assert [r["status"] for r in hpl["rows"]] == want["status"]
    assert hpl["counts"] == want["counts"] and hpl["end_of_tests"] is True
    assert hpl["rmax_gflops"] == want["rmax_gflops"]
    assert hpl["hpl_version"] == "2.0" and hpl["threshold"] == 16.0


def test_all_hpcc_vectors_present() -> None:
    assert sorted(HPL_OF_LAST_RUN) == VECTORS
    assert_sources_present("hpcc", VECTORS)


def test_nan_hpl_in_hpcc_is_a_problem() -> None:
    out = parse_hpcc(read_vector("hpcc", "hpcc150_hpl_failed_nan_success0"))
    assert out.hpl is not None
    assert out.hpl.rows[0].residual == "-nan"
    assert out.hpl.problems() == [
        "residual of row 1 (N=10000 NB=1536 1x2) is not finite (-nan)",
        "1 test failed",
    ]


# --- synthetic files, written from the hpccoutf.txt layout (hpcc.c / io.c) ---

HASHES = "#" * 72


def banner(version: str = "1.5.0", host: str = "node001") -> List[str]:
    return [
        HASHES,
        f"This is the DARPA/DOE HPC Challenge Benchmark version {version} October 2012",
        "Produced by Jack Dongarra and Piotr Luszczek",
        "Current time (1497869703) is Mon Jun 19 06:55:03 2017",
        "",
        f"Hostname: '{host}'",
        HASHES,
    ]


def section(name: str, body: List[str], closed: bool = True) -> List[str]:
    return [f"Begin of {name} section."] + body + ([f"End of {name} section."] if closed else [])


HPL_BODY = [
    "T/V                N    NB     P     Q               Time                 Gflops",
    "-" * 80,
    "W%c%1d%c%c%1d%c%1d%12d %5d %5d %5d %18.2f %18.3e" % ("R", 1, "1", "C", 2, "R", 4, 3000, 80, 2, 2, 2.22, 8.125),
    "-" * 80,
    "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= %16.7f ...... PASSED" % 0.0065966,
    "=" * 80,
    "",
    "Finished      1 tests with the following results:",
    "              1 tests completed and passed residual checks,",
    "              0 tests completed and failed residual checks,",
    "              0 tests skipped because of illegal input values.",
    "-" * 80,
    "",
    "End of Tests.",
    "Current time (1497869711) is Mon Jun 19 06:55:11 2017",
    "",
]

SUMMARY_PAIRS = [
    "VersionMajor=1",
    "VersionRelease=f",
    "Success=1",
    "CommWorldProcs=4",
    "MPI_Wtick=1.000000e-06",
    "HPL_Tflops=0.00812499",
    "HPL_RnormI=-nan",
    "HPL_Xnorm1=inf",
    "HPL_N=3000",
    "HPL_ctop=-",
    "HPL_dMACH_BASE=2.000000e+00",
    "HPL_BnormI=2.32136e-310",
    "PTRANS_GBs=-1",
    "StarDGEMM_Gflops=1.0783",
]


def run(host: str = "node001", summary: Optional[List[str]] = None, hpl: bool = True, done: bool = True) -> List[str]:
    lines = banner(host=host) + section("PTRANS", ["WALL  500  500  80  80   2   2     0.00 PASSED    2.291  0.00"])
    if hpl:
        lines += section("HPL", HPL_BODY)
    if summary is not None:
        lines += section("Summary", summary, closed=done)
    if done:
        lines += [HASHES, "End of HPC Challenge tests.", "Current time (1) is Mon Jun 19 06:55:11 2017", "", HASHES]
    return lines


def test_complete_run_types_summary_values() -> None:
    out = parse_hpcc(printed(run(summary=SUMMARY_PAIRS)))
    assert out.n_runs == 1 and out.n_complete_summaries == 1
    assert out.last_summary == {
        "VersionMajor": 1,
        "VersionRelease": "f",
        "Success": 1,
        "CommWorldProcs": 4,
        "MPI_Wtick": 1e-06,
        "HPL_Tflops": 0.00812499,
        "HPL_RnormI": "-nan",
        "HPL_Xnorm1": "inf",
        "HPL_N": 3000,
        "HPL_ctop": "-",
        "HPL_dMACH_BASE": 2.0,
        "HPL_BnormI": 2.32136e-310,
        "PTRANS_GBs": -1,
        "StarDGEMM_Gflops": 1.0783,
    }
    assert type(out.last_summary["HPL_dMACH_BASE"]) is float
    assert out.key_metrics == {
        "HPL_Tflops": 0.00812499,
        "HPL_N": 3000,
        "CommWorldProcs": 4,
        "Success": 1,
        "StarDGEMM_Gflops": 1.0783,
        "PTRANS_GBs": -1,
    }
    assert list(out.key_metrics) == [k for k in KEY_METRICS if k in out.key_metrics]
    d = out.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["runs"] == [
        {
            "banner_version": "1.5.0",
            "hostname": "node001",
            "completed": True,
            "sections_completed": ["PTRANS", "HPL", "Summary"],
            "summary": out.last_summary,
        }
    ]
    assert d["hpl"]["rows"][0]["n"] == 3000 and d["hpl"]["counts"]["passed"] == 1
    assert d["hpl"]["rows"][0]["tv"] == "WR11C2R4"


@pytest.mark.parametrize(
    "raw, value",
    [
        ("0", 0),
        ("-1", -1),
        ("16777216", 16777216),
        ("1.5", 1.5),
        ("1.000000e-06", 1e-06),
        ("-1.021000e+03", -1021.0),
        ("-nan", "-nan"),
        ("nan", "nan"),
        ("-inf", "-inf"),
        ("1e999", "1e999"),
        ("R", "R"),
        ("", ""),
        ("1_000", "1_000"),
    ],
)
def test_summary_value_typing(raw: str, value: Any) -> None:
    got = summary_value(raw)
    assert type(got) is type(value) and got == value


def test_last_complete_summary_wins_and_hpl_is_from_last_run() -> None:
    first = run(host="a", summary=["Success=1", "HPL_Tflops=0.5"])
    second = run(host="b", summary=["Success=1", "HPL_Tflops=0.7"], hpl=False)
    cut = run(host="c", summary=["Success=0", "HPL_Tflops=0.9"], done=False)  # no End of Summary
    out = parse_hpcc(printed(first + second + cut))
    assert out.n_runs == 3 and out.n_complete_summaries == 2
    assert out.last_summary == {"Success": 1, "HPL_Tflops": 0.7}
    assert [r.hostname for r in out.runs] == ["a", "b", "c"]
    assert [r.completed for r in out.runs] == [True, True, False]
    assert out.runs[2].summary is None
    assert out.runs[2].sections_completed == ("PTRANS", "HPL")
    assert out.hpl is not None and out.hpl.rows[0].gflops == 8.125


def test_last_run_without_hpl_section_gives_null_hpl() -> None:
    out = parse_hpcc(printed(run(summary=["Success=1"]) + run(summary=["Success=1"], hpl=False)))
    assert out.hpl is None and out.to_dict()["hpl"] is None


def test_aborted_run_mid_section() -> None:
    lines = run(summary=["Success=1"]) + banner() + section("MPIRandomAccess", ["Running on 4 processors"], closed=False)
    out = parse_hpcc(printed(lines))
    assert out.n_runs == 2 and out.n_complete_summaries == 1
    assert out.runs[1].completed is False and out.runs[1].sections_completed == ()
    assert out.hpl is None


def test_hpl_rows_without_summary() -> None:
    out = parse_hpcc(printed(run(summary=None, done=False)))
    assert out.last_summary is None and out.key_metrics == {}
    assert out.to_dict()["last_summary"] is None
    assert out.hpl is not None and out.hpl.counts is not None


def test_truncated_hpl_section_in_last_run() -> None:
    lines = banner() + ["Begin of HPL section."] + HPL_BODY[:3]
    out = parse_hpcc(printed(lines))
    assert out.hpl is not None and out.hpl.rows[0].status is None
    assert out.hpl.end_of_tests is False


def test_key_value_lines_without_markers_are_one_complete_summary() -> None:
    text = "HPL_Tflops=0.0302422\n\nStarDGEMM_Gflops=8.45881\nMyOwnKey=hello\n"
    out = parse_hpcc(text)
    assert out.n_runs == 1 and out.n_complete_summaries == 1
    assert out.runs[0].completed is None and out.runs[0].banner_version is None
    assert out.key_metrics == {"HPL_Tflops": 0.0302422, "StarDGEMM_Gflops": 8.45881}
    assert (out.last_summary or {})["MyOwnKey"] == "hello"


def test_markers_without_banner_start_an_implicit_run() -> None:
    lines = section("HPL", HPL_BODY) + section("Summary", ["Success=1"]) + ["End of HPC Challenge tests."]
    out = parse_hpcc(printed(lines))
    assert out.n_runs == 1 and out.runs[0].banner_version is None
    assert out.runs[0].completed is True and out.last_summary == {"Success": 1}


def test_key_value_lines_outside_summary_are_ignored() -> None:
    lines = banner() + ["Number=1", "HPL_Tflops=9"] + section("Summary", ["Success=1"])
    assert parse_hpcc(printed(lines)).last_summary == {"Success": 1}


def test_crlf_and_indentation() -> None:
    text = "\r\n".join("  " + line for line in run(summary=SUMMARY_PAIRS)) + "\r\n"
    out = parse_hpcc(text)
    assert out.n_complete_summaries == 1 and (out.last_summary or {})["HPL_N"] == 3000
    assert out.runs[0].hostname == "node001" and out.hpl is not None


@pytest.mark.parametrize(
    "text",
    [
        "",
        printed(banner()),
        printed(banner() + section("Summary", ["Success=1"], closed=False)),
        printed(run(summary=None, hpl=False)),
        "Begin of Summary section.\nSuccess=1\n",
        "no results here at all\n",
    ],
)
def test_nothing_usable_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_hpcc(text)


def test_registry_kind() -> None:
    assert_registered("hpcc", parse_hpcc, printed(run(summary=["Success=1"])))


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = [
        "Begin of " + "A" * n + " sectio",
        "This is the DARPA/DOE HPC Challenge Benchmark version" + " " * n,
        "a" * n + "=",
        "=" * n,
        "Hostname: '" + "x" * n,
    ]
    assert_linear_time(parse_hpcc, hostile)


def test_mutated_real_outputs_give_a_result_or_parse_error() -> None:
    alphabet = "=#\n\r. -0123456789eBeginEndofSummarysection"
    texts = mutated_texts(sample_texts("hpcc"), seed=7, rounds=150, max_edits=40, alphabet=alphabet, replace=False)
    assert_result_or_parse_error(parse_hpcc, texts)
