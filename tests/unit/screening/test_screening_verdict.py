"""ScreeningCheck's verdicts: each node and pair against its peers, and the suspected cause; its probe's
output read as untrusted text."""
import re

import pytest

from scalebench.errors import InputError
from scalebench.screening.probe import load_settings, parse_probe, probe_lines
from scalebench.screening.verdict import judge, summary
from scalebench.site.thresholds import report_flags
from screening_outputs import interference_record, probe_text, rounds_of

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
    (lambda t: t.replace("version=2", "version=3"), "version 3, this scalebench reads versions 1 and 2"),
    (lambda t: re.sub(r"dgemm_gflops_by_pass=\S+", "dgemm_gflops_by_pass=1,2", t, count=1), "has 2 value"),
    (lambda t: re.sub(r"latency_us_by_pass=\S+", "latency_us_by_pass=1,inf,2", t, count=1), "is not a number|is not above"),
    (lambda t: re.sub(r" stream_gbs_by_pass=\S+", "", t, count=1), "without stream_gbs_by_pass"),
    (lambda t: t.replace("passes=3", "passes=0"), "passes=0 is not a whole number from 1"),
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


def test_a_version_1_output_of_an_older_report_is_read_and_judged_as_it_was():
    text = probe_text(NAMES, dgemm={"nid0003": 0.6}, version=1)
    assert "_by_pass" not in text
    result = parse_probe(text)
    assert result.passes == 0 and all(not n.by_pass for n in result.nodes)
    verdict = judge(result, report_flags())
    assert causes(verdict) == {"nid0003": "compute"}
    assert any("version 1" in note for note in verdict.notes)
    with pytest.raises(InputError, match="unknown dgemm_gflops_by_pass"):
        parse_probe(text.replace(" windows=11", " windows=11 dgemm_gflops_by_pass=1,2,3", 1))


def test_every_pass_is_read_as_a_measurement_of_its_own():
    result = parse_probe(probe_text(NAMES[:4], dgemm={"nid0002": (0.5, 1.0, 1.0)}))
    assert result.passes == 3
    (second,) = [n for n in result.in_pass(0).nodes if n.name == "nid0002"]
    assert 1400 < second.dgemm_gflops < 1600 and second.by_pass == {}
    assert [round(p.latency_us) for p in result.in_pass(2).pairs] == [2] * len(result.pairs)


# --- confirmation: a flag must hold in every pass, and interference must not explain it --------------

def test_a_node_behind_in_some_passes_only_is_a_transient_not_a_flag():
    """Behind over the whole job (two passes of three), inside its bounds in the third: not flagged."""
    verdict = verdict_of(probe_text(NAMES, dgemm={"nid0003": (0.6, 0.6, 1.0)}, stream={"nid0011": (1.0, 0.5, 0.5)}))
    assert verdict.nodes == () and verdict.undecided == ()
    assert "nid0003 DGEMM (all ranks) -39%: outside its bounds in 2 of 3 passes" in verdict.unconfirmed
    assert any(u.startswith("nid0011 STREAM") for u in verdict.unconfirmed)


def test_a_slow_link_in_every_pass_is_flagged_a_passing_one_is_not():
    ring = rounds_of(NAMES)[0]
    slow, passing = frozenset(ring[3]), frozenset(ring[5])
    verdict = verdict_of(probe_text(NAMES, links={slow: 0.3, passing: (0.3, 0.3, 1.0)},
                                    latency={frozenset(ring[7]): (6.0, 6.0, 1.0)}))
    assert [frozenset(v.pair.nodes) for v in verdict.flagged_links()] == [slow]
    assert {u.split()[0] for u in verdict.unconfirmed} == {"-".join(sorted(passing)), "-".join(ring[7])}
    assert verdict.nodes == ()


