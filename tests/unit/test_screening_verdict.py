"""ScreeningCheck's verdicts: each node and pair against its peers, and the suspected cause; its probe's
output read as untrusted text."""
import re

import pytest

from scalebench.errors import InputError
from scalebench.screening.probe import load_settings, parse_probe, probe_lines
from scalebench.screening.verdict import judge, summary
from scalebench.site.thresholds import report_flags
from screening_outputs import probe_text, rounds_of

NAMES = [f"nid{i:04d}" for i in range(1, 33)]


def verdict_of(text):
    return judge(parse_probe(text), report_flags())


def causes(verdict):
    return {v.node: v.cause for v in verdict.nodes}


def test_a_healthy_machine_flags_nothing():
    verdict = verdict_of(probe_text(NAMES, noise=0.04))
    assert verdict.nodes == () and verdict.links == () and verdict.notes == ()


def test_each_fault_is_named_with_its_cause():
    """A slow CPU, slow memory, a slow NIC (every pair of the node) and one slow link between two good
    nodes; nothing else."""
    slow_link = frozenset(rounds_of(NAMES)[0][3])  # a ring pair: nid0007-nid0008
    text = probe_text(NAMES, dgemm={"nid0003": 0.7}, stream={"nid0011": 0.6}, nic={"nid0020": 0.25},
                      links={slow_link: 0.3})
    verdict = verdict_of(text)
    assert causes(verdict) == {"nid0003": "compute", "nid0011": "memory", "nid0020": "NIC"}
    assert [tuple(v.pair.nodes) for v in verdict.flagged_links()] == [tuple(sorted(slow_link))]
    # the NIC's pairs are slow too, but explained by it, not blamed on each link
    explained = [v for v in verdict.links if v.explained_by]
    assert all(v.explained_by == "nid0020 (NIC)" for v in explained)


def test_a_slow_cpu_is_the_cause_even_when_its_memory_and_links_are_slow_too():
    verdict = verdict_of(probe_text(NAMES, dgemm={"nid0005": 0.4}, stream={"nid0005": 0.4}, nic={"nid0005": 0.4}))
    (node,) = verdict.nodes
    assert node.cause == "compute"
    assert {figure.name for figure, _ in node.scores} == {"dgemm_gflops", "dgemm_min_rank_gflops", "stream_gbs",
                                                           "link_bandwidth_mbs"}
    assert verdict.flagged_links() == []


def test_faster_nodes_are_no_stragglers():
    verdict = verdict_of(probe_text(NAMES, dgemm={"nid0001": 1.4}, nic={"nid0002": 1.5}))
    assert verdict.nodes == () and verdict.flagged_links() == []


def test_summary_counts_and_medians():
    figures = summary(verdict_of(probe_text(NAMES, dgemm={"nid0003": 0.5})))
    assert figures["nodes"] == (32.0, "nodes") and figures["flagged_nodes"] == (1.0, "nodes")
    assert figures["flagged_links"][0] == 0
    assert 2900 < figures["dgemm_median_gflops"][0] < 3100 and figures["probe_time"] == (13.5, "s")


def test_three_nodes_are_compared_two_are_a_note():
    assert verdict_of(probe_text(NAMES[:3])).notes == ()
    notes = verdict_of(probe_text(NAMES[:2], random_rounds=0)).notes
    assert any("fewer than 3" in note for note in notes)


def test_probe_lines_leave_the_mpi_out():
    text = "[n1:1234] btl tcp: connected\n" + probe_text(NAMES[:4]) + "srun: job done\n"
    assert probe_lines(text).splitlines()[0].startswith("screen-probe ")
    assert parse_probe(probe_lines(text)) == parse_probe(text)


@pytest.mark.parametrize("change, message", [
    (lambda t: t.replace("end compute_s=5.4 links_s=8.1\n", ""), "cut short"),
    (lambda t: t.replace("version=1", "version=2"), "version 2"),
    (lambda t: t.split("\n", 1)[1], "before the screen-probe line"),
    (lambda t: t.replace("dgemm_gflops=", "dgemm_gflops=nan", 1), "is not a number"),
    (lambda t: t.replace("stream_gbs=", "stream_gbs=-", 1), "is not above 0"),
    (lambda t: re.sub(r"bandwidth_mbs=\S+", "bandwidth_mbs=1e300", t, count=1), "is not above 0 to 1e.08"),
    (lambda t: t.replace(" windows=11", " windows=11 colour=red", 1), "unknown colour"),
    (lambda t: t.replace(" windows=11", "", 1), "without windows"),
    (lambda t: t.replace("name=nid0002", "name=nid0001"), "node nid0001 twice"),
    (lambda t: t.replace("name=nid0002", "name=n$(id)"), "is not a node name"),
    (lambda t: t.replace("a=nid0001 b=nid0002", "a=nid0001 b=nid0001"), "with itself"),
    (lambda t: t.replace("a=nid0001 b=nid0002", "a=nid0001 b=ghost"), "ghost, which is no node"),
    (lambda t: t.replace("kind=ring", "kind=star", 1), "neither ring nor random"),
    (lambda t: t.replace("nodes=4", "nodes=5"), "screened 5 node(s) but reported 4"),
    (lambda t: t + t, "a screen-probe line after the end line"),
])
def test_a_probe_output_that_cannot_be_is_a_named_error(change, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_probe(change(probe_text(NAMES[:4])))


def test_no_probe_output_at_all():
    with pytest.raises(InputError, match="no screen-probe line"):
        parse_probe("srun: error: task 0 launch failed\n")


def test_the_shipped_settings_bound_the_job_whatever_the_node_count():
    settings = load_settings()
    assert [settings.rounds(n) for n in (1, 2, 3, 4, 5)] == [0, 1, 5, 4, 5]
    predicted = {n: settings.predicted_s(n) for n in (3, 4, 512, 6144, 100_001)}
    assert predicted[4] == predicted[512] == predicted[6144] < predicted[3] == predicted[100_001] <= settings.time_limit_s
    assert settings.time_limit_s <= 600
    args = settings.args()
    assert args[:2] == ["--dgemm-n", "1024"] and "--stream-n" in args and "2097152" in args


def test_the_lab_clusters_thresholds_load_as_a_flags_file():
    """tests/data/screening/shared-host-flags.yaml is read by the lab cluster's screening test, which
    only runs under the lock: a key added to the flags must reach it too."""
    from conftest import REPO

    flags = report_flags(REPO / "tests" / "data" / "screening" / "shared-host-flags.yaml")
    assert flags["screen_max_deviation"] > report_flags()["screen_max_deviation"]  # wider on a shared host
