"""GROMACS md.log parser: real vectors from tests/data/gromacs, then the real 1-rank log cut, garbled and
rewritten in the other forms mdrun prints (gmxlib/nrnb.cpp print_perf, timing/wallcycle.cpp)."""

from __future__ import annotations

import json

import pytest

from scalebench.benchmarks.gromacs.output import fatal_error, parse_gromacs
from vectors import assert_linear_time, assert_parse_errors, assert_registered, assert_result_or_parse_error
from vectors import assert_same, assert_sources_present, load_vector, mutated_texts, read_vector, sample_texts
from vectors import vector_names

VECTORS = vector_names("gromacs")
ONE_RANK = read_vector("gromacs", "gromacs2022_water_1rank")
TWO_RANKS = read_vector("gromacs", "gromacs2022_water_2ranks")


@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name: str) -> None:
    actual, expected = load_vector("gromacs", name)
    assert_same(actual, expected)


def test_all_gromacs_vectors_present() -> None:
    assert VECTORS == ["gromacs2021_fep_8ranks_crashed", "gromacs2022_water_1rank", "gromacs2022_water_2ranks"]
    assert_sources_present("gromacs", VECTORS)


def test_registered_as_the_gromacs_kind() -> None:
    assert_registered("gromacs", parse_gromacs, ONE_RANK)


def test_figures_of_a_finished_run_agree_with_each_other() -> None:
    for text in (ONE_RANK, TWO_RANKS):
        log = parse_gromacs(text)
        assert log.complete and log.problems == ()
        assert log.ns_per_day * log.hours_per_ns == pytest.approx(24, rel=1e-3)
        assert log.ns_per_day == pytest.approx(log.timed_steps * log.dt_ps * 86.4 / log.wall_time_s, rel=1e-3)
    assert parse_gromacs(TWO_RANKS).comm_pct == 40.2 and parse_gromacs(ONE_RANK).comm_pct == 0.0


# --- the real log, cut and garbled ------------------------------------------------------------------

def _cut_before(text: str, marker: str) -> str:
    return text[:text.index(marker)]


@pytest.mark.parametrize("marker, finished", [
    ("Started mdrun", False),  # died in its set-up
    ("step 500: resetting", False),  # died mid-run
    ("     R E A L   C Y C L E", False),  # killed before its accounting
    ("Performance:", False),  # cut between Time: and Performance:
    ("Finished mdrun", False),  # every figure printed, but not its end
])
def test_a_truncated_log_is_not_complete(marker: str, finished: bool) -> None:
    log = parse_gromacs(_cut_before(ONE_RANK, marker))
    assert log.complete is False and log.finished is finished
    assert log.gromacs_version == "2022.5-Debian_2022.5_2" and log.atoms in (5088, None)
    json.dumps(log.to_dict(), allow_nan=False)


def test_a_log_cut_mid_line_drops_that_line_and_says_so() -> None:
    text = ONE_RANK[:ONE_RANK.index("Performance:") + len("Performance:       20.0")]
    log = parse_gromacs(text)
    assert log.ns_per_day is None and not log.complete
    assert "no line end" in log.to_dict()["warnings"][0]


def test_a_performance_line_without_its_units_header_is_not_read_and_named() -> None:
    text = ONE_RANK.replace("                 (ns/day)    (hour/ns)\n", "")
    log = parse_gromacs(text)
    assert log.ns_per_day is None and log.complete is False
    assert any("without its units header" in p for p in log.problems)


@pytest.mark.parametrize("old, new, named", [
    ("Performance:       20.017        1.199", "Performance:         -nan        1.199", "not finite"),
    ("Performance:       20.017        1.199", "Performance:       -20.017        1.199", "not positive"),
    ("Performance:       20.017        1.199", "Performance:      1e+300        1.199", "more than any machine"),
    ("Performance:       20.017        1.199", "Performance:       40.000        1.199", "their product is 24"),
    ("Performance:       20.017        1.199", "Performance:       30.000        0.800", "steps of 0.002 ps"),
    ("Time:        4.325        4.325      100.0", "Time:        4.325        0.000      100.0", "Wall t 0 s"),
    ("Time:        4.325        4.325      100.0", "Time:        9.000        4.325      100.0", "is not 100 %"),
    ("Using 1 MPI process", "Using 0 MPI process", "MPI processes 0"),
    ("There are: 5088 Atoms", "There are: 0 Atoms", "Atoms 0"),
    ("On 1 MPI rank", "On 2 MPI ranks", "cycle accounting counts 2"),
])
def test_values_that_cannot_be_or_disagree_are_named(old: str, new: str, named: str) -> None:
    assert old in ONE_RANK
    log = parse_gromacs(ONE_RANK.replace(old, new))
    assert any(named in p for p in log.problems), log.problems
    json.dumps(log.to_dict(), allow_nan=False)


