"""IMB parser: real vectors from tests/data/imb, then outputs built from the IMB print layout."""

from __future__ import annotations

import json
from typing import List

import pytest

from scalebench.parse.imb import latency_column, parse_imb
from vectors import printed
from vectors import assert_linear_time, assert_parse_errors, assert_registered, assert_result_or_parse_error
from vectors import assert_same, assert_sources_present, load_vector, mutated_texts, read_vector, sample_texts
from vectors import vector_names

VECTORS = vector_names("imb")


@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name: str) -> None:
    actual, expected = load_vector("imb", name)
    assert_same(actual, expected)


def test_all_imb_vectors_present() -> None:
    assert len(VECTORS) == 3
    assert_sources_present("imb", VECTORS)


def test_min_latency_leaves_out_the_zero_byte_row() -> None:
    # The expected files define min_latency_usec over #bytes > 0: the PingPong vector's
    # 0-byte row (1.68 usec) is not its minimum; 10971.08 usec at 128 MiB is.
    out = parse_imb(read_vector("imb", "imb2018_pingpong_msglog_ompi"))
    (block,) = out.blocks
    assert block.rows[0]["t[usec]"] == 1.68
    assert block.min_latency_usec == 10971.08


# --- synthetic outputs, written from the IMB print layout (IMB_output.c) ---

RULE = "#" + "-" * 77


def banner(version_line: str = "#    Intel(R) MPI Benchmarks 2019 Update 6, MPI-1 part    ") -> List[str]:
    return [
        "#" + "-" * 60,
        version_line,
        "#" + "-" * 60,
        "# Date                  : Tue Mar  3 10:00:00 2020",
        "# Machine               : x86_64",
        "",
        "# Calling sequence was: ",
        "",
        "# ./IMB-MPI1 -npmin 2 PingPong Sendrecv Barrier ",
        "",
        "# Minimum message length in bytes:   0",
        "# Maximum message length in bytes:   4194304",
        "#",
        "# MPI_Datatype                   :   MPI_BYTE ",
        "#",
        "",
        "# List of Benchmarks to run:",
        "",
        "# PingPong",
        "# Sendrecv",
        "# Barrier",
        "",
    ]


def block(name: str, procs: int, header: str, rows: List[str], waiting: int = 0) -> List[str]:
    lines = [RULE, f"# Benchmarking {name} ", f"# #processes = {procs} "]
    if waiting:
        lines.append(f"# ( {waiting} additional processes waiting in MPI_Barrier)")
    return lines + [RULE, header] + rows + ["", ""]


PINGPONG = "       #bytes #repetitions      t[usec]   Mbytes/sec"
COLL_BW = "       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec"
BARRIER = " #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]"


def full_output() -> List[str]:
    lines = banner()
    lines += block(
        "PingPong",
        2,
        PINGPONG,
        [
            "            0         1000         0.21         0.00",
            "            1         1000         0.21         4.55",
            "[1583229600.123456] [node01:1234:0]    ucp_worker.c:1543 UCX  WARNING  1 2 3",
            "            2         1000         0.22         9.09",
            "      4194304           10       372.10     11272.04   ",
        ],
        waiting=2,
    )
    lines += block(
        "Sendrecv",
        2,
        COLL_BW,
        [
            "            0         1000         0.45         0.45         0.45         0.00",
            "            1         1000         0.46         0.47         0.46         4.26",
        ],
        waiting=2,
    )
    lines += block(
        "Sendrecv",
        4,
        COLL_BW,
        [
            "            0         1000         0.61         0.63         0.62         0.00",
            "            1         1000         0.64         0.66         0.65         3.03",
        ],
    )
    lines += block("Barrier", 4, BARRIER, ["         1000         1.05         1.06         1.05"])
    return lines + ["# All processes entering MPI_Finalize", ""]


def test_several_benchmarks_and_process_counts() -> None:
    out = parse_imb(printed(full_output()))
    d = out.to_dict()
    assert d["imb_version"] == "2019 Update 6"
    assert d["benchmarks_listed"] == ["PingPong", "Sendrecv", "Barrier"]
    assert [(b["benchmark"], b["processes"], b["n_rows"]) for b in d["blocks"]] == [
        ("PingPong", 2, 4),
        ("Sendrecv", 2, 2),
        ("Sendrecv", 4, 2),
        ("Barrier", 4, 1),
    ]
    ping, send2, send4, barrier = d["blocks"]
    assert ping["rows"][-1] == {"#bytes": 4194304, "#repetitions": 10, "t[usec]": 372.1, "Mbytes/sec": 11272.04}
    assert ping["peak_mbytes_per_sec"] == 11272.04 and ping["min_latency_usec"] == 0.21
    assert send2["latency_column_used"] == "t_avg[usec]" and send2["min_latency_usec"] == 0.46
    assert send4["peak_mbytes_per_sec"] == 3.03
    assert barrier["columns"] == ["#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]"]
    assert barrier["min_latency_usec"] == 1.05 and "peak_mbytes_per_sec" not in barrier
    assert d["finalize_line"] is True
    json.dumps(d, allow_nan=False)


