"""The xhpl that scripts/build-xhpl.sh builds from Debian's hpcc source: it reads a scalebench HPL.dat,
passes its residual check, and stops on a deck that does not fit the launched ranks."""
import os
import subprocess

import pytest

from conftest import REPO, VENV_BIN, require_tools
from scalebench.parse.hpl import parse_hpl

pytestmark = pytest.mark.integration

XHPL = REPO / "build" / "bin" / "xhpl"


def run_xhpl(workdir, ranks: int = 2) -> subprocess.CompletedProcess:
    require_tools("mpirun")
    if not XHPL.is_file():
        message = "needs build/bin/xhpl (built by scripts/install.sh)"
        if os.environ.get("CI"):
            pytest.fail(f"{message}: missing in CI")
        pytest.skip(message)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OPENBLAS_NUM_THREADS="1")
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


def test_xhpl_stops_on_a_grid_larger_than_the_ranks(tmp_path):
    deck = write_deck(tmp_path)
    (tmp_path / "HPL.dat").write_text(deck.replace("\n1            Ps\n", "\n2            Ps\n"))
    proc = run_xhpl(tmp_path)
    assert proc.returncode != 0
    assert "Need at least 4 processes for these tests" in proc.stderr
    assert "Illegal input in file HPL.dat" in proc.stderr
    assert "T/V" not in proc.stdout  # no solve with built-in defaults
