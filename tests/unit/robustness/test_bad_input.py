"""Every class of bad input, through the public entry points: the library raises a named error whose
message names the field, and the `scalebench` command exits non-zero with that one line on stderr."""
import os
import sys
from pathlib import Path

import pytest

import reframe_reports as rr
from scalebench.errors import DeckError, InputError, ResultsError
from scalebench.hpl import deck
from scalebench.site import rundir, siteconf, thresholds
from scalebench.site.jobs import job_plan
from scalebench.site.partition import PartitionSpec, StackSpec
from cli_calls import error_line, scalebench
from site_files import SITE, run_dir, write  # noqa: F401 (run_dir: autouse, run directories in tmp_path)

REPO = Path(__file__).resolve().parents[3]
GiB = 2**30
# A node of 4 cores that may run at most 1 node (partition extras, as site configs give them).
FOUR_CORES = PartitionSpec("sys", "part", "local", "mpirun", 1, 4, 16 * 2**30, "zen3", 2.0, 16)
STACK = StackSpec("env", "env", (), {})
THRESHOLDS_TYPO = "criteria:\n  - benchmark: HPLCheck\n    figure: rmaxx\n    min: 1\n"


def a_regular_file(tmp_path: Path) -> Path:
    """A path under it cannot be created or read by anyone, root included (ENOTDIR): tests run as
    root here, where chmod stops nothing."""
    path = tmp_path / "a-file"
    path.write_text("not a directory\n")
    return path


# /proc/self exists, yet procfs lets nobody create entries in it, root included: a read-only directory.
READ_ONLY_DIR = Path("/proc/self")


# --- node count <= 0 -------------------------------------------------------------------------------

def test_zero_nodes_on_the_command_line():
    line = error_line(scalebench("deck", "--nodes", "0", "--ranks-per-node", "4", "--memory-per-node", "16GiB"))
    assert line == "scalebench deck: error: argument --nodes: must be positive, got 0"


@pytest.mark.parametrize("nodes", [0, -4])
def test_non_positive_nodes_in_a_deck_request(nodes):
    with pytest.raises(InputError, match=f"^nodes: must be a positive integer, got {nodes}$"):
        deck.DeckRequest(nodes=nodes, ranks_per_node=4, memory_per_node=16 * GiB)


@pytest.mark.parametrize("max_nodes", ["0", "-1", "two"])
def test_non_positive_max_nodes_in_a_site_file(tmp_path, max_nodes):
    path = write(tmp_path, SITE.replace("max_nodes: 8", f"max_nodes: {max_nodes}"))
    with pytest.raises(InputError, match=r"partitions\[cpu\]\.max_nodes: must be a positive whole number"):
        siteconf.load_site(path)


# --- ranks per node > cores, threads x ranks > cores ------------------------------------------------

def test_more_ranks_per_node_than_cores():
    with pytest.raises(InputError, match="^ranks_per_node: 8 exceeds the 4 cores of scale 1_node$"):
        job_plan(FOUR_CORES, STACK, "1_node", ranks_per_node=8)


def test_more_threads_per_rank_than_cores():
    with pytest.raises(InputError, match="^threads_per_rank: 8 exceeds the 4 cores of scale 1_node$"):
        job_plan(FOUR_CORES, STACK, "1_node", threads_per_rank=8)


def test_threads_times_ranks_beyond_cores():
    with pytest.raises(InputError, match="^threads_per_rank: 2 ranks x 4 threads exceeds the 4 cores"):
        job_plan(FOUR_CORES, STACK, "1_node", threads_per_rank=4, ranks_per_node=2)


# --- memory too small for the smallest deck, N < NB --------------------------------------------------

def test_memory_too_small_on_the_command_line():
    line = error_line(scalebench("deck", "--nodes", "2", "--ranks-per-node", "4", "--memory-per-node", "1MiB"))
    assert line.startswith("scalebench deck: error: memory_per_node: 1.0 MiB x 0.8 cannot hold one ")


