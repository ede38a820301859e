"""OSU Micro-Benchmarks parser: real vectors from tests/data/osu, then tables built from the OMB print formats."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest

from scalebench.benchmarks.osu.output import PEAK_NOTE, parse_osu, unit_of
from vectors import printed
from vectors import assert_linear_time, assert_parse_errors, assert_registered, assert_result_or_parse_error
from vectors import assert_same, assert_sources_present, check_extras, load_vector, mutated_texts, read_vector
from vectors import sample_texts, vector_names

VECTORS = vector_names("osu")

# Keys the parser adds beyond the expected files; every vector is one two-column table.
EXTRA_VALUES = {"other_columns": {}, "n_tables": 1}


def osu_dict(*lines: str) -> Dict[str, Any]:
    """The output dict for the lines of one OMB text."""
    return parse_osu(printed(lines)).to_dict()


@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name: str) -> None:
    actual, expected = load_vector("osu", name)
    check_extras(actual, expected, EXTRA_VALUES)
    # `peak_note` is not named notes/derived_*, so by the vectors' README it is parser
    # output: the parser emits this fixed sentence for every latency (unit us) table.
    if "peak_note" in expected:
        assert expected["peak_note"] == PEAK_NOTE
    assert_same(actual, expected)


def test_all_osu_vectors_present() -> None:
    assert len(VECTORS) == 4
    assert_sources_present("osu", VECTORS)


# --- synthetic tables, written from the OMB print formats (util/osu_util.h, osu_util_mpi.c) ---


def test_omb7_full_latency_columns_keep_min_max_and_iterations() -> None:
    d = osu_dict(
        "# OSU MPI Latency Test v7.3",
        "# Datatype: MPI_CHAR.",
        "# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations",
        "1                       1.72              1.66              1.94       10000",
        "2                       1.71              1.65              1.89       10000",
        "4                       1.73              1.66              1.90       10000",
        "8192                    4.95              4.80              5.31        1000",
    )
    assert d["benchmark"] == "osu_latency" and d["version"] == "7.3" and d["datatype"] == "MPI_CHAR"
    assert d["columns"] == ["Size", "Avg Latency(us)", "Min Latency(us)", "Max Latency(us)", "Iterations"]
    assert d["metric"] == "Avg Latency(us)" and d["unit"] == "us"
    assert d["rows"] == [[1, 1.72], [2, 1.71], [4, 1.73], [8192, 4.95]]
    assert d["other_columns"] == {
        "Min Latency(us)": [1.66, 1.65, 1.66, 4.8],
        "Max Latency(us)": [1.94, 1.89, 1.9, 5.31],
        "Iterations": [10000, 10000, 10000, 1000],
    }
    assert (d["min_latency_us"], d["min_latency_at_size"]) == (1.71, 2)
    assert (d["peak_value"], d["peak_at_size"]) == (4.95, 8192)
    assert d["peak_note"] == PEAK_NOTE


def test_mbw_mr_bandwidth_and_message_rate() -> None:
    d = osu_dict(
        "# OSU MPI Multiple Bandwidth / Message Rate Test v5.6.2",
        "# [ pairs: 2 ] [ window size: 64 ]",
        "# Size                  MB/s        Messages/s",
        "1                       7.22        7222371.58",
        "2                      14.54        7270098.36",
        "4194304             24378.50              5.81",
    )
    assert d["benchmark"] == "osu_mbw_mr"
    assert d["metric"] == "MB/s" and d["unit"] == "MB/s"
    assert d["rows"][-1] == [4194304, 24378.5]
    assert d["other_columns"] == {"Messages/s": [7222371.58, 7270098.36, 5.81]}
    assert (d["peak_value"], d["peak_at_size"]) == (24378.5, 4194304)
    assert "min_latency_us" not in d and "peak_note" not in d


def test_omb7_mbw_mr_header_with_bandwidth_label() -> None:
    d = osu_dict(
        "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4",
        "# Size      Bandwidth (MB/s)     Messages/s",
        "64                   3561.11     55642367.34",
    )
    assert d["metric"] == "Bandwidth (MB/s)" and d["unit"] == "MB/s"
    assert d["other_columns"] == {"Messages/s": [55642367.34]}


def test_allreduce_collective() -> None:
    d = osu_dict(
        "",
        "# OSU MPI Allreduce Latency Test v5.9",
        "# Size       Avg Latency(us)",
        "4                       3.51",
        "8                       3.49",
        "1048576               412.33",
    )
    assert d["benchmark"] == "osu_allreduce" and d["metric"] == "Avg Latency(us)"
    assert (d["min_latency_us"], d["min_latency_at_size"]) == (3.49, 8)
    assert d["peak_value"] == 412.33


def test_nonblocking_collective_overall_time_is_primary() -> None:
    d = osu_dict(
        "# OSU MPI Non-blocking Allreduce Latency Test v5.9",
        "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait",
        "",
        "# Size           Overall(us)       Compute(us)    Pure Comm.(us)        Overlap(%)",
        "4                      12.53              6.41              5.98              0.00",
        "8                      12.61              6.43              6.01              0.00",
    )
    assert d["benchmark"] == "osu_iallreduce"
    assert d["metric"] == "Overall(us)" and d["unit"] == "us"
    assert d["other_columns"]["Overlap(%)"] == [0.0, 0.0]
    assert d["min_latency_us"] == 12.53


def test_barrier_has_no_size_column() -> None:
    text = "# OSU MPI Barrier Latency Test v5.9\n# Avg Latency(us)\n             3.51\n"
    d = parse_osu(text).to_dict()
    assert d["benchmark"] == "osu_barrier" and d["columns"] == ["Avg Latency(us)"]
    assert d["rows"] == [[None, 3.51]]
    assert d["min_latency_us"] == 3.51 and d["min_latency_at_size"] is None


def test_cuda_device_buffers_line_is_not_a_header() -> None:
    d = osu_dict(
        "# OSU MPI-CUDA Bandwidth Test v5.6.2",
        "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)",
        "# Size      Bandwidth (MB/s)",
        "1                       0.27",
        "4194304             11843.92",
    )
    assert d["benchmark"] == "osu_bw" and d["title"] == "# OSU MPI-CUDA Bandwidth Test v5.6.2"
    assert d["columns"] == ["Size", "Bandwidth (MB/s)"] and d["peak_value"] == 11843.92


def test_validation_column_keeps_text() -> None:
    d = osu_dict(
        "# OSU MPI Latency Test v7.2",
        "# Size          Avg Latency(us)        Validation",
        "1                          1.83              Pass",
        "2                          1.80              Fail",
    )
    assert d["rows"] == [[1, 1.83], [2, 1.8]]
    assert d["other_columns"] == {"Validation": ["Pass", "Fail"]}


def test_missing_header_takes_the_unit_from_the_title() -> None:
    d = parse_osu("# OSU MPI Bi-Directional Bandwidth Test v4.4.1\n1   3.10\n2   6.25\n").to_dict()
    assert d["benchmark"] == "osu_bibw" and d["columns"] is None
    assert d["metric"] is None and d["unit"] == "MB/s" and d["peak_value"] == 6.25
    bare = parse_osu("0  1.52\n1  1.55\n").to_dict()
    assert bare["title"] is None and bare["benchmark"] is None and bare["unit"] is None


def test_several_tables_report_the_last() -> None:
    d = osu_dict(
        "# OSU MPI Latency Test v5.9",
        "# Size          Latency (us)",
        "0                       1.52",
        "[node02:1234] noise from the launcher",
        "# OSU MPI Bandwidth Test v5.9",
        "# Size      Bandwidth (MB/s)",
        "1                       2.05",
        "2                       4.07",
    )
    assert d["benchmark"] == "osu_bw" and d["n_tables"] == 2 and d["n_rows"] == 2


def test_nonfinite_value_is_dropped_named_and_not_peak() -> None:
    d = parse_osu("# OSU MPI Bandwidth Test v5.9\n# Size  Bandwidth (MB/s)\n1  inf\n2  4.07\n").to_dict()
    assert d["rows"] == [[1, None], [2, 4.07]] and d["peak_value"] == 4.07
    assert d["warnings"] == ["Bandwidth (MB/s) at size 1 is not finite (inf): dropped"]
    json.dumps(d, allow_nan=False)


@pytest.mark.parametrize(
    "title, program, version",
    [
        ("# OSU MPI Latency Test v5.9", "osu_latency", "5.9"),
        ("# OSU MPI-CUDA Latency Test v7.5", "osu_latency", "7.5"),
        ("# OSU MPI-ROCM Bandwidth Test v7.1", "osu_bw", "7.1"),
        ("# OSU MPI-OpenACC Bi-Directional Bandwidth Test v5.4.0", "osu_bibw", "5.4.0"),
        ("# OSU MPI Multi Latency Test v5.9", "osu_multi_lat", "5.9"),
        ("# OSU MPI Multi-threaded Latency Test v5.9", "osu_latency_mt", "5.9"),
        ("# OSU MPI Alltoall Latency Test v6.1", "osu_alltoall", "6.1"),
        ("# OSU MPI Reduce_scatter Latency Test v5.9", "osu_reduce_scatter", "5.9"),
        ("# OSU MPI Non-blocking Alltoall Latency Test v5.9", "osu_ialltoall", "5.9"),
        ("# OSU MPI_Put Latency Test v5.9", "osu_put_latency", "5.9"),
        ("# OSU MPI_Get Bandwidth Test v5.9", "osu_get_bw", "5.9"),
        ("# OSU MPI_Accumulate latency Test v5.9", "osu_acc_latency", "5.9"),
        ("# OSU MPI Latency Test v3.1.1", "osu_latency", "3.1.1"),
        ("# OSU OpenSHMEM Put Test v5.9", None, "5.9"),
        ("#OSU MPI Bandwidth Test", "osu_bw", None),
    ],
)
def test_program_name_and_version_from_title(title: str, program: str, version: str) -> None:
    d = parse_osu(f"{title}\n1  1.00\n").to_dict()
    assert (d["benchmark"], d["version"], d["title"]) == (program, version, title)


def test_unit_of_column_names() -> None:
    assert unit_of("Bandwidth (MB/s)") == "MB/s"
    assert unit_of("Avg Latency(us)") == "us"
    assert unit_of("MB/s") == "MB/s"
    assert unit_of("Latency") is None and unit_of(None) is None


def test_no_row_is_a_parse_error() -> None:
    texts = ["", "\n", "# OSU MPI Latency Test v5.9\n# Size  Latency (us)\n", "x 1.0\n", "\x00\xff\ufffd"]
    assert_parse_errors(parse_osu, texts)


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = [
        "1 " * n,
        "1 " * n + "x",
        "# OSU " + " v1" * n,
        "# OSU MPI " + "Latency " * (n // 8) + "Test v5.9\n1 2",
        "# Size" + "  x" * n + "\n1 2",
        "# Datatype: " + "A" * n,
        "1 " + "1" * n + " " + "x" * n,
        "9" * n + " 1.0",
        "1 1e" + "9" * n,
        "# Avg Latency(us)" + "  x" * n + "\n" + "1 " * n,
    ]
    assert_linear_time(parse_osu, hostile)


def test_mutated_real_outputs_give_a_result_or_parse_error() -> None:
    alphabet = "# OSUSize()MB/s0123456789.e+-nan\n\r\t "
    texts = mutated_texts(sample_texts("osu"), seed=20240604, rounds=300, max_edits=30, alphabet=alphabet)
    assert_result_or_parse_error(parse_osu, texts)


def test_registry_entry() -> None:
    assert_registered("osu", parse_osu, read_vector("osu", "osu59_bw_craympich"))
