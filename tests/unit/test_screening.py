"""Node screening: stragglers flagged against their peers' median, and only they."""
import pytest

import reframe_reports as rr
from scalebench.cli import main
from scalebench.results.screening import flagged_nodes, hostlist, score, screens
from scalebench.results.store import ingest
from scalebench.site.thresholds import report_flags

FLAGS = {"screen_z": 3.5, "screen_min_deviation": 0.03, "screen_max_deviation": 0.15}


def health(node, rmax, triad, system="cluster"):
    return rr.testcase("NodeHealthCheck", {"rmax": (rmax, "Gflop/s"), "rpeak_gflops": (2000.0, "Gflop/s"),
                                           "efficiency": (100 * rmax / 2000.0, "%"),
                                           "stream_triad": (triad, "GB/s")},
                       params={"scale": "1_node"}, system=system, partition="cpu", num_nodes=1, num_tasks=4,
                       nodelist=[node])


def screened(tmp_path, values):
    rr.write_run(tmp_path / "results", "screen", [health(node, rmax, triad) for node, (rmax, triad) in values.items()])
    found, warnings = ingest([tmp_path / "results"])
    assert not warnings
    return screens(found)


def test_the_slow_node_and_only_it_is_flagged(tmp_path):
    values = {f"n{i:03d}": (1500.0 + i, 200.0 + i % 3) for i in range(1, 33)}
    values["n017"] = (1350.0, 201.0)  # 10% behind in HPL, normal memory
    found, notes = screened(tmp_path, values)
    assert not notes
    assert flagged_nodes(found) == ["n017"]
    (rmax,) = [s for s in found if s.figure == "rmax"]
    assert rmax.scores[0].node == "n017" and rmax.scores[0].z < -3.5  # worst first


def test_four_nodes_one_far_behind(tmp_path):
    found, _ = screened(tmp_path, {"n1": (100.0, 50.0), "n2": (98.0, 51.0), "n3": (60.0, 30.0), "n4": (101.0, 50.0)})
    assert flagged_nodes(found) == ["n3"]


def test_a_faster_node_and_a_tight_population_flag_nothing():
    values = {"a1": 100.0, "a2": 100.2, "a3": 99.9, "a4": 130.0, "a5": 99.0}
    assert not any(s.flagged for s in score(values, "higher", FLAGS))  # a4 is faster; a5 only 1% behind


def test_lower_is_better_flags_the_high_side():
    scores = score({"a1": 1.0, "a2": 1.02, "a3": 0.99, "a4": 1.5}, "lower", FLAGS)
    assert [s.node for s in scores if s.flagged] == ["a4"]


def test_fewer_than_three_nodes_is_a_note(tmp_path):
    found, notes = screened(tmp_path, {"n1": (100.0, 50.0), "n2": (60.0, 51.0)})
    assert found == [] and any("fewer than 3" in n for n in notes)


@pytest.mark.parametrize("nodes, expected", [
    (["n3"], "n3"),
    (["n1", "n2", "n3", "n7"], "n[1-3,7]"),
    (["gpu02", "gpu01", "login", "nid001000"], "gpu[01-02],login,nid001000"),
    ([], ""),
])
def test_hostlist_is_slurms_compressed_form(nodes, expected):
    assert hostlist(nodes) == expected


def test_screen_command_exit_codes(tmp_path, capsys):
    values = {"n1": (100.0, 50.0), "n2": (98.0, 51.0), "n3": (60.0, 30.0), "n4": (101.0, 50.0)}
    rr.write_run(tmp_path / "bad", "screen", [health(n, r, t) for n, (r, t) in values.items()])
    assert main(["screen", str(tmp_path / "bad"), "--hostlist"]) == 1
    assert capsys.readouterr().out == "n3\n"
    values["n3"] = (99.0, 50.5)
    rr.write_run(tmp_path / "good", "screen", [health(n, r, t) for n, (r, t) in values.items()])
    assert main(["screen", str(tmp_path / "good")]) == 0
    assert "nodes to drain or exclude: none" in capsys.readouterr().out
    rr.write_run(tmp_path / "none", "other", rr.hpl("ucx", {1: 900.0}))
    assert main(["screen", str(tmp_path / "none")]) == 2


def test_shipped_flags_are_the_documented_ones():
    assert {k: v for k, v in report_flags().items() if k.startswith("screen_")} == FLAGS