def test_memory_too_small_in_the_library():
    request = deck.DeckRequest(nodes=1, ranks_per_node=64, memory_per_node=2**20, nb=256)
    with pytest.raises(DeckError, match="^memory_per_node: 1.0 MiB x 0.8 cannot hold one 256x256 block"):
        deck.make_deck(request)


def test_n_below_nb_in_the_library():
    base = deck.make_deck(deck.DeckRequest(nodes=1, ranks_per_node=4, memory_per_node=16 * GiB, nb=256))
    with pytest.raises(DeckError, match="^N: 100 is smaller than NB=256$"):
        deck.with_sizes(base, 100)
    request = deck.DeckRequest(nodes=2, ranks_per_node=4, memory_per_node=16 * GiB, nb=256)
    with pytest.raises(DeckError, match="^N: 100 is smaller than NB=256$"):
        deck.deck_for_scaling(request, deck.Rules(), "strong", fixed_n=100)


def test_n_below_nb_on_the_command_line():
    line = error_line(scalebench("tune", "deck", "--nodes", "1", "--ranks-per-node", "4", "--memory-per-node",
                                 "16GiB", "--n", "100", "--nbs", "256"))
    assert line.startswith("scalebench tune: error: N: 100 holds less than one 256-wide block")


# --- unknown stack/environment, unknown system/partition ----------------------------------------------

def test_unknown_stack_in_a_site_file(tmp_path):
    path = write(tmp_path, SITE.replace("environs: [ompi]", "environs: [mpich]"))
    with pytest.raises(InputError, match=r"partitions\[cpu\]\.environs: unknown stack\(s\) mpich \(defined: ompi\)"):
        siteconf.load_site(path)


def test_unknown_environment_selects_nothing_and_says_so(tmp_path):
    """ReFrame runs 0 test cases and exits 0 for an environment no system has; the checks stop it instead."""
    proc = scalebench("run", "--results", str(tmp_path), "--checks", str(REPO / "reframe_tests" / "hpl.py"),
                      "--", "-p", "nosuchstack")
    assert proc.returncode == 2 and "Ran 0/0" not in proc.stdout
    assert proc.stderr.splitlines() == [
        "scalebench: system local: its partitions (default) have no environment left to run in (does ReFrame's -p "
        "select none of theirs?)", "scalebench run: reframe refused its input (the line above says why)"]


NO_REPORT = "scalebench run: reframe exited with status 1 without writing its report (the lines above say why)"


def test_unknown_system_partition_is_named_by_reframe(tmp_path):
    proc = scalebench("run", "--results", str(tmp_path), "--", "--system", "local:nosuchpart")
    assert error_line(proc) == NO_REPORT
    assert "requested system/partition combination: 'local:nosuchpart'" in proc.stdout


@pytest.mark.parametrize("by, baseline", [("stack", "nosuchstack"), ("system", "nosuch:part")])
def test_unknown_baseline_stack_or_system(by, baseline):
    line = error_line(scalebench("compare", str(rr.REAL_REPORT), "--by", by, "--baseline", baseline))
    assert line.startswith(f"scalebench compare: error: --baseline: {baseline!r} is not a {by} of these results")


def test_unknown_system_has_no_efficiency_floor(tmp_path):
    floors = tmp_path / "floors.yaml"
    floors.write_text('"big:*": 0.7\n')
    with pytest.raises(InputError, match="no floor for nosuch:part and no '\\*' entry"):
        thresholds.efficiency_floor("nosuch", "part", floors)


# --- missing binary -----------------------------------------------------------------------------------