def test_a_deviation_the_nodes_own_foreign_load_could_explain_is_not_decided():
    """One rank per node (the lab's): 0.6 foreign cores on nid0003 alone could take 60% of its rank, so
    its DGEMM 30% behind is 'not decided'; 70% behind is more than the load explains, and is flagged."""
    names = NAMES[:8]
    record = interference_record(names, {"nid0003": 0.6, "nid0005": 0.6})
    verdict = judge(parse_probe(probe_text(names, ranks=1, dgemm={"nid0003": 0.7, "nid0005": 0.3})), report_flags(),
                    record)
    assert causes(verdict) == {"nid0005": "compute"}
    (undecided,) = verdict.undecided
    assert undecided.name == "nid0003" and verdict.undecided_nodes() == ["nid0003"]
    assert undecided.why.startswith("foreign load 0.60 cores on nid0003 (its peers 0.00; stress[4242] 0.90)")
    assert "could explain DGEMM (all ranks) -30%" in undecided.why


def test_a_load_every_node_shares_explains_nothing():
    """The lab's nodes share one machine: a CPU hog beside them shows on every node alike, and cancels
    out as it does in their figures; the slowed node and the slow NIC are flagged still."""
    names = NAMES[:6]
    text = probe_text(names, ranks=1, dgemm={"nid0003": 0.3}, nic={"nid0005": 0.03})
    verdict = judge(parse_probe(text), report_flags(), interference_record(names, everywhere=1.0))
    assert causes(verdict) == {"nid0003": "compute", "nid0005": "NIC"} and verdict.undecided == ()


def test_a_summed_figure_of_many_ranks_is_not_explained_by_one_busy_core():
    """64 ranks: 0.6 foreign cores take at most 1% of the node's summed DGEMM, not 30%."""
    record = interference_record(NAMES, {"nid0003": 0.6})
    verdict = judge(parse_probe(probe_text(NAMES, dgemm={"nid0003": 0.7})), report_flags(), record)
    assert causes(verdict) == {"nid0003": "compute"} and verdict.undecided == ()


def test_a_slow_link_beside_a_busy_node_is_not_decided():
    ring = rounds_of(NAMES)[0]
    slow = frozenset(ring[3])
    record = interference_record(NAMES, {ring[3][0]: 0.9})
    verdict = judge(parse_probe(probe_text(NAMES, ranks=1, latency={slow: 3.0})), report_flags(), record)
    assert verdict.flagged_links() == [] and [u.name for u in verdict.undecided] == ["-".join(ring[3])]
    assert verdict.undecided_nodes() == []


def test_a_latency_beside_a_load_every_node_shares_is_not_decided():
    """A round trip waits for a time slice whenever another process holds its core: a load on every node
    alike cancels for rates, but not for which pair's latency it hit. Without the load, it is flagged."""
    ring = rounds_of(NAMES)[0]
    slow = frozenset(ring[3])
    text = probe_text(NAMES, ranks=1, latency={slow: 4.0}, dgemm={"nid0009": 0.5})
    verdict = judge(parse_probe(text), report_flags(), interference_record(NAMES, everywhere=1.0))
    assert [u.name for u in verdict.undecided] == ["-".join(ring[3])] and verdict.flagged_links() == []
    assert causes(verdict) == {"nid0009": "compute"}  # the rate still cancels the shared load
    quiet = judge(parse_probe(text), report_flags(), interference_record(NAMES, everywhere=0.1))
    assert [frozenset(v.pair.nodes) for v in quiet.flagged_links()] == [slow] and quiet.undecided == ()


def test_nodes_the_record_does_not_detail_are_bounded_by_those_it_does():
    """The record details its 8 worst nodes: another node had at most the least foreign load of those,
    and so may have had enough to explain it (not decided, 'up to'); below the noisy threshold, nothing."""
    busy = {name: 0.5 for name in NAMES[20:28]}
    record = interference_record(NAMES, busy, detailed=8)
    assert "nid0003" not in record["per_node"]
    verdict = judge(parse_probe(probe_text(NAMES, ranks=1, dgemm={"nid0003": 0.75})), report_flags(), record)
    assert [u.name for u in verdict.undecided] == ["nid0003"] and "up to 0.50 cores" in verdict.undecided[0].why
    quiet = interference_record(NAMES, {name: 0.1 for name in NAMES[20:28]}, detailed=8)
    verdict = judge(parse_probe(probe_text(NAMES, ranks=1, dgemm={"nid0003": 0.75})), report_flags(), quiet)
    assert causes(verdict) == {"nid0003": "compute"}


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
