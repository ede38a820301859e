"""The seed study's finding, predicted: on its own 36-node cluster (the shipped archetype: 8 cores and
one rank per node, the plan's decks at the study's node counts) HPL's efficiency stays flat on its
10 Gigabit Ethernet and falls steadily on commodity Gigabit Ethernet over TCP.

Figures:
- 10GbE: the seed cluster's own, 6.0 us and 1210 MB/s (the study's ping-pong over its RDMA 10GbE);
- GbE over TCP: MPICH's osu_latency and osu_bw over a Gigabit Ethernet link, 24.6 us at 8 bytes and
  116 MB/s (the line rate of GbE, reached from 16 KiB on), published in the OSU table of
  gist.github.com/jfgrimm/3af692a5475bdd4ed836b5a18197a209 (the "MPICH" columns, beside Open MPI and
  MPICH over InfiniBand on the same nodes);
- one rank of 40 Gflop/s per node, the rate the issue computed with (4 dual-core Opterons of 2.8 GHz
  and 2 flop/cycle: 44.8 Gflop/s of Rpeak per node);
- under load, both take the archetype's declared fabric class, ethernet-tcp, and its default
  (site_configs/fabric_load.yaml: an assumption, stated there). The published formula alone keeps GbE
  nearly flat (the issue computed 85.2% at 2 nodes and 82.4% at 36); the fall comes from the link's
  loaded bandwidth and the exact grid terms, and its size rests on that default.
"""
from pathlib import Path

import pytest

from scalebench import paths
from scalebench.predict import Given, predict_cases
from scalebench.site_plan import Filters, plan_cases, site_specs
from scalebench.site.siteconf import site_systems

SEED = paths.SITE_CONFIGS / "sites" / "archetypes" / "seed-10gbe.yaml"
STUDY_NODES = [2, 4, 6, 8, 10, 12, 16, 18, 20, 24, 25, 28, 30, 32, 36]


def curve(latency_us: float, bandwidth_gbs: float) -> dict[int, float]:
    cases = plan_cases(*site_specs(site_systems(Path(SEED))), filters=Filters(names=("HPLCheck",)))
    predicted, _ = predict_cases(cases, Given(40.0, latency_us, bandwidth_gbs))
    return {p.prediction.case.nodes: 100 * p.prediction.efficiency for p in predicted if p.prediction}


@pytest.fixture(scope="module")
def ten_gbe():
    return curve(6.0, 1.210)


@pytest.fixture(scope="module")
def gbe():
    return curve(24.6, 0.116)


def test_every_node_count_of_the_study_is_predicted(ten_gbe, gbe):
    assert sorted(ten_gbe) == sorted(gbe) == STUDY_NODES


def test_on_10gbe_it_stays_within_a_few_points_of_two_nodes(ten_gbe):
    assert all(abs(ten_gbe[n] - ten_gbe[2]) <= 3.5 for n in STUDY_NODES), ten_gbe


def test_on_gbe_over_tcp_it_falls_steadily(gbe, ten_gbe):
    # Steadily: never more than a point above any smaller count (grid shapes wobble: 3 x 6 at 18
    # nodes beats 4 x 4 at 16), and by 36 nodes far below where it started and below 10GbE.
    for i, n in enumerate(STUDY_NODES):
        assert all(gbe[n] <= gbe[m] + 2.0 for m in STUDY_NODES[:i]), (n, gbe)
    assert gbe[36] <= gbe[2] - 15
    assert gbe[8] < gbe[2] and gbe[36] < gbe[8]
    assert all(gbe[n] < ten_gbe[n] for n in STUDY_NODES)