def test_ext_modes_become_separate_blocks() -> None:
    lines = [RULE, "# Benchmarking Unidir_Put ", "# #processes = 2 ", RULE]
    lines += ["#", "#    MODE: NON-AGGREGATE ", "#", PINGPONG]
    lines += ["            0          100         0.06         0.00"]
    lines += ["            4          100         1.42         2.69", ""]
    lines += ["#", "#    MODE: AGGREGATE ", "#", PINGPONG]
    lines += ["            0         1000         0.05         0.00"]
    lines += ["            4         1000         0.33        11.56"]
    d = parse_imb(printed(lines)).to_dict()
    assert [(b["benchmark"], b["processes"], b["mode"], b["n_rows"]) for b in d["blocks"]] == [
        ("Unidir_Put", 2, "NON-AGGREGATE", 2),
        ("Unidir_Put", 2, "AGGREGATE", 2),
    ]
    assert d["imb_version"] is None and d["benchmarks_listed"] is None and d["finalize_line"] is False


def test_nbc_columns_use_the_first_usec_column() -> None:
    header = "       #bytes #repetitions  t_ovrl[usec]  t_pure[usec]   t_CPU[usec]    overlap[%]"
    row = "            4         1000          3.21          1.70          1.68         11.10"
    lines = block("Iallreduce", 2, header, [row])
    (b,) = parse_imb(printed(lines)).to_dict()["blocks"]
    assert b["latency_column_used"] == "t_ovrl[usec]" and b["min_latency_usec"] == 3.21
    assert latency_column(("#bytes", "#repetitions", "Mbytes/sec", "Msg/sec")) is None


def test_uniband_has_no_latency_column() -> None:
    header = "       #bytes #repetitions   Mbytes/sec      Msg/sec"
    lines = block("Uniband", 2, header, ["            1         1000         4.05      4047511"])
    (b,) = parse_imb(printed(lines)).to_dict()["blocks"]
    assert b["latency_column_used"] is None and b["min_latency_usec"] is None
    assert b["peak_mbytes_per_sec"] == 4.05
    assert b["rows"] == [{"#bytes": 1, "#repetitions": 1000, "Mbytes/sec": 4.05, "Msg/sec": 4047511.0}]


def test_truncated_output_keeps_what_was_printed() -> None:
    lines = full_output()
    cut = lines[: lines.index("# Benchmarking Barrier ") + 3] + [BARRIER, "         1000         1.0"]
    d = parse_imb(printed(cut)).to_dict()
    assert d["blocks"][-1]["benchmark"] == "Barrier" and d["blocks"][-1]["n_rows"] == 0
    assert d["blocks"][-1]["min_latency_usec"] is None
    assert d["finalize_line"] is False and len(d["blocks"]) == 4


def test_rows_without_a_benchmark_header() -> None:
    d = parse_imb(PINGPONG + "\n    0  1000  1.68  0.00\n    8  1000  1.70  4.49\n").to_dict()
    (b,) = d["blocks"]
    assert b["benchmark"] is None and b["processes"] is None and b["n_rows"] == 2


@pytest.mark.parametrize(
    "line, version",
    [
        ("#    Intel (R) MPI Benchmarks 2018, MPI-1 part    ", "2018"),
        ("#    Intel(R) MPI Benchmarks 2021.3, MPI-1 part", "2021.3"),
        ("#    Intel(R) MPI Benchmarks 2019 Update 6, MPI-1 part    ", "2019 Update 6"),
        ("#    Intel (R) MPI Benchmark Suite V3.2.4, MPI-1 part    ", "3.2.4"),
        ("#    Intel(R) MPI Benchmarks 2021.7, MPI-RMA part", "2021.7"),
    ],
)
def test_version_line_forms(line: str, version: str) -> None:
    lines = banner(line) + block("PingPong", 2, PINGPONG, ["            0         1000         0.21         0.00"])
    assert parse_imb(printed(lines)).imb_version == version


def test_a_cell_that_cannot_be_is_null_and_named() -> None:
    d = parse_imb(PINGPONG + "\n    0  1000  0.00  inf\n    8  1000  1.70  4.49\n   16  1000  -2.10  nan\n").to_dict()
    (b,) = d["blocks"]
    assert b["rows"][0]["Mbytes/sec"] is None and b["peak_mbytes_per_sec"] == 4.49
    assert b["rows"][2]["t[usec]"] is None and b["min_latency_usec"] == 1.7
    assert d["warnings"] == ["table, 0 bytes: Mbytes/sec is not finite (inf): dropped",
                             "table, 16 bytes: t[usec] -2.1 us is negative: dropped",
                             "table, 16 bytes: Mbytes/sec is not finite (nan): dropped"]
    json.dumps(d, allow_nan=False)


def test_no_row_is_a_parse_error() -> None:
    assert_parse_errors(parse_imb, ["", "\n", printed(banner()), PINGPONG, "\x00\xff garbage \ufffd", "1 2 3 4\n"])


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = [
        "#bytes " + "x " * n + "\n" + "1 " * n,
        PINGPONG + "\n" + "1 " * n,
        PINGPONG + "\n" + "1" * n + " 1 1 1",
        "# Benchmarking " + "x" * n,
        "# #processes = " + "1" * n,
        "#    Intel(R) MPI Benchmarks " + "1" * n,
        "# List of Benchmarks to run:\n# " + "a" * n,
        "#" * n,
        PINGPONG + "\n0 1000 1e" + "9" * n + " 1",
    ]
    assert_linear_time(parse_imb, hostile)


def test_mutated_real_outputs_give_a_result_or_parse_error() -> None:
    samples = sample_texts("imb") + [printed(full_output())]
    alphabet = "#bytes[usec]/0123456789.e+-nan \n\r\t"
    texts = mutated_texts(samples, seed=20240605, rounds=300, max_edits=30, alphabet=alphabet)
    assert_result_or_parse_error(parse_imb, texts)


def test_registry_entry() -> None:
    assert_registered("imb", parse_imb, printed(full_output()))
