"""HPL output parser: real vectors from tests/data/hpl, then cases built from the HPL print formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import List, Tuple

import pytest

from scalebench.errors import InputError, ParseError
from scalebench.hpl.output import THREE_RESIDUAL_VERSION, HplCounts, HplOutput, parse_hpl
from scalebench.benchmarks import KINDS, parse_file, parse_text
from vectors import printed
from vectors import assert_linear_time, assert_parse_errors, assert_registered, assert_result_or_parse_error
from vectors import assert_same, assert_sources_present, check_extras, load_vector, mutated_texts, read_vector
from vectors import sample_texts, vector_names

VECTORS = vector_names("hpl")

# Values the parser rightly extracts but the vector's expected file leaves out: both texts
# print the eps and threshold header lines (see the report in the change description).
NOT_IN_EXPECTED = {
    "nvidia_cuda_hpl20_truncated": {"eps": 1.110223e-16, "threshold": 16.0},
    "pace_multi4_hpl23": {"threshold": 16.0},
}


@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name: str) -> None:
    actual, expected = load_vector("hpl", name)
    check_extras(actual, expected, NOT_IN_EXPECTED.get(name, {}))
    assert_same(actual, expected)


def test_all_hpl_vectors_present() -> None:
    assert len(VECTORS) == 7
    assert_sources_present("hpl", VECTORS)


def test_vector_problems() -> None:
    clean = parse_hpl(read_vector("hpl", "pace_multi4_hpl23"))
    assert clean.problems() == []
    assert clean.problems(expected_cases=4) == []
    assert clean.problems(expected_cases=8) == ["4 tests passed but 8 expected"]
    cut = parse_hpl(read_vector("hpl", "nvidia_cuda_hpl20_truncated"))
    assert cut.problems(expected_cases=8) == [
        "no 'End of Tests.' line: the run stopped early",
        "no 'Finished ... tests' summary",
        "1 test passed but 8 expected",
    ]


# --- synthetic outputs, written from HPL's printf formats (HPL_pdtest.c / HPL_pdinfo.c) ---

ROW_23 = "W%c%1d%c%c%1d%c%1d%12d %5d %5d %5d %18.2f %19.4e"  # HPL 2.1-2.3
ROW_20 = "W%c%1d%c%c%1d%c%1d%12d %5d %5d %5d %18.2f %18.3e"  # HPL 1.0-2.0
RESID_23 = "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= %16.8e ...... %s"
RESID_20 = "||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)= %16.7f ...... %s"
RESID_10 = (
    "||Ax-b||_oo / ( eps * ||A||_1  * N        ) = %16.7f ...... %s",
    "||Ax-b||_oo / ( eps * ||A||_1  * ||x||_1  ) = %16.7f ...... %s",
    "||Ax-b||_oo / ( eps * ||A||_oo * ||x||_oo ) = %16.7f ...... %s",
)
RULE = "-" * 80
BANNER_23 = "HPLinpack 2.3  --  High-Performance Linpack benchmark  --   December 2, 2018"
EPS_LINE = "- The relative machine precision (eps) is taken to be           %18.6e"
THRESHOLD_LINE = "- Computational tests pass if scaled residuals are less than          %10.1f"
HEADER = "T/V                N    NB     P     Q               Time                 Gflops"


def hpl_gflops(n: int, seconds: float) -> float:
    """Gflops as HPL computes it from N and the time (4 significant digits, as it prints them)."""
    return float(f"{(2 / 3 * n**3 + 1.5 * n**2) / seconds / 1e9:.4g}")


def row23(n: int, nb: int, p: int, q: int, secs: float, gflops: float, order: str = "R") -> str:
    return ROW_23 % (order, 1, "1", "C", 2, "R", 4, n, nb, p, q, secs, gflops)


def summary(passed: int, failed: int, skipped: int) -> List[str]:
    return [
        "Finished %6d tests with the following results:" % (passed + failed + skipped),
        "         %6d tests completed and passed residual checks," % passed,
        "         %6d tests completed and failed residual checks," % failed,
        "         %6d tests skipped because of illegal input values." % skipped,
        RULE,
        "",
        "End of Tests.",
        "=" * 80,
    ]


def run23(tests: List[Tuple[int, int, int, int, float, float, float, str]], **kw: int) -> List[str]:
    """A whole HPL 2.3 output: banner, header facts, one block per test, summary."""
    lines = ["=" * 80, BANNER_23, "=" * 80, "", EPS_LINE % 1.110223e-16, THRESHOLD_LINE % 16.0, ""]
    for n, nb, p, q, secs, gflops, resid, status in tests:
        lines += ["=" * 80, HEADER, RULE, row23(n, nb, p, q, secs, gflops)]
        lines += ["HPL_pdgesv() start time Mon Jun  6 12:08:36 2022", "", RULE]
        lines += [RESID_23 % (resid, status)]
    passed = sum(1 for t in tests if t[-1] == "PASSED")
    return lines + ["=" * 80, ""] + summary(passed, len(tests) - passed, kw.get("skipped", 0))


def test_hpl23_clean_run() -> None:
    text = printed(run23([(19000, 192, 2, 2, 1073.27, 4.261, 1.18409443e-03, "PASSED")]))
    out = parse_hpl(text)
    assert out.to_dict() == {
        "rows": [
            {
                "tv": "WR11C2R4",
                "n": 19000,
                "nb": 192,
                "p": 2,
                "q": 2,
                "time_s": 1073.27,
                "gflops": 4.261,
                "residual": 1.18409443e-03,
                "status": "PASSED",
            }
        ],
        "counts": {"passed": 1, "failed": 0, "skipped": 0},
        "end_of_tests": True,
        "rmax_gflops": 4.261,
        "problems": [],
        "hpl_version": "2.3",
        "eps": 1.110223e-16,
        "threshold": 16.0,
    }
    assert out.problems() == []
    assert out.problems(expected_cases=1) == []


def test_hpl20_fixed_point_residual_and_three_digit_gflops() -> None:
    text = printed(
        [
            ROW_20 % ("C", 0, "0", "L", 2, "L", 2, 8640, 144, 1, 4, 203.33, 2.115),
            RULE,
            RESID_20 % (0.0013903, "PASSED"),
        ]
        + summary(1, 0, 0)
    )
    out = parse_hpl(text)
    (row,) = out.rows
    assert (row.tv, row.n, row.nb, row.p, row.q) == ("WC00L2L2", 8640, 144, 1, 4)
    assert row.gflops == 2.115 and row.residual == 0.0013903 and row.residuals is None
    assert out.hpl_version is None and out.eps is None and out.threshold is None
    assert set(out.to_dict()) == {"rows", "counts", "end_of_tests", "rmax_gflops", "problems"}


def test_hpl10_three_residuals_one_failed() -> None:
    values = (0.0353693, 17.5, 0.0045577)
    statuses = ("PASSED", "FAILED", "PASSED")
    lines = [ROW_20 % ("R", 1, "1", "C", 2, "R", 4, 5000, 160, 1, 2, 10.43, 7.994), "-" * 76]
    lines += [fmt % (v, s) for fmt, v, s in zip(RESID_10, values, statuses)]
    out = parse_hpl(printed(lines + summary(0, 1, 0)))
    (row,) = out.rows
    assert row.residual == 0.0353693
    assert row.residuals == values
    assert row.status == "FAILED"
    assert out.to_dict()["rows"][0]["residuals"] == list(values)
    assert out.hpl_version == THREE_RESIDUAL_VERSION
    assert out.rmax_gflops is None
    assert out.problems() == [
        "row 1 (N=5000 NB=160 1x2) FAILED the residual check: 17.5",
        "1 test failed",
    ]


def test_banner_version_beats_residual_format() -> None:
    lines = ["HPLinpack 1.0a  --  High-Performance Linpack benchmark  --   January 20, 2004"]
    lines += [ROW_20 % ("R", 1, "3", "R", 2, "C", 4, 4800, 80, 2, 2, 9.33, 7.908)]
    lines += [fmt % (0.03, "PASSED") for fmt in RESID_10]
    assert parse_hpl(printed(lines)).hpl_version == "1.0a"


def test_failed_row_names_threshold() -> None:
    text = printed(
        run23(
            [
                (5000, 128, 2, 1, 1.0, hpl_gflops(5000, 1.0), 0.0012, "PASSED"),
                (5000, 128, 2, 1, 1.1, hpl_gflops(5000, 1.1), 310.0, "FAILED"),
            ]
        )
    )
    out = parse_hpl(text)
    assert [r.status for r in out.rows] == ["PASSED", "FAILED"]
    assert out.counts == HplCounts(passed=1, failed=1, skipped=0)
    assert out.rmax_gflops == hpl_gflops(5000, 1.0)
    assert out.problems() == [
        "row 2 (N=5000 NB=128 2x1) FAILED the residual check: 310 > threshold 16",
        "1 test failed",
    ]


def test_nan_residual_is_kept_as_text_and_is_a_problem() -> None:
    lines = [row23(10000, 1536, 1, 2, 3.2, 208.5), RULE]
    lines += ["||Ax-b||_oo/(eps*(||A||_oo*||x||_oo+||b||_oo)*N)=             -nan ...... FAILED"]
    # HPL prints the norms after a failed check; they are not residual lines.
    lines += ["||Ax-b||_oo  . . . . . . . . . . . . . . . . . =          -nan"]
    lines += ["||A||_oo . . . . . . . . . . . . . . . . . . . =     2560.25"]
    out = parse_hpl(printed(lines + summary(0, 1, 0)))
    (row,) = out.rows
    assert row.residual == "-nan" and row.status == "FAILED"
    json.dumps(out.to_dict(), allow_nan=False)
    assert out.problems() == [
        "residual of row 1 (N=10000 NB=1536 1x2) is not finite (-nan)",
        "1 test failed",
    ]


@pytest.mark.parametrize("token", ["nan", "-nan", "inf", "-inf", "1.#QNAN"])
def test_non_finite_residual_tokens(token: str) -> None:
    text = printed([row23(100, 10, 1, 1, 0.01, 1.0), RESID_23.replace("%16.8e", token) % "PASSED"])
    out = parse_hpl(text)
    assert out.rows[0].residual == token and out.rows[0].status == "FAILED"  # HPL said PASSED
    assert out.problems()[0] == f"row 1 (N=100 NB=10 1x1) FAILED: residual is not finite ({token})"


def test_non_finite_gflops_is_text_and_not_rmax() -> None:
    out = parse_hpl(printed(["WR11C2R4  100  10  1  1  0.00  inf", RESID_23 % (0.01, "PASSED")]))
    assert out.rows[0].gflops == "inf" and out.rows[0].time_s == 0.0
    assert out.rmax_gflops is None
    assert out.problems()[0] == "row 1 (N=100 NB=10 1x1) FAILED: Gflops is not finite (inf)"


def test_vendor_tv_codes_and_trailing_columns_are_ignored() -> None:
    text = printed(
        [
            "T/V                N    NB     P     Q         Time          Gflops (   per GPU)",
            "WC0           299008  1024     2     4        52.88       3.370e+05 ( 4.213e+04)",
            RESID_23 % (5.5e-4, "PASSED"),
            "WC03R2R2      528384  1024     8     4        73.32       1.341e+06 ( 4.192e+04)",
            RESID_23 % (3.4e-4, "PASSED"),
            "WC00C2R2       82000   168     1     1             234.11            1.56976e+03",
            RESID_23 % (4.3e-3, "PASSED"),
        ]
    )
    rows = parse_hpl(text).rows
    assert [(r.tv, r.n, r.nb, r.p, r.q, r.time_s, r.gflops) for r in rows] == [
        ("WC0", 299008, 1024, 2, 4, 52.88, 3.370e5),
        ("WC03R2R2", 528384, 1024, 8, 4, 73.32, 1.341e6),
        ("WC00C2R2", 82000, 168, 1, 1, 234.11, 1569.76),
    ]
    assert parse_hpl(text).rmax_gflops == 1.341e6


def test_indentation_and_crlf() -> None:
    lines = run23([(8000, 96, 1, 1, 10.0, 34.1, 2.0e-3, "PASSED")])
    text = "\r\n".join("   " + line for line in lines) + "\r\n"
    out = parse_hpl(text)
    assert out.rows[0].n == 8000 and out.rows[0].status == "PASSED"
    assert out.end_of_tests and out.counts == HplCounts(1, 0, 0)
    assert out.hpl_version == "2.3" and out.threshold == 16.0


def test_noise_lines_are_ignored_and_never_rows() -> None:
    noise = [
        "gpu01:1234:1234 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.1<0>",
        "[node12:04567] mca_btl_openib: WARNING 1 2 3 4 5.0 6.0",
        "WARNING 1 2 3 4 5.0 6.0",
        "WALL  1280  1280  80  80   1   1     0.02 PASSED    0.786  0.00",
        "WR11C2R4 is the variant we use",
        "WR11C2R4        5000   160     1     2",
        "WR11C2R4        5000   160     1     2   10.43   7.994e+00garbage",
        " Prog= 11.72%       N_left=   506880        Time=   7.51    Time_left=  56.60",
        "Finished    5 tests, with the following results:",
        "    5 tests completed and passed residual checks.",
    ]
    row = row23(5000, 160, 1, 2, 10.43, 7.994)
    text = printed(noise[:4] + [row] + noise[4:] + [RESID_23 % (0.002, "PASSED")])
    out = parse_hpl(text)
    assert len(out.rows) == 1 and out.rows[0].status == "PASSED"
    assert out.counts is None
    with pytest.raises(ParseError):
        parse_hpl(printed(noise))


def test_truncated_last_row_has_no_residual() -> None:
    lines = run23([(20000, 192, 2, 2, 100.0, 53.3, 1.5e-3, "PASSED")])[:-10]
    lines += ["=" * 80, HEADER, RULE, row23(40000, 192, 2, 2, 800.0, 53.4)]
    lines += ["HPL_pdgesv() start time Mon Jun  6 12:08:36 2022", ""]
    lines += ["WR11C2R4       80000   192     2     2"]  # cut before Time and Gflops: not a row
    out = parse_hpl(printed(lines))
    assert [r.n for r in out.rows] == [20000, 40000]
    assert out.rows[1].residual is None and out.rows[1].status is None
    assert out.to_dict()["rows"][1]["status"] is None
    assert out.rmax_gflops == 53.3
    assert out.problems(expected_cases=2) == [
        "residual of row 2 (N=40000 NB=192 2x2) is missing: the output stops before its check",
        "no 'End of Tests.' line: the run stopped early",
        "no 'Finished ... tests' summary",
        "1 test passed but 2 expected",
    ]


def test_appended_runs_keep_all_rows_and_sum_counts() -> None:
    first = run23([(1000, 64, 1, 1, 1.0, hpl_gflops(1000, 1.0), 1e-3, "PASSED"),
                   (2000, 64, 1, 1, 2.0, hpl_gflops(2000, 2.0), 1e-3, "PASSED")])
    second = run23([(3000, 64, 1, 1, 3.0, hpl_gflops(3000, 3.0), 99.0, "FAILED")])
    out = parse_hpl(printed(first + second))
    assert [r.n for r in out.rows] == [1000, 2000, 3000]
    assert out.counts == HplCounts(passed=2, failed=1, skipped=0)
    assert out.end_of_tests is True
    assert out.rmax_gflops == hpl_gflops(2000, 2.0)


def test_appended_run_cut_short_is_not_end_of_tests() -> None:
    first = run23([(1000, 64, 1, 1, 1.0, hpl_gflops(1000, 1.0), 1e-3, "PASSED")])
    second = run23([(3000, 64, 1, 1, 3.0, hpl_gflops(3000, 3.0), 1e-3, "PASSED")])[:-8]
    out = parse_hpl(printed(first + second))
    assert len(out.rows) == 2 and out.end_of_tests is False
    assert out.counts == HplCounts(1, 0, 0)
    assert out.problems() == [
        "no 'End of Tests.' line: the run stopped early",
        "the 'Finished' summary counts 1 test completed but 2 result rows were found",
    ]


def test_skipped_and_expected_counts() -> None:
    lines = run23([(1000, 64, 1, 1, 1.0, hpl_gflops(1000, 1.0), 1e-3, "PASSED")] * 3, skipped=1)
    out = parse_hpl(printed(lines))
    assert out.counts == HplCounts(3, 0, 1)
    assert out.problems(expected_cases=4) == ["1 test skipped", "3 tests passed but 4 expected"]


def test_summary_without_its_count_lines_is_not_counted() -> None:
    lines = [row23(1000, 64, 1, 1, 1.0, 1.0), RESID_23 % (1e-3, "PASSED")]
    lines += summary(1, 0, 0)[:2]  # cut after the 'passed' line
    out = parse_hpl(printed(lines))
    assert out.counts is None and out.end_of_tests is False


def test_exponent_and_fixed_gflops() -> None:
    out = parse_hpl("WR11C2R4  8640  144  1  4  203.33  2.115e+00\nWR11C2R4  8640  144  1  4  203.33  2.115\n")
    assert [r.gflops for r in out.rows] == [2.115, 2.115]


def test_no_row_is_a_parse_error() -> None:
    assert_parse_errors(parse_hpl, ["", "\n\n", "Finished 1 tests\nEnd of Tests.\n", "\x00\xff garbage \ufffd"])


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = [
        "WR11C2R4 " + "1" * n + "x",
        "WR1" + "1" * n,
        "WR11C2R4 1 1 1 1 " + "1" * n + " " + "2" * n + "x",
        "||Ax-b||_oo" + "/" * n,
        "||Ax-b||_oo=" + "a" * n + " " + "." * n + "X",
        "||Ax-b||_oo=" + " ." * n,
        "Finished " + " " * n + "x",
        "- The relative machine precision (eps) is taken to be " + "9" * n + "e",
        "HPLinpack " + "1." * n,
    ]
    assert_linear_time(parse_hpl, hostile, must_fail=True)


def _problems_is_a_list(out: HplOutput) -> None:
    assert isinstance(out.problems(expected_cases=1), list)


def test_mutated_real_outputs_give_a_result_or_parse_error() -> None:
    alphabet = "W RC0123456789.e+-|=\n\r\tnaPASSEDFAILED"
    texts = mutated_texts(sample_texts("hpl"), seed=20240601, rounds=300, max_edits=30, alphabet=alphabet)
    assert_result_or_parse_error(parse_hpl, texts, check=_problems_is_a_list)


# --- registry ---


def test_registry_is_a_plain_dict_with_hpl_and_hpcc() -> None:
    assert type(KINDS) is dict
    assert {"hpl", "hpcc"} <= set(KINDS)
    assert_registered("hpl", parse_hpl, row23(1000, 64, 1, 1, 1.0, 1.0) + "\n" + RESID_23 % (1e-3, "PASSED"))


def test_unknown_kind_names_it_and_lists_known_kinds(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"'linpack'.*hpcc, hpl"):
        parse_text("linpack", "")
    with pytest.raises(InputError, match="linpack"):
        parse_file("linpack", tmp_path / "does-not-matter.txt")


def test_parse_file_decodes_bytes_leniently(tmp_path: Path) -> None:
    body = run23([(1000, 64, 1, 1, 1.0, 1.0, 1e-3, "PASSED")])
    path = tmp_path / "HPL.out"
    path.write_bytes(b"\xef\xbb\xbf\xff\xfe junk\r\n" + "\r\n".join(body).encode())
    out = parse_file("hpl", path)
    assert out["counts"] == {"passed": 1, "failed": 0, "skipped": 0}
    assert out["end_of_tests"] is True


def test_parse_file_errors_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        parse_file("hpl", tmp_path / "missing.out")
    empty = tmp_path / "empty.out"
    empty.write_bytes(b"")
    with pytest.raises(ParseError) as err:
        parse_file("hpl", empty)
    assert "empty.out" in str(err.value) and "\n" not in str(err.value)
