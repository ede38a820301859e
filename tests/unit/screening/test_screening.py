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
from screening_outputs import interference_record, probe_text

FLAGS = {"screen_z": 3.5, "screen_min_deviation": 0.03, "screen_max_deviation": 0.15,
         "screen_link_min_deviation": 0.10, "screen_link_max_deviation": 0.30,
         "screen_latency_min_deviation": 0.10, "screen_latency_max_deviation": 0.30}
NODE_LIMITS = Thresholds(3.5, 0.03, 0.15)


def health(node, rmax, triad, system="cluster", foreign=None):
    """A NodeHealthCheck case; `foreign` cores of other processes recorded by its node probe, if given."""
    extra = {"interference": interference_record([node], {node: foreign})} if foreign is not None else None
    return rr.testcase("NodeHealthCheck", {"rmax": (rmax, "Gflop/s"), "rpeak_gflops": (2000.0, "Gflop/s"),
                                           "efficiency": (100 * rmax / 2000.0, "%"),
                                           "stream_triad": (triad, "GB/s")},
                       params={"scale": "1_node"}, system=system, partition="cpu", num_nodes=1, num_tasks=4,
                       nodelist=[node], extra=extra)


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


def test_a_node_behind_in_one_of_its_measurements_only_is_not_flagged(tmp_path):
    """A confirming round: every node measured twice; n2 was behind once (a transient), n3 both times."""
    first = {"n1": (100.0, 50.0), "n2": (70.0, 50.0), "n3": (60.0, 30.0), "n4": (101.0, 50.0), "n5": (99.0, 51.0)}
    second = {**first, "n2": (100.5, 50.0), "n3": (61.0, 30.5)}
    rr.write_run(tmp_path / "results", "one", [health(n, r, t) for n, (r, t) in first.items()])
    rr.write_run(tmp_path / "results", "two", [health(n, r, t) for n, (r, t) in second.items()])
    found, warnings = ingest([tmp_path / "results"])
    screened, _ = screens(found)
    assert not warnings and flagged_nodes(screened) == ["n3"]
    (rmax,) = [s for s in screened if s.figure == "rmax"]
    assert rmax.unconfirmed == {"n2": "inside its bounds in 1 of 2 measurements"}


def test_a_node_whose_own_interference_could_explain_it_is_not_decided(tmp_path, capsys):
    """One case per node, each in its own job: n2 ran beside 0.6 foreign cores, enough to take 30% of its
    HPL; n3 is far behind with no load. Neither drained but n3; n2 named with the cause and a re-screen."""
    cases = [health("n1", 100.0, 50.0, foreign=0.0), health("n2", 70.0, 50.0, foreign=0.6),
             health("n3", 40.0, 50.0, foreign=0.0), health("n4", 101.0, 50.0, foreign=0.05),
             health("n5", 99.0, 50.0, foreign=0.0)]
    rr.write_run(tmp_path / "results", "screen", cases)
    found, _ = ingest([tmp_path / "results"])
    screened, _ = screens(found)
    assert flagged_nodes(screened) == ["n3"]
    (rmax,) = [s for s in screened if s.figure == "rmax"]
    assert list(rmax.undecided) == ["n2"] and "foreign load 0.60 cores on n2" in rmax.undecided["n2"]
    assert main(["screen", str(tmp_path / "results")]) == 1
    out = capsys.readouterr().out
    assert "nodes to drain: n3\n" in out and "not decided (interference; re-screen, never drained): n2" in out
    assert "not decided, re-screen: foreign load 0.60 cores on n2" in out


def test_a_load_beside_every_measurement_explains_no_node(tmp_path):
    """Every case ran beside 0.8 foreign cores (a build on the machine all along): the median peer was
    slowed alike, so n3, far behind, is flagged; n2's extra 0.6 beside its own case leaves it undecided."""
    cases = [health("n1", 100.0, 50.0, foreign=0.8), health("n2", 70.0, 50.0, foreign=1.4),
             health("n3", 40.0, 50.0, foreign=0.8), health("n4", 101.0, 50.0, foreign=0.8),
             health("n5", 99.0, 50.0, foreign=0.85)]
    rr.write_run(tmp_path / "results", "screen", cases)
    found, _ = ingest([tmp_path / "results"])
    screened, _ = screens(found)
    (rmax,) = [s for s in screened if s.figure == "rmax"]
    assert flagged_nodes(screened) == ["n3"] and list(rmax.undecided) == ["n2"]
    assert "foreign load 1.40 cores on n2 (its peers 0.80" in rmax.undecided["n2"]


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


def screening_case(text, completed=1.0e9, nodes=NIDS, interference=None, **kwargs):
    kwargs.setdefault("num_tasks", 64 * len(nodes))
    return rr.testcase("ScreeningCheck", {"nodes": (float(len(nodes)), "nodes"), "flagged_nodes": (0.0, "nodes")},
                       params={"chunk": 1}, system="cluster", partition="cpu", environ="ompi", stack="ompi",
                       num_nodes=len(nodes), nodelist=list(nodes),
                       extra={"probe_output": text, "screened_nodes": hostlist(nodes),
                              "job_completion_time_unix": completed, "job_submit_time": completed - 60,
                              **({"interference": interference} if interference else {})}, **kwargs)


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


def test_what_interference_could_explain_is_not_decided_never_drained(tmp_path, capsys):
    """nid003 30% behind beside its own 0.6 foreign cores (one rank a node): 'not decided', never in the
    drain list, and screen exits 0 (nothing flagged) while naming it with the command to re-screen."""
    text = probe_text(NIDS, ranks=1, dgemm={"nid003": 0.7})
    rr.write_run(tmp_path / "results", "screen", [screening_case(
        text, num_tasks=len(NIDS), interference=interference_record(NIDS, {"nid003": 0.6}))])
    assert main(["screen", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out
    assert "nodes to drain: none" in out and "not decided (interference; re-screen, never drained): nid003" in out
    assert "not decided: nid003: foreign load 0.60 cores on nid003 (its peers 0.00" in out
    assert "-S screen_nodes='nid[001-004]' -r" in out  # nid003 beside three peers
    assert main(["screen", str(tmp_path / "results"), "--hostlist"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "\n" and "not decided: re-screen" in captured.err
    sessions, _ = ingest([tmp_path / "results"])
    (section,) = [b for b in screening_blocks(sessions) if isinstance(b, Table) and b.header[0].startswith("not decided")]
    assert section.rows[0][0] == "nid003"


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