def test_missing_reframe_binary(tmp_path, monkeypatch, capsys):
    """`run` looks for reframe next to the Python it runs under; none there is a named error, not a traceback."""
    from scalebench.cli import main

    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    assert main(["run", "--results", str(tmp_path / "results")]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"scalebench run: error: reframe: no executable {tmp_path / 'reframe'} " \
                           "(install it with scripts/install.sh)\n"
    assert not (tmp_path / "results").exists()  # checked before any run directory is made


# --- unreadable or read-only results directory ----------------------------------------------------------

def test_results_under_a_regular_file(tmp_path):
    results = a_regular_file(tmp_path) / "results"
    line = error_line(scalebench("report", str(results)))
    assert line == f"scalebench report: error: results: {results} does not exist"


@pytest.mark.parametrize("where", ["under a file", "read-only"])
def test_report_out_directory_not_writable(tmp_path, where):
    out = (a_regular_file(tmp_path) if where == "under a file" else READ_ONLY_DIR) / "report"
    line = error_line(scalebench("report", str(rr.REAL_REPORT), "--out", str(out)))
    assert line.startswith(f"scalebench report: error: --out: cannot write into {out}: ")


@pytest.mark.parametrize("where", ["under a file", "read-only"])
def test_run_results_directory_not_writable(tmp_path, where):
    results = a_regular_file(tmp_path) if where == "under a file" else READ_ONLY_DIR
    line = error_line(scalebench("run", "--results", str(results)))
    assert line.startswith(f"scalebench run: error: --results: cannot create {results}/runs/")


def test_read_only_run_directory_for_reframe(monkeypatch):
    """The directory a site configuration writes into (SCALEBENCH_RUN_DIR) exists but takes no file."""
    monkeypatch.setenv("SCALEBENCH_RUN_DIR", str(READ_ONLY_DIR))
    with pytest.raises(ResultsError, match=r"^SCALEBENCH_RUN_DIR: cannot write /proc/\d+/provenance.json: "):
        rundir.claim_run_dir()


# --- thresholds file with a typo'd figure name ------------------------------------------------------------

@pytest.mark.parametrize("command", ["accept", "report"])
def test_thresholds_figure_typo(tmp_path, command):
    path = tmp_path / "acceptance.yaml"
    path.write_text(THRESHOLDS_TYPO)
    extra = ["--out", str(tmp_path / "report")] if command == "report" else []
    line = error_line(scalebench(command, str(rr.REAL_REPORT), "--thresholds", str(path), *extra))
    assert line.startswith(f"scalebench {command}: error: {path}: criteria[0].figure: unknown figure 'rmaxx' "
                           "of HPLCheck (did you mean 'rmax'?)")
    assert not (tmp_path / "report").exists()


# --- Rpeak inputs missing ---------------------------------------------------------------------------

def test_site_file_without_rpeak_inputs(tmp_path):
    path = write(tmp_path, SITE.replace("    clock_ghz: 2.0\n", ""))
    with pytest.raises(InputError, match=r"partitions\[cpu\]: Rpeak inputs missing: clock_ghz \(set them"):
        siteconf.load_site(path)


def test_site_file_without_rpeak_inputs_through_reframe(tmp_path):
    """ReFrame loads the site file: its error is ReFrame's one configuration line, not a traceback."""
    site = write(tmp_path, SITE.replace("    clock_ghz: 2.0\n", "").replace("    microarch: zen3\n", ""))
    env = {**os.environ, "SCALEBENCH_SITE": str(site)}
    proc = scalebench("run", "--results", str(tmp_path / "results"), "--config",
                      str(REPO / "site_configs" / "slurm.py"), env=env)
    assert error_line(proc) == NO_REPORT
    assert (f"failed to load configuration: {site}: partitions[cpu]: Rpeak inputs missing: "
            "clock_ghz, flops_per_cycle") in proc.stdout


@pytest.mark.parametrize("clock", ["nan", "inf", "0"])
def test_non_finite_clock_override(clock):
    line = error_line(scalebench("peak", f"--clock-ghz={clock}"))
    assert line.startswith("scalebench peak: error: clock_ghz: must be a positive number, got ")


@pytest.mark.parametrize("clock, message", [("abc", "SCALEBENCH_CLOCK_GHZ: 'abc' is not a float"),
                                            ("nan", "SCALEBENCH_CLOCK_GHZ: 'nan' must be a positive number")])
def test_embedded_default_with_a_bad_clock_override_through_reframe(tmp_path, clock, message):
    env = {**os.environ, "SCALEBENCH_CLOCK_GHZ": clock}
    proc = scalebench("run", "--results", str(tmp_path / "results"), env=env)
    assert error_line(proc) == NO_REPORT
    assert f"failed to load configuration: {message}" in proc.stdout