def test_a_share_beyond_100_percent_is_dropped_and_named() -> None:
    line = next(line for line in ONE_RANK.splitlines() if line.startswith(" Force "))
    log = parse_gromacs(ONE_RANK.replace(line, line[:-5] + "182.7"))
    assert "Force" not in log.cycle_shares and any("Force share 182.7" in p for p in log.problems)


@pytest.mark.parametrize("token", ["nan", "-nan", "inf", "-inf"])
def test_nonfinite_energies_are_flagged(token: str) -> None:
    values = "    1.56803e+04   -9.41050e+04    4.05754e+02   -7.80190e+04    1.26604e+04"
    assert values in ONE_RANK
    log = parse_gromacs(ONE_RANK.replace(values, values.replace("4.05754e+02", token), 1))
    assert log.nonfinite_energies is True and log.complete is True  # the run ended; the flag is separate


def test_a_fatal_error_is_the_run_s_error() -> None:
    error = ("\n-------------------------------------------------------\nProgram:     gmx mdrun, version 2022.5\n"
             "Source file: src/gromacs/domdec/domdec.cpp (line 2277)\nMPI rank:    0 (out of 64)\n\nFatal error:\n"
             "There is no domain decomposition for 64 ranks that is compatible with the given box and a minimum "
             "cell size of 1.2375 nm\n\nFor more information and tips for troubleshooting, please check the "
             "GROMACS\nwebsite at https://manual.gromacs.org/current/user-guide/run-time-errors.html\n"
             "-------------------------------------------------------\n")
    log = parse_gromacs(_cut_before(ONE_RANK, "Started mdrun") + error)
    assert log.error.startswith("There is no domain decomposition for 64 ranks") and not log.complete
    assert fatal_error(error) == log.error and fatal_error(ONE_RANK) is None
    assert fatal_error("Fatal error: Too many LINCS warnings (1000)\n") == "Too many LINCS warnings (1000)"
    other = error.replace("Fatal error:\n", "Inconsistency in user input:\n")
    assert parse_gromacs(_cut_before(ONE_RANK, "Started mdrun") + other).error == log.error


def test_grompp_s_first_error_is_the_error_not_its_count() -> None:
    text = ("ERROR 1 [file topol.top, line 10]:\n  ERROR: The cut-off length is longer than half the shortest box\n"
            "  vector or longer than the smallest box diagonal element.\n\nERROR 2 [file md.mdp]:\n  another\n\n"
            "-------------------------------------------------------\nProgram:     gmx grompp, version 2022.5\n\n"
            "Fatal error:\nThere were 2 errors in input file(s)\n\n")
    assert fatal_error(text) == ("The cut-off length is longer than half the shortest box vector or longer than the "
                                 "smallest box diagonal element.")


# --- the other forms mdrun prints -------------------------------------------------------------------

END = """
     R E A L   C Y C L E   A N D   T I M E   A C C O U N T I N G

On 20 MPI ranks doing PP, each using 2 OpenMP threads, and
on 4 MPI ranks doing PME, each using 2 OpenMP threads

 Computing:          Num   Num      Call    Wall time         Giga-Cycles
                     Ranks Threads  Count      (s)         total sum    %
-----------------------------------------------------------------------------
 Domain decomp.        20    2       2501     139.058       7214.235   1.8
 Comm. coord.          20    2      47500     120.000       6225.000   1.5
 Force                 20    2      50001    4000.000     207500.000  50.7
 Wait + Comm. F        20    2      50001     200.000      10375.000   2.5
 PME mesh               4    2      50001    3400.000     176375.000  43.0
 Rest                                          38.942       2020.165   0.5
-----------------------------------------------------------------------------
 Total                                       7898.000     409709.400 100.0
-----------------------------------------------------------------------------

               Core t (s)   Wall t (s)        (%)
       Time:   379104.000     7898.000     4800.0
                         2h11:38
                 (ns/day)    (hour/ns)
Performance:        1.094       21.937
Finished mdrun on node 0 Tue Oct 19 00:37:41 2021
"""
START = """                :-) GROMACS - gmx mdrun, 2018.8 (-:

GROMACS version:    2018.8
MPI library:        MPI
Input Parameters:
   dt                             = 0.002
   nsteps                         = 50000
   init-step                      = 0
Using 24 MPI processes
Using 2 OpenMP threads per MPI process
Using 2 OpenMP threads per MPI process for PME
There are: 1066628 Atoms
Started mdrun on node 0 Mon Oct 18 22:26:03 2021
           Step           Time
          50000      100.00000
"""


