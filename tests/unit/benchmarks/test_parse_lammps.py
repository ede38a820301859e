"""LAMMPS log parser: real vectors from tests/data/lammps, then logs built from LAMMPS' print formats."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import pytest

from scalebench.benchmarks.lammps.output import parse_lammps, shift_decimal
from vectors import printed
from vectors import assert_extra_keys, assert_linear_time, assert_parse_errors, assert_registered
from vectors import assert_result_or_parse_error, assert_same, assert_sources_present, check_extras
from vectors import load_vector, mutated_texts, read_vector, sample_texts, vector_names

VECTORS = vector_names("lammps")

# Keys the parser always adds beyond the expected files (the lammps2007 vector also lists
# comm_time_s and pair_pct_total, so for it those two are compared, not extra).
EXTRA_KEYS = {
    "comm_time_s",
    "pair_pct_total",
    "timing_breakdown",
    "fs_per_day",
    "hours_per_fs",
    "n_runs",
    "complete",
    "nan_in_thermo",
    "error",
}
# The values of those extra keys for each vector (timing_breakdown is checked separately).
EXTRA_VALUES: Dict[str, Dict[str, Any]] = {
    "lammps2007_old_timing_format_1proc": {},
    "lammps2018_protein_nsday_no_katom_4procs": {"comm_time_s": 0.069183, "pair_pct_total": 70.82},
    "lammps2024_kokkos_gpu_lj_tauday_katom": {"comm_time_s": 0.16071, "pair_pct_total": 12.49},
    "lammps2024_reaxff_2procs_katom": {"comm_time_s": 0.16934, "pair_pct_total": 74.88},
}
CLEAN_LOG = {
    "fs_per_day": None,
    "hours_per_fs": None,
    "n_runs": 1,
    "complete": True,
    "nan_in_thermo": False,
    "error": None,
}
SECTIONS = {
    "lammps2007_old_timing_format_1proc": ["Pair", "Neigh", "Comm", "Output", "Other"],
    "lammps2018_protein_nsday_no_katom_4procs": [
        "Pair", "Bond", "Kspace", "Neigh", "Comm", "Output", "Modify", "Other",
    ],
    "lammps2024_kokkos_gpu_lj_tauday_katom": ["Pair", "Neigh", "Comm", "Output", "Modify", "Other"],
    "lammps2024_reaxff_2procs_katom": ["Pair", "Neigh", "Comm", "Output", "Modify", "Other"],
}


@pytest.mark.parametrize("name", VECTORS)
def test_vector_matches_expected_json(name: str) -> None:
    actual, expected = load_vector("lammps", name)
    assert_extra_keys(actual, expected, EXTRA_KEYS)
    assert sorted(actual.pop("timing_breakdown")) == sorted(SECTIONS[name])
    check_extras(actual, expected, {**CLEAN_LOG, **EXTRA_VALUES[name]})
    assert_same(actual, expected)


def test_all_lammps_vectors_present() -> None:
    assert sorted(EXTRA_VALUES) == VECTORS == sorted(SECTIONS)
    assert_sources_present("lammps", VECTORS)


def test_vector_timing_breakdown_keeps_every_column() -> None:
    new = parse_lammps(read_vector("lammps", "lammps2018_protein_nsday_no_katom_4procs"))
    assert new.run is not None
    assert new.run.timing_breakdown["Kspace"] == {
        "min_s": 0.4651, "avg_s": 0.61064, "max_s": 0.69123,
        "varavg_pct": 11.1, "cpu_pct": None, "pct_total": 9.54,
    }
    assert new.run.timing_breakdown["Other"] == {
        "min_s": None, "avg_s": 0.009451, "max_s": None,
        "varavg_pct": None, "cpu_pct": None, "pct_total": 0.15,
    }
    old = parse_lammps(read_vector("lammps", "lammps2007_old_timing_format_1proc"))
    assert old.run is not None
    assert old.run.timing_breakdown["Output"]["avg_s"] == 0.000846  # printed as 'Outpt'
    assert old.run.timing_breakdown["Output"]["min_s"] is None


# --- synthetic logs, written from the print formats of src/finish.cpp ---

BANNER = "LAMMPS (2 Aug 2023 - Update 3)"
TABLE_HEAD = [
    "",
    "MPI task timing breakdown:",
    "Section |  min time  |  avg time  |  max time  |%varavg| %total",
    "---------------------------------------------------------------",
]
SECTION_PCTS = [("Pair", 80.0), ("Neigh", 8.0), ("Comm", 6.5), ("Output", 0.1), ("Modify", 4.4)]


def table_row(name: str, seconds: float, pct: float, varavg: float = 0.3) -> str:
    return "{:<8}| {:<10.5g} | {:<10.5g} | {:<10.5g} |{:6.1f} |{:6.2f}".format(
        name, seconds * 0.98, seconds, seconds * 1.02, varavg, pct
    )


def other_row(seconds: float, pct: float) -> str:
    return "Other   |            | {:<10.4g} |            |       |{:6.2f}".format(seconds, pct)


def thermo(steps: int, values: str = "1.44  -6.7733681  0  -4.6134356  -5.0197073") -> List[str]:
    return [
        "Per MPI rank memory allocation (min/avg/max) = 3.365 | 3.365 | 3.365 Mbytes",
        "   Step          Temp          E_pair         E_mol          TotEng         Press     ",
        f"         0   {values}",
        f"  {steps:8d}   {values}",
    ]


def run_lines(
    steps: int = 1000,
    atoms: int = 32000,
    loop: float = 10.0,
    procs: int = 4,
    perf: Optional[str] = None,
    comm_pct: float = 6.5,
    thermo_values: str = "1.44  -6.7733681  0  -4.6134356  -5.0197073",
) -> List[str]:
    """One modern (2015+) run: thermo block, Loop time, Performance, CPU use, timing table."""
    if perf is None:
        rate = steps / loop
        perf = (
            f"Performance: {86400 * rate * 0.005:.3f} tau/day, {rate:.3f} timesteps/s,"
            f" {rate * atoms / 1e3:.3f} katom-step/s"
        )
    lines = thermo(steps, thermo_values)
    lines += [f"Loop time of {loop:.6g} on {procs} procs for {steps} steps with {atoms} atoms", "", perf]
    lines += [f"99.6% CPU use with {procs} MPI tasks x 1 OpenMP threads"]
    lines += TABLE_HEAD
    for name, pct in SECTION_PCTS:
        pct = comm_pct if name == "Comm" else pct
        lines.append(table_row(name, loop * pct / 100, pct))
    lines += [other_row(loop * 0.01, 1.0), ""]
    lines += ["Nlocal:           8000 ave        8000 max        8000 min"]
    lines += ["Histogram: 4 0 0 0 0 0 0 0 0 0", "Dangerous builds = 0"]
    return lines


def log(*runs: List[str], wall: Optional[str] = "Total wall time: 0:00:21") -> str:
    lines = [BANNER, "  using 1 OpenMP thread(s) per MPI task", "units lj", "run 1000"]
    for run in runs:
        lines += run
    if wall is not None:
        lines.append(wall)
    return printed(lines) + "\n"


def test_modern_lj_run() -> None:
    out = parse_lammps(log(run_lines()))
    d = out.to_dict()
    assert d["lammps_version"] == "2 Aug 2023 - Update 3"
    assert (d["loop_time_s"], d["procs"], d["steps"], d["atoms"]) == (10.0, 4, 1000, 32000)
    assert d["tau_per_day"] == 43200.0 and d["timesteps_per_s"] == 100.0
    assert d["atom_steps_per_s"] == 3200000.0
    assert d["ns_per_day"] is None and d["hours_per_ns"] is None
    assert (d["cpu_use_pct"], d["mpi_tasks"], d["omp_threads"]) == (99.6, 4, 1)
    assert d["comm_pct_total"] == 6.5 and d["pair_pct_total"] == 80.0
    assert d["comm_time_s"] == 0.65
    assert d["total_wall_time_s"] == 21
    assert d["complete"] is True and d["nan_in_thermo"] is False and d["n_runs"] == 1
    json.dumps(d, allow_nan=False)


@pytest.mark.parametrize(
    "field, expected",
    [
        ("716.083 katom-step/s", 716083.0),
        ("25.768 katom-step/s", 25768.0),
        ("3.076 Matom-step/s", 3076000.0),
        ("999.999 Matom-step/s", 999999000.0),
        ("1.234 Gatom-step/s", 1234000000.0),
        ("12.5 atom-step/s", 12.5),
    ],
)
def test_atom_step_prefix_is_normalised(field: str, expected: float) -> None:
    perf = f"Performance: 144.343 ns/day, 0.166 hours/ns, 1670.638 timesteps/s, {field}"
    d = parse_lammps(log(run_lines(perf=perf))).to_dict()
    assert d["atom_steps_per_s"] == expected
    assert type(d["atom_steps_per_s"]) is float
    assert (d["ns_per_day"], d["hours_per_ns"], d["timesteps_per_s"]) == (144.343, 0.166, 1670.638)
    assert d["tau_per_day"] is None


def test_same_throughput_in_k_m_g_is_the_same_number() -> None:
    values = set()
    for field in ("1500000 katom-step/s", "1500 Matom-step/s", "1.5 Gatom-step/s"):
        perf = f"Performance: 1.0 tau/day, 1.0 timesteps/s, {field}"
        values.add(parse_lammps(log(run_lines(perf=perf))).to_dict()["atom_steps_per_s"])
    assert values == {1.5e9}


def test_shift_decimal_rounds_once() -> None:
    assert shift_decimal("716.083", 3) == 716083.0
    assert shift_decimal("1.2e+02", 3) == 120000.0
    assert shift_decimal("0.00003948", 6) == 39.48
    assert shift_decimal("-nan", 3) == "-nan"
    assert shift_decimal("1e9999", 3) == "1e9999"


def test_performance_without_atom_steps_and_electron_units() -> None:
    perf = "Performance: 2.700 ns/day, 8.889 hours/ns, 15.626 timesteps/s"
    d = parse_lammps(log(run_lines(perf=perf))).to_dict()
    assert d["atom_steps_per_s"] is None and d["ns_per_day"] == 2.7
    perf = "Performance: 1234.500 fs/day, 0.019 hours/fs, 14.288 timesteps/s"
    d = parse_lammps(log(run_lines(perf=perf))).to_dict()
    assert (d["fs_per_day"], d["hours_per_fs"], d["timesteps_per_s"]) == (1234.5, 0.019, 14.288)
    assert d["ns_per_day"] is None and d["tau_per_day"] is None


def test_no_openmp_build_and_hybrid_threads() -> None:
    lines = run_lines()
    lines[lines.index("99.6% CPU use with 4 MPI tasks x 1 OpenMP threads")] = (
        "99.9% CPU use with 4 MPI tasks x no OpenMP threads"
    )
    d = parse_lammps(log(lines)).to_dict()
    assert d["mpi_tasks"] == 4 and d["omp_threads"] is None
    lines[lines.index("99.9% CPU use with 4 MPI tasks x no OpenMP threads")] = (
        "387.2% CPU use with 2 MPI tasks x 4 OpenMP threads"
    )
    d = parse_lammps(log(lines)).to_dict()
    assert (d["cpu_use_pct"], d["mpi_tasks"], d["omp_threads"]) == (387.2, 2, 4)


def test_timer_full_table_has_cpu_column_and_thread_table_is_ignored() -> None:
    lines = thermo(100) + [
        "Loop time of 2.5 on 2 procs for 100 steps with 4000 atoms",
        "Performance: 17280.000 tau/day, 40.000 timesteps/s, 160.000 katom-step/s",
        "199.0% CPU use with 1 MPI tasks x 2 OpenMP threads",
        "",
        "MPI task timing breakdown:",
        "Section |  min time  |  avg time  |  max time  |%varavg|  %CPU | %total",
        "-----------------------------------------------------------------------",
        "Pair    | 2.0        | 2.0        | 2.0        |   0.0 | 199.0 | 80.00",
        "Comm    | 0.25       | 0.25       | 0.25       |   0.0 | 198.0 | 10.00",
        "Other   |            | 0.25       |            |       |       | 10.00",
        "",
        "Thread timing breakdown (MPI rank 0):",
        "Total threaded time 2.4 / 96.0%",
        "Section |  min time  |  avg time  |  max time  |%varavg| %total",
        "---------------------------------------------------------------",
        "Pair    | 1.9        | 2.0        | 2.1        |   1.0 | 99.00",
        "Reduce  | 0.01       | 0.01       | 0.01       |   0.0 |  1.00",
    ]
    out = parse_lammps(log(lines))
    assert out.run is not None
    assert out.run.timing_breakdown["Comm"]["cpu_pct"] == 198.0
    assert out.run.comm_pct_total == 10.0 and out.run.pair_pct_total == 80.0
    assert "Reduce" not in out.run.timing_breakdown
    assert out.complete is True


def test_old_2007_timing_format_inline() -> None:
    lines = [
        "LAMMPS (22 Jun 2007)",
        "Memory usage per processor = 2.3 Mbytes",
        "Step Temp E_pair E_mol TotEng Press ",
        "       0         1.44   -6.7733681            0   -4.6134356   -5.0197073 ",
        "     100   0.75745998   -5.7584998            0   -4.6223453   0.20077863 ",
        "Loop time of 5.14 on 4 procs for 100 steps with 32000 atoms",
        "",
        "Pair  time (%) = 3.9 (75.8755)",
        "Bond  time (%) = 0.01 (0.194553)",
        "Kspce time (%) = 0.5 (9.72763)",
        "Neigh time (%) = 0.4 (7.78210)",
        "Comm  time (%) = 0.2 (3.89105)",
        "Outpt time (%) = 0.0001 (0.00194553)",
        "Other time (%) = 0.1299 (2.52724)",
        "",
        "FFT time (% of Kspce) = 0.2 (40)",
        "FFT Gflps 3d (1d only) = 1.2 2.3",
    ]
    d = parse_lammps(printed(lines)).to_dict()
    assert d["lammps_version"] == "22 Jun 2007"
    assert d["comm_pct_total"] == 3.89105 and d["comm_time_s"] == 0.2
    assert sorted(d["timing_breakdown"]) == sorted(
        ["Pair", "Bond", "Kspace", "Neigh", "Comm", "Output", "Other"]
    )
    assert d["timesteps_per_s"] is None and d["cpu_use_pct"] is None
    assert d["total_wall_time_s"] is None and d["complete"] is True


def test_several_runs_report_the_last_complete_one() -> None:
    first = run_lines(steps=1000, loop=10.0, comm_pct=5.0)
    second = run_lines(steps=2000, loop=16.0, comm_pct=7.25)
    d = parse_lammps(log(first, second)).to_dict()
    assert (d["steps"], d["loop_time_s"], d["comm_pct_total"]) == (2000, 16.0, 7.25)
    assert d["n_runs"] == 2 and d["complete"] is True


def test_trailing_run_zero_does_not_replace_the_real_run() -> None:
    zero = thermo(0)[:3] + ["Loop time of 1.907e-06 on 4 procs for 0 steps with 32000 atoms", ""]
    zero += ["0.0% CPU use with 4 MPI tasks x 1 OpenMP threads"]
    d = parse_lammps(log(run_lines(steps=500, loop=5.0), zero)).to_dict()
    assert d["steps"] == 500 and d["loop_time_s"] == 5.0
    assert d["n_runs"] == 2 and d["complete"] is True
    only_zero = parse_lammps(log(zero)).to_dict()
    assert only_zero["steps"] == 0 and only_zero["timesteps_per_s"] is None


def test_run_cut_after_a_complete_run_is_flagged() -> None:
    cut = thermo(5000)[:3]  # second run started, printed its first thermo line, then died
    d = parse_lammps(log(run_lines(steps=1000, comm_pct=5.0), cut, wall=None)).to_dict()
    assert d["steps"] == 1000 and d["comm_pct_total"] == 5.0
    assert d["complete"] is False and d["n_runs"] == 1


def test_truncated_log_without_any_loop_time_is_partial() -> None:
    text = log(thermo(1000)[:3], wall=None)
    d = parse_lammps(text).to_dict()
    assert d["lammps_version"] == "2 Aug 2023 - Update 3"
    assert d["loop_time_s"] is None and d["atom_steps_per_s"] is None
    assert d["timing_breakdown"] == {} and d["n_runs"] == 0
    assert d["complete"] is False
    json.dumps(d, allow_nan=False)


def test_table_cut_short_is_incomplete_but_keeps_rows() -> None:
    lines = run_lines(comm_pct=3.5)
    text = printed(lines[: lines.index(next(l for l in lines if l.startswith("Output")))])
    d = parse_lammps(BANNER + "\n" + text).to_dict()
    assert d["comm_pct_total"] == 3.5
    assert d["complete"] is False


def test_garbled_loop_line_keeps_performance_as_partial_run() -> None:
    lines = run_lines()
    lines[lines.index(next(l for l in lines if l.startswith("Loop time")))] = "Loop time of 10.0 on 4 pr"
    d = parse_lammps(log(lines)).to_dict()
    assert d["loop_time_s"] is None and d["timesteps_per_s"] == 100.0
    assert d["comm_pct_total"] == 6.5
    assert d["complete"] is False and d["n_runs"] == 0


@pytest.mark.parametrize("token", ["nan", "-nan", "NaN", "inf", "-inf"])
def test_nan_in_custom_thermo_is_flagged(token: str) -> None:
    values = f"1.44  {token}  0  -4.6134356  -5.0197073"
    d = parse_lammps(log(run_lines(thermo_values=values))).to_dict()
    assert d["nan_in_thermo"] is True
    assert d["complete"] is True  # the run finished; the flag is separate


def test_nan_in_multi_and_yaml_thermo_is_flagged() -> None:
    multi = [
        "Per MPI rank memory allocation (min/avg/max) = 49.07 | 49.17 | 49.46 Mbytes",
        "---------------- Step      100 ----- CPU =      6.3997 (sec) ----------------",
        "TotEng   =           -nan KinEng   =     21591.9096 Temp     =       301.0906 ",
        "Loop time of 6.39977 on 4 procs for 100 steps with 32000 atoms",
    ]
    assert parse_lammps(log(multi)).nan_in_thermo is True
    yaml = [
        "Per MPI rank memory allocation (min/avg/max) = 3.3 | 3.3 | 3.3 Mbytes",
        "---",
        "keywords: ['Step', 'Temp', 'E_pair']",
        "data:",
        "  - [0, 1.44, -6.77]",
        "  - [100, nan, nan]",
        "...",
        "Loop time of 1.0 on 1 procs for 100 steps with 500 atoms",
    ]
    assert parse_lammps(log(yaml)).nan_in_thermo is True


def test_nan_outside_thermo_is_not_flagged() -> None:
    lines = ["variable bad equal nan", "print 'inf loop'"] + run_lines()
    lines.insert(len(thermo(1000)), "WARNING: Pair style returned nan for one pair (src/pair.cpp:99)")
    assert parse_lammps(log(lines)).nan_in_thermo is False


def test_error_line_is_reported_and_makes_the_log_incomplete() -> None:
    cut = thermo(1000)[:3] + ["ERROR: Lost atoms: original 32000 current 31998 (src/thermo.cpp:488)"]
    d = parse_lammps(log(cut, wall="Last command: run 1000")).to_dict()
    assert d["error"] == "ERROR: Lost atoms: original 32000 current 31998 (src/thermo.cpp:488)"
    assert d["complete"] is False
    on_proc = parse_lammps(log(["ERROR on proc 3: Bond atoms 12 13 missing (src/ntopo.cpp:61)"]))
    assert on_proc.error is not None and on_proc.error.startswith("ERROR on proc 3:")


def test_total_wall_time_with_many_hours() -> None:
    d = parse_lammps(log(run_lines(), wall="Total wall time: 125:07:09")).to_dict()
    assert d["total_wall_time_s"] == 125 * 3600 + 7 * 60 + 9


def test_indentation_crlf_and_noise() -> None:
    noise = [
        "[node01:12345] mca_btl_openib: 1 2 3",
        "OMP_NUM_THREADS environment is not set. Defaulting to 1 thread. (src/comm.cpp:98)",
    ]
    text = "\r\n".join("  " + line for line in noise + log(run_lines()).splitlines())
    d = parse_lammps(text).to_dict()
    assert d["comm_pct_total"] == 6.5 and d["complete"] is True


def test_nothing_recognisable_is_a_parse_error() -> None:
    assert_parse_errors(parse_lammps, ["", "\n\n", "hello world\n", "\x00\xff garbage \ufffd", "Loop time of x on y"])


def test_pathological_lines_parse_in_linear_time() -> None:
    n = 200_000
    hostile = [
        "Loop time of " + "1" * n + " on",
        "Loop time of 1 on 1 procs for 1 steps with " + "9" * n + " atoms",
        "Performance: " + "1 ns/day, " * (n // 10),
        "Performance: " + "1" * n + "x",
        "Step " + "a " * n,
        "- [" + "nan, " * (n // 5),
        "Section |" + " |" * n,
        "Pair time (%) = " + "1" * n,
        "Total wall time: " + "1" * n,
        "LAMMPS (" + "(" * n,
        "1 " * n + "x",
        "% CPU use with " * (n // 15),
    ]
    in_table = "Per MPI rank memory allocation\nMPI task timing breakdown:\n"
    assert_linear_time(parse_lammps, [text for line in hostile for text in (line, in_table + line)])


def test_mutated_real_outputs_give_a_result_or_parse_error() -> None:
    samples = sample_texts("lammps") + [log(run_lines(), run_lines())]
    alphabet = "LoopPerformance:|%0123456789.e+-nan katom-step/s\n\r\t"
    texts = mutated_texts(samples, seed=20240602, rounds=200, max_edits=30, alphabet=alphabet)
    assert_result_or_parse_error(parse_lammps, texts)


def test_registry_entry() -> None:
    assert_registered("lammps", parse_lammps, log(run_lines()))
