"""Node screening in `scalebench screen` and the report: NodeHealthCheck's stragglers flagged against their
peers' median, and only they; ScreeningCheck's nodes and links with their causes, drained and re-screened."""
import re

import pytest

import reframe_reports as rr
from scalebench.cli import main
from scalebench.reporting.document import Figure, Table
from scalebench.reporting.screening import blocks as screening_blocks
from scalebench.reporting.screening import flagged_nodes, screens
from scalebench.reporting.store import ingest
from scalebench.screening.jobs import hostlist
from scalebench.screening.verdict import Thresholds, score
from scalebench.site.thresholds import report_flags
from screening_outputs import probe_text

FLAGS = {"screen_z": 3.5, "screen_min_deviation": 0.03, "screen_max_deviation": 0.15,
         "screen_link_min_deviation": 0.10, "screen_link_max_deviation": 0.30,
         "screen_latency_min_deviation": 0.10, "screen_latency_max_deviation": 0.30}
NODE_LIMITS = Thresholds(3.5, 0.03, 0.15)


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
    assert rmax.scores[0].name == "n017" and rmax.scores[0].z < -3.5  # worst first


def test_four_nodes_one_far_behind(tmp_path):
    found, _ = screened(tmp_path, {"n1": (100.0, 50.0), "n2": (98.0, 51.0), "n3": (60.0, 30.0), "n4": (101.0, 50.0)})
    assert flagged_nodes(found) == ["n3"]


def test_a_faster_node_and_a_tight_population_flag_nothing():
    values = {"a1": 100.0, "a2": 100.2, "a3": 99.9, "a4": 130.0, "a5": 99.0}
    assert not any(s.flagged for s in score(values, "higher", NODE_LIMITS))  # a4 is faster; a5 only 1% behind


def test_lower_is_better_flags_the_high_side():
    scores = score({"a1": 1.0, "a2": 1.02, "a3": 0.99, "a4": 1.5}, "lower", NODE_LIMITS)
    assert [s.name for s in scores if s.flagged] == ["a4"]


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
    assert "nodes to drain: none" in capsys.readouterr().out
    rr.write_run(tmp_path / "none", "other", rr.hpl("ucx", {1: 900.0}))
    assert main(["screen", str(tmp_path / "none")]) == 2


def test_shipped_flags_are_the_documented_ones():
    assert {k: v for k, v in report_flags().items() if k.startswith("screen_")} == FLAGS


# --- ScreeningCheck: every node and link of a job at once ------------------------------------------

NIDS = [f"nid{i:03d}" for i in range(1, 17)]


def screening_case(text, completed=1.0e9, nodes=NIDS, **kwargs):
    return rr.testcase("ScreeningCheck", {"nodes": (float(len(nodes)), "nodes"), "flagged_nodes": (0.0, "nodes")},
                       params={"chunk": 1}, system="cluster", partition="cpu", environ="ompi", stack="ompi",
                       num_nodes=len(nodes), num_tasks=64 * len(nodes), nodelist=list(nodes),
                       extra={"probe_output": text, "screened_nodes": hostlist(nodes),
                              "job_completion_time_unix": completed, "job_submit_time": completed - 60}, **kwargs)


def test_screen_names_the_nodes_to_drain_their_causes_and_the_bad_link(tmp_path, capsys):
    text = probe_text(NIDS, dgemm={"nid003": 0.6}, nic={"nid009": 0.2}, links={frozenset(("nid005", "nid006")): 0.3})
    rr.write_run(tmp_path / "results", "screen", [screening_case(text)])
    assert main(["screen", str(tmp_path / "results")]) == 1
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines() if re.match(r"nid\d+ ", line)}
    assert rows == {"nid003": "compute", "nid009": "NIC"}
    assert "nodes to drain: nid[003,009]" in out and "links to check: nid005-nid006" in out
    assert main(["screen", str(tmp_path / "results"), "--hostlist"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "nid[003,009]\n"
    (command,) = [line for line in captured.err.splitlines() if line.startswith("re-screen")]
    # the flagged nodes beside three healthy peers, as a ReFrame command to run after the repair
    assert "-n ScreeningCheck --system cluster:cpu -p '^ompi$' -S screen_nodes='nid[001-004,009]' -r" in command


def test_a_re_screen_clears_the_repaired_node(tmp_path, capsys):
    bad = probe_text(NIDS, dgemm={"nid003": 0.6})
    fixed = probe_text(["nid001", "nid002", "nid003", "nid004"], seed=3)
    rr.write_run(tmp_path / "results", "first", [screening_case(bad, completed=1.0e9)])
    rr.write_run(tmp_path / "results", "again", [screening_case(fixed, completed=1.1e9, nodes=NIDS[:4])])
    assert main(["screen", str(tmp_path / "results"), "--hostlist"]) == 0
    assert capsys.readouterr().out == "\n"


def test_a_screening_job_without_its_probe_output_is_a_note_not_a_verdict(tmp_path, capsys):
    rr.write_run(tmp_path / "results", "screen", [screening_case("screen-probe version=1 nodes=3\n")])
    assert main(["screen", str(tmp_path / "results")]) == 2
    assert "probe output: line 1: screen-probe line without" in capsys.readouterr().err


def test_the_report_has_both_tables_and_a_per_node_plot(tmp_path):
    text = probe_text(NIDS, stream={"nid007": 0.5}, links={frozenset(("nid005", "nid006")): 0.3})
    rr.write_run(tmp_path / "results", "screen", [screening_case(text)])
    sessions, _ = ingest([tmp_path / "results"])
    blocks = screening_blocks(sessions)
    tables = [b for b in blocks if isinstance(b, Table)]
    assert [t.header[0] for t in tables] == ["node", "pair"]
    assert tables[0].rows[0][:2] == ("nid007", "memory")
    assert tables[1].rows[0][0] == "nid005-nid006" and tables[1].rows[0][-1] == "link"
    (figure,) = [b for b in blocks if isinstance(b, Figure)]
    compute, links = figure.chart.panels
    assert [line.label for line in compute.lines] == ["DGEMM (all ranks)", "DGEMM (slowest rank)",
                                                      "STREAM triad (all ranks)"]
    assert len(compute.lines[0].xs) == 16 and [m.text for m in compute.marks] == ["nid007 (memory)"]
