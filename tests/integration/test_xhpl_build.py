"""The xhpl that scripts/build-xhpl.sh builds from Debian's hpcc source: it reads a scalebench HPL.dat,
passes its residual check, stops on a deck that does not fit the launched ranks, times DGEMM first
only when asked, and solves the seed study's deck as published but for its size and grid."""
import os
import subprocess

import pytest

from conftest import VENV_BIN, XHPL, local_scales, ranks_at, require_xhpl
from scalebench import paths
from scalebench.hpl.deck import load_rules, rewrite_hpl_dat
from scalebench.hpl.grid import grid_choice
from scalebench.hpl.outcome import hpl_outcome, star_dgemm_keys
from scalebench.hpl.output import decode_tv, parse_hpl

pytestmark = pytest.mark.integration


def run_xhpl(workdir, ranks: int = 2, **env_vars: str) -> subprocess.CompletedProcess:
    require_xhpl()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1", **env_vars)
    return subprocess.run(["mpirun", "--oversubscribe", "-np", str(ranks), str(XHPL)], cwd=workdir,
                          env=env, capture_output=True, text=True, timeout=300)


def write_deck(workdir) -> str:
    deck = subprocess.run([str(VENV_BIN / "scalebench"), "deck", "--nodes", "1", "--ranks-per-node", "2",
                           "--memory-per-node", "64MiB", "--nb", "128"],
                          capture_output=True, text=True, check=True).stdout
    (workdir / "HPL.dat").write_text(deck)
    return deck


def test_xhpl_solves_a_scalebench_deck(tmp_path):
    write_deck(tmp_path)
    proc = run_xhpl(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = parse_hpl(proc.stdout)
    assert out.problems(expected_cases=1) == []
    assert out.hpl_version == "2.0"
    assert (out.rows[0].nb, out.rows[0].p, out.rows[0].q) == (128, 1, 2)
    # HPL.dat's own output lines are honoured: nothing of hpcc's hpccoutf.txt.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["HPL.dat"]
    assert star_dgemm_keys(proc.stdout) == {}  # stock xhpl unless asked for DGEMM


def test_xhpl_asked_for_dgemm_times_it_on_every_rank_before_and_after_hpl(tmp_path):
    write_deck(tmp_path)
    proc = run_xhpl(tmp_path, SCALEBENCH_DGEMM_N="256")
    assert proc.returncode == 0, proc.stderr[-2000:]
    keys = star_dgemm_keys(proc.stdout)
    assert (keys["StarDGEMM_N"], keys["CommWorldProcs"]) == (256, 2)
    assert 0 < keys["StarDGEMM_Gflops_min"] <= keys["StarDGEMM_Gflops"] <= keys["StarDGEMM_Gflops_max"]
    before, hpl_end, after = (proc.stdout.index(k) for k in ("DGEMM_Before_Gflops=", "End of Tests.",
                                                              "DGEMM_After_Gflops="))
    assert before < hpl_end < after
    outcome = hpl_outcome(proc.stdout, proc.stderr, hpcc=False, expected_cases=1, tasks=2, rpeak_gflops=1.0)
    assert outcome.problems == () and len(outcome.dgemm.before) == len(outcome.dgemm.after) == 5
    # the ceiling is the best repeat of both ranks at once, before or after; hpcc's keys are of the
    # repeats before, and their best is at most the sum of each rank's best
    assert outcome.dgemm_ceiling_gflops == max(outcome.dgemm.all)
    assert max(outcome.dgemm.before) <= 2 * keys["StarDGEMM_Gflops"] * 1.000001


def test_xhpl_stops_on_a_grid_larger_than_the_ranks(tmp_path):
    deck = write_deck(tmp_path)
    (tmp_path / "HPL.dat").write_text(deck.replace("\n1            Ps\n", "\n2            Ps\n"))
    proc = run_xhpl(tmp_path)
    assert proc.returncode != 0
    assert "Need at least 4 processes for these tests" in proc.stderr
    assert "Illegal input in file HPL.dat" in proc.stderr
    assert "T/V" not in proc.stdout  # no solve with built-in defaults


def test_the_seed_studys_deck_at_a_small_n_through_the_checks_parser(tmp_path):
    """hpl_decks/reference/10gbe-36node.HPL.dat, the algorithm of the seed study's appendix, on this
    machine's ranks: its smoke-test N and a small N in place of the 36-node one."""
    ranks = ranks_at(local_scales()[-1])
    grid = grid_choice(ranks, load_rules().max_grid_aspect)
    published = (paths.HPL_DECKS / "reference" / "10gbe-36node.HPL.dat").read_text()
    ns = [1000, 3072]
    (tmp_path / "HPL.dat").write_text(rewrite_hpl_dat(published, ns=ns, grids=[(grid.p, grid.q)]))
    proc = run_xhpl(tmp_path, ranks=grid.p * grid.q)
    assert proc.returncode == 0, proc.stderr[-2000:]
    outcome = hpl_outcome(proc.stdout, proc.stderr, hpcc=False, expected_cases=len(ns), tasks=grid.p * grid.q,
                          rpeak_gflops=1.0)
    assert outcome.problems == ()
    assert [(r.n, r.nb, r.p * r.q, r.status) for r in outcome.hpl.rows] == [
        (n, 128, grid.p * grid.q, "PASSED") for n in ns]
    assert {r.tv for r in outcome.hpl.rows} == {"WR01R2R4"}  # 1ringM, DEPTH 0, Right/Right, NDIV 2, NBMIN 4
    assert decode_tv("WR01R2R4") == {"pmap": "row", "depth": 0, "bcast": "1ringM", "rfact": "right", "ndiv": 2,
                                     "pfact": "right", "nbmin": 4}