def test_separate_pme_ranks_a_long_run_and_the_node_wording() -> None:
    log = parse_gromacs(START + END)
    assert (log.cycle_ranks, log.pme_ranks, log.mpi_ranks, log.omp_threads) == (24, 4, 24, 2)
    assert (log.wall_time_s, log.ns_per_day, log.hours_per_ns) == (7898.0, 1.094, 21.937)
    assert log.comm_pct == 4.0 and log.finished and log.complete and log.problems == ()


def test_detailed_perf_stats_and_runs_without_time_steps() -> None:
    detailed = END.replace("                 (ns/day)    (hour/ns)\nPerformance:        1.094       21.937",
                           "                (Mnbf/s)   (GFlops)   (ns/day)  (hour/ns)\n"
                           "Performance:    137.513      8.306      1.094     21.937")
    assert parse_gromacs(START + detailed).ns_per_day == 1.094
    minimised = END.replace("                 (ns/day)    (hour/ns)\nPerformance:        1.094       21.937",
                            "                 (steps/hour)\nPerformance:      22790.3")
    log = parse_gromacs(START + minimised)
    assert log.ns_per_day is None and log.steps_per_hour == 22790.3 and log.complete


def test_an_appended_log_reports_its_last_run() -> None:
    second = START.replace("50000      100.00000", "20000       40.00000") + "Received the TERM signal\n"
    log = parse_gromacs(START + END + second)
    assert log.last_step == 20000 and log.ns_per_day is None and not log.complete
    restarted = parse_gromacs(START + END + "Started mdrun on rank 0 Mon Oct 18 22:26:03 2021\n")
    assert restarted.ns_per_day is None and not restarted.finished  # what the first start measured is gone


def test_old_version_line_and_thread_mpi() -> None:
    text = START.replace("GROMACS version:    2018.8", "Gromacs version:    VERSION 4.6.7").replace(
        "MPI library:        MPI", "MPI library:        thread_mpi").replace("24 MPI processes", "4 MPI threads")
    log = parse_gromacs(text)
    assert (log.gromacs_version, log.mpi_library, log.mpi_ranks) == ("4.6.7", "thread_mpi", 4)


def test_indentation_crlf_and_noise() -> None:
    noise = "[node01:12345] 3 more processes have sent help message help-mpi-btl-openib.txt\n"
    text = noise + ONE_RANK.replace("\n", "\r\n").replace("Performance:", "  Performance:")
    assert parse_gromacs(text).to_dict() == parse_gromacs(ONE_RANK).to_dict()


def test_nothing_recognisable_is_a_parse_error() -> None:
    assert_parse_errors(parse_gromacs, ["", "\n\n", "hello world\n", "\x00\xff garbage \ufffd\n",
                                        "Performance: 1 2\n"[:-1], "LAMMPS (2 Aug 2023)\nLoop time of 1\n"])


def test_mutated_logs_parse_or_fail_with_a_named_error() -> None:
    def sound(log) -> None:
        for value in (log.ns_per_day, log.hours_per_ns, log.wall_time_s):
            assert value is None or value > 0
        assert all(n >= 1 for n in log.particles.values())

    assert_result_or_parse_error(parse_gromacs, mutated_texts(sample_texts("gromacs"), 43, 300, 12,
                                                              "0123456789.-e nan()\n:"), sound)


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = ["Performance: " + "1 " * n, "(ns/day) " * (n // 10), "Time: " + "9" * n, "There are: " + "9" * n,
               "Computing: Cycles\n" + " Force 1 1 1 " * (n // 10), "Step Time\n" + "1 " * n,
               "Fatal error:" + "x" * n, ":-) " + "(" * n, "Using " + "1" * n + " MPI processes"]
    assert_linear_time(parse_gromacs, [f"GROMACS version: 2022\n{line}\n" for line in hostile])
