"""Tuning mode through real ReFrame: sweep, freeze the winner, then the scaling check uses it."""
import pytest
import yaml

from conftest import require_xhpl, run_reframe
from scalebench.reporting.store import ingest

pytestmark = pytest.mark.integration


def test_sweep_freezes_a_deck_that_the_scaling_check_then_uses(tmp_path):
    require_xhpl()
    decks = tmp_path / "decks"
    tiny = ["-S", "time_budget_s=0.05", "-S", "efficiency_floor=0", "-S", f"decks_dir={decks}"]
    tuning = run_reframe(tmp_path / "tune", "-r", "-S", "nbs=64,96", "-S", "freeze=true", *tiny,
                         checks="tuning")
    assert tuning.returncode == 0, tuning.stdout[-3000:]
    frozen = yaml.safe_load((decks / "local" / "default.yaml").read_text())
    assert frozen["nb"] in (64, 96)
    assert frozen["provenance"]["top"][0]["gflops"] > 0

    scaling = run_reframe(tmp_path / "scale", "-r", "-n", "%scale=1_node", *tiny)
    assert scaling.returncode == 0, scaling.stdout[-3000:]
    sessions, _ = ingest([tmp_path / "scale"])
    case = next(c for c in sessions[0].cases if c.result != "skip")
    assert case.provenance["hpl_deck"]["nb"] == frozen["nb"]
    assert case.provenance["deck_source"].startswith("frozen deck ")
