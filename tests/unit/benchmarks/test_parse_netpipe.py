"""NetPIPE 3.7 parser. There is no shared vector: the samples below are written from the
print statements of NetPIPE 3.7's src/netpipe.c (numbers made up, formats exact):

* screen (stderr): ``fprintf(stderr, "%3d: %7d bytes %6d times --> ", n, bufflen, nrepeat)``
  then ``fprintf(stderr, " %8.2lf Mbps in %10.2lf usec\\n", bps, tlast * 1.0e6)``;
* output file np.out: ``fprintf(out, "%8d %lf %12.8lf\\n", bytes, bps, t)`` with t the
  round-trip time / 2 in seconds (dox/README: bytes, throughput in Mbps, RTT / 2).
"""

from __future__ import annotations

import json

from scalebench.benchmarks.netpipe.output import FORM_FILE, FORM_SCREEN, parse_netpipe
from vectors import assert_linear_time, assert_parse_errors, assert_registered, assert_result_or_parse_error
from vectors import mutated_texts

# Screen form: `mpirun -np 2 NPmpich2` over Gigabit Ethernet (MPI ranks print their host first).
SCREEN = """\
0: node01
1: node02
Now starting the main loop
  0:       1 bytes   5024 times -->      0.31 Mbps in      24.88 usec
  1:       2 bytes   5018 times -->      0.61 Mbps in      24.91 usec
  2:       3 bytes   5012 times -->      0.92 Mbps in      24.94 usec
  3:       4 bytes   5019 times -->      1.23 Mbps in      24.90 usec
  4:       6 bytes   5011 times -->      1.84 Mbps in      24.94 usec
  5:       8 bytes   5004 times -->      2.44 Mbps in      24.98 usec
  6:      12 bytes   5005 times -->      3.67 Mbps in      24.97 usec
  7:      13 bytes   4999 times -->      3.97 Mbps in      25.00 usec
  8: 1048573 bytes      3 times -->    895.07 Mbps in    8937.78 usec
  9: 1048576 bytes      4 times -->    895.08 Mbps in    8937.77 usec
 10: 1048579 bytes      3 times -->    895.08 Mbps in    8937.81 usec
"""

# File form: np.out of `mpirun -np 2 NPopenmpi` within one node (shared memory).
NP_OUT = """\
       1 2.237156   0.00000341
       2 4.473905   0.00000341
       3 6.710247   0.00000341
       4 8.946183   0.00000341
       6 13.416836   0.00000341
       8 17.885865   0.00000341
 1048573 24355.450526   0.00032847
 1048576 24355.451249   0.00032847
 1048579 24355.451973   0.00032847
"""


def test_screen_form() -> None:
    d = parse_netpipe(SCREEN).to_dict()
    assert d["form"] == FORM_SCREEN == "stdout"
    assert d["n_rows"] == 11
    assert d["rows"][0] == {"bytes": 1, "mbps": 0.31, "usec": 24.88}
    assert d["rows"][-1] == {"bytes": 1048579, "mbps": 895.08, "usec": 8937.81}
    assert d["peak_mbps"] == 895.08
    assert d["min_latency_usec"] == 24.88
    json.dumps(d, allow_nan=False)


def test_file_form_converts_seconds_to_usec_exactly() -> None:
    d = parse_netpipe(NP_OUT).to_dict()
    assert d["form"] == FORM_FILE == "np.out"
    assert d["n_rows"] == 9
    assert d["rows"][0] == {"bytes": 1, "mbps": 2.237156, "usec": 3.41}
    assert d["rows"][-1] == {"bytes": 1048579, "mbps": 24355.451973, "usec": 328.47}
    assert d["peak_mbps"] == 24355.451973 and d["min_latency_usec"] == 3.41
    assert all(type(row["usec"]) is float for row in d["rows"])


def test_both_forms_in_one_text_use_the_screen_rows() -> None:
    d = parse_netpipe(SCREEN + NP_OUT).to_dict()
    assert d["form"] == "stdout" and d["n_rows"] == 11


def test_tcp_screen_output_with_buffer_notes() -> None:
    # NPtcp -h host: the transmitter prints socket buffer notes before the main loop.
    notes = [
        "Send and receive buffers are 16384 and 87380 bytes",
        "(A bug in Linux doubles the requested buffer sizes)",
    ]
    text = "\n".join(notes) + "\n" + SCREEN.split("\n", 2)[2]
    assert parse_netpipe(text).to_dict()["n_rows"] == 11


def test_run_cut_mid_line_keeps_finished_points() -> None:
    cut = SCREEN + " 11: 1572861 bytes      3 times --> "
    d = parse_netpipe(cut).to_dict()
    assert d["n_rows"] == 11 and d["rows"][-1]["bytes"] == 1048579


def test_values_that_cannot_be_are_null_and_named() -> None:
    d = parse_netpipe("       1 inf   0.00000000\n       2 4.473905   0.00000341\n       4 9.1   -0.00000051\n").to_dict()
    assert d["rows"][0] == {"bytes": 1, "mbps": None, "usec": None} and d["rows"][2]["usec"] is None
    assert d["peak_mbps"] == 9.1 and d["min_latency_usec"] == 3.41
    assert d["warnings"] == ["throughput at 1 bytes is not finite (inf): dropped",
                             "time at 1 bytes 0 us is not positive: dropped",
                             "time at 4 bytes -0.51 us is not positive: dropped"]
    json.dumps(d, allow_nan=False)


def test_integrity_check_runs_and_garbage_are_parse_errors() -> None:
    integrity_screen = "Now starting the main loop\n  0:       5 bytes      3 times --> Integrity check passed\n"
    integrity_file = "       5 3\n       7 3\n"
    assert_parse_errors(
        parse_netpipe, ["", "\n", integrity_screen, integrity_file, "hello 1 2\n", "\x00\xff\ufffd", "1 2\n"]
    )


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = [
        "0: " + "1" * n + " bytes",
        "0: 1 bytes 1 times --> " + "1" * n + " Mbps in " + "1" * n,
        "0: 1 bytes 1 times --> " + " " * n + "x",
        "1 " + "1." * n + " 1",
        "1 1e" + "9" * n + " 1",
        "1 " * n,
        "1" * n + " 1.0 1.0",
        "1 1 1e99999",
        "1 1e999 1e999",
    ]
    assert_linear_time(parse_netpipe, hostile)


def test_mutated_outputs_give_a_result_or_parse_error() -> None:
    alphabet = "0123456789.e+-: bytesMbpsinusec-->\n\r\t"
    texts = mutated_texts([SCREEN, NP_OUT], seed=20240606, rounds=300, max_edits=30, alphabet=alphabet)
    assert_result_or_parse_error(parse_netpipe, texts)


def test_registry_entry() -> None:
    assert_registered("netpipe", parse_netpipe, NP_OUT)
