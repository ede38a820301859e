"""scalebench.hpl.model: HPL's scalability model, its refinements, calibration and fits."""
import math
from dataclasses import replace

import pytest

from scalebench.errors import InputError
from scalebench.hpl import model
from scalebench.hpl.deck import hpl_flops
from scalebench.hpl.model import Case, Link, RankRate

RATE = RankRate(40.0, "test")
TEN_GBE = Link(6e-6, 1210e6, source="10GbE")
GBE = Link(50e-6, 115e6, source="GbE")
# The seed archetype's 36-node deck as `scalebench plan` gives it: 6 x 6, NB 192, one rank per node.
SEED_36 = Case(239616, 192, 6, 6, 36, 1, 36 * 44.8)


def test_published_formula_as_the_issue_computed_it():
    """One 40 Gflop/s rank per node on the seed's 36-node deck: 98.0% on 10GbE, 82.4% on GbE (the
    efficiency against the rank rate, as the page defines it)."""
    for link, expected in ((TEN_GBE, 0.980), (GBE, 0.824)):
        terms = model.published_time(SEED_36, RATE, link)
        assert terms.compute_s / terms.total_s == pytest.approx(expected, abs=0.0015)


def column_words(case: Case, share: float) -> float:
    """By hand, HPL_pdlaswp01T's spread and roll at P process rows: the spread sends the (P - 1) / P
    of U whose pivots lie elsewhere, the roll exchanges the (P - 1) / P a process lacks, each word of it
    1 / share one-way word times; and HPL_pdmxswp's log2 P exchanges of 2 NB + 4 words per column."""
    u = case.n**2 / (2 * case.q)
    pivots = case.n * math.log2(case.p) * (2 * case.nb + 4)
    return (case.p - 1) / case.p * (1 + 1 / share) * u + pivots / share


def test_the_refined_terms_are_hpls_own_counts_and_tend_to_the_published_ones():
    refined = model.predict(SEED_36, RATE, GBE).terms
    published = model.published_time(SEED_36, RATE, GBE)
    word = 8 / GBE.bandwidth_bps
    row = SEED_36.n**2 / (2 * SEED_36.p)
    # unmeasured, an exchange is one direction after the other, as the page counts it
    assert refined.bandwidth_s == pytest.approx(word * (row + column_words(SEED_36, 0.5)))
    assert refined.latency_s == pytest.approx(published.latency_s)
    many_rows = Case(2711040, 192, 64, 64, 4096, 1, 4096 * 44.8)
    pivots = many_rows.n * 6 * (2 * 192 + 4) * 2  # log2 64 exchanges a column, one way after the other
    column = model.predict(many_rows, RATE, GBE).terms.bandwidth_s / word - many_rows.n**2 / 128 - pivots
    assert column == pytest.approx(3 * many_rows.n**2 / 128, rel=0.02)  # the page's 3 at large P


def test_the_column_phase_follows_the_exchange_a_link_keeps():
    two_by_two = Case(13056, 384, 2, 2, 4, 1, 256.0)
    word = 8 / GBE.bandwidth_bps
    row = two_by_two.n**2 / 4
    for share in (1.0, 0.57, 0.5):
        link = replace(GBE, exchange_share=share)
        assert link.exchange_factor == pytest.approx(1 / share)
        assert model.predict(two_by_two, RATE, link).terms.bandwidth_s == pytest.approx(
            word * (row + column_words(two_by_two, share)))
    # at P = 2 a full-duplex spread and roll move one U where the page counts three
    duplex = model.predict(two_by_two, RATE, replace(GBE, exchange_share=1.0)).terms.bandwidth_s
    assert duplex < model.published_time(two_by_two, RATE, GBE).bandwidth_s * 0.6


def test_the_labs_100mb_two_by_two_communicates_for_less_than_its_measured_solve():
    """The lab's 4-node run on 100 Mbit/s (NetPIPE 5.34 us and 12.0 MB/s, hpcc's ring on 2 nodes
    6.1 MB/s each way: share 0.51) solved N = 13056 in 96 s; the page's communication alone was 114 s."""
    case = Case(13056, 384, 2, 2, 4, 1, 256.0)
    link = Link(5.34e-6, 12.0e6, exchange_share=6.1 / 12.0)
    assert model.published_time(case, RATE, link).bandwidth_s > 96
    assert sum(model.communication(case, link)) < 96


def test_a_one_row_grid_swaps_locally_and_a_one_column_grid_broadcasts_nothing():
    row = Case(56448, 192, 1, 2, 2, 1, 89.6)
    bandwidth = model.predict(row, RATE, GBE).terms.bandwidth_s
    assert bandwidth == pytest.approx(8 / 115e6 * 56448**2 / 2)  # the panel broadcast alone
    assert model.published_time(row, RATE, GBE).bandwidth_s == pytest.approx(bandwidth * 5 / 2)
    column = Case(56448, 192, 2, 1, 2, 1, 89.6)
    assert model.predict(column, RATE, GBE).terms.bandwidth_s == pytest.approx(8 / 115e6 * column_words(column, 0.5))


def test_one_rank_needs_no_link_and_reaches_its_rate():
    one = Case(10000, 192, 1, 1, 1, 1, 50.0)
    prediction = model.predict(one, RATE, None)
    assert prediction.efficiency == pytest.approx(40 / 50)
    assert prediction.losses == pytest.approx({"compute": 0.2, "bandwidth": 0.0, "latency": 0.0})


def test_losses_and_efficiency_sum_to_one_and_name_the_largest():
    prediction = model.predict(SEED_36, RATE, GBE)
    assert prediction.efficiency + sum(prediction.losses.values()) == pytest.approx(1.0)
    assert prediction.dominant_loss == "bandwidth"
    assert model.predict(SEED_36, RATE, TEN_GBE).dominant_loss == "compute"


def test_ranks_of_a_node_share_its_link_in_the_column_phase():
    one = Case(200000, 384, 4, 4, 16, 1, 1e4)
    sixteen = Case(200000, 384, 16, 16, 16, 16, 1e4)
    assert one.flows == (1, 1)
    assert sixteen.flows == (0, 16)  # a row is a node: the broadcast stays on it, every column leaves it
    assert Case(200000, 384, 8, 32, 16, 16, 1e4).flows == (1, 16)  # a row spans two nodes
    assert Case(200000, 384, 16, 4, 16, 16, 1e4).flows == (0, 16 * (1 - 3 / 15))  # 4 of a column's 16 on the node
    assert Case(200000, 384, 4, 4, 1, 16, 1e4).flows == (1, 1)  # one node: its own link
    loaded = model.predict(sixteen, RATE, GBE).terms.bandwidth_s
    unshared = model.published_time(sixteen, RATE, GBE).bandwidth_s
    assert loaded > unshared
    assert one.pivot_flows == 1  # one rank: its own exchanges
    assert sixteen.pivot_flows == 1  # a row per node: one rank of the panel's column
    assert Case(200000, 384, 16, 4, 16, 16, 1e4).pivot_flows == pytest.approx(4 * (1 - 3 / 15))  # 4 rows
    assert Case(200000, 384, 4, 8, 8, 4, 1e4).pivot_flows == 1  # half a row: at most one of the column
    assert Case(200000, 384, 4, 4, 1, 16, 1e4).pivot_flows == 1  # one node: its own link


def test_ranks_sharing_cores_compute_that_much_slower():
    case = Case(20000, 384, 2, 2, 4, 1, 256.0)
    shared = replace(case, ranks_per_core=2.0)
    assert model.predict(shared, RATE, GBE).terms.compute_s == pytest.approx(
        2 * model.predict(case, RATE, GBE).terms.compute_s)


def test_the_load_thins_the_bandwidth_beyond_two_nodes_only():
    link = replace(GBE, load_exponent=0.5)
    assert link.share(1) == link.share(2) == 1.0
    assert link.share(8) == pytest.approx(0.5)
    assert model.predict(SEED_36, RATE, link).efficiency < model.predict(SEED_36, RATE, GBE).efficiency


def test_rate_from_run_reproduces_the_run():
    case = Case(80000, 192, 2, 2, 4, 1, 179.2)
    rate = model.rate_from_run(case, 140.0, GBE, "a 4-node run")
    assert model.predict(case, rate, GBE).rmax_gflops == pytest.approx(140.0)
    assert model.rate_from_run(Case(8000, 192, 1, 1, 1, 1, 64.0), 45.7, None, "one").gflops == pytest.approx(45.7)


def test_a_rank_rate_follows_the_jobs_dgemm_and_a_dgemm_that_is_no_rate_is_named():
    one_node = model.rate_from_run(Case(6528, 384, 1, 1, 1, 1, 64.0), 60.0, None, "HPL on 1 node")
    shared = model.rate_at_dgemm(one_node, 80.0, 40.0, "4 ranks on 2 cores")  # HPL's share of DGEMM kept
    assert shared.gflops == pytest.approx(30.0)
    assert model.rate_at_dgemm(one_node, 80.0, 80.0, "same").gflops == pytest.approx(one_node.gflops)
    for base, job in ((0.0, 40.0), (80.0, float("nan")), (80.0, -1.0)):
        with pytest.raises(InputError, match="DGEMM"):
            model.rate_at_dgemm(one_node, base, job, "x")


def test_a_link_that_leaves_no_time_to_compute_is_named():
    slow = Link(1e-3, 1e4, source="a 10 kB/s link")
    with pytest.raises(InputError, match="leaves no time to compute"):
        model.rate_from_run(Case(80000, 192, 2, 2, 4, 1, 179.2), 140.0, slow, "a 4-node run")


@pytest.mark.parametrize("bad", [
    lambda: RankRate(0.0, "x"), lambda: RankRate(float("nan"), "x"), lambda: Link(-1e-6, 1e9),
    lambda: Link(1e-6, 0.0), lambda: Link(1e-6, 1e9, load_exponent=3.0), lambda: Link(1e-6, 1e9, exchange_share=0.0),
    lambda: Link(1e-6, 1e9, exchange_share=1.2), lambda: Link(1e-6, 1e9, exchange_share=float("nan")),
    lambda: Case(0, 192, 1, 1, 1, 1, 1.0),
    lambda: Case(1000, 192, 1, 1, 1, 1, -1.0), lambda: Case(1000, 192, 1, 1, 1, 1, 1.0, ranks_per_core=0.5),
])
def test_values_that_cannot_be_are_named_errors(bad):
    with pytest.raises(InputError):
        bad()


def test_load_exponent_fitted_from_loaded_bandwidths():
    points = [(n, 100e6 * (n / 2) ** -0.3) for n in (2, 4, 8, 16)]
    assert model.fit_load_exponent(points, 100e6) == pytest.approx(0.3)
    assert model.fit_load_exponent([(8, 100e6 * 4 ** -0.3)], 100e6) == pytest.approx(0.3)  # one count, against the pair
    assert model.fit_load_exponent([(2, 90e6)], 100e6) is None  # nothing beyond two nodes
    assert model.fit_load_exponent([(2, 50e6), (4, 60e6)], 100e6) == 0.0  # rising with load: noise


def test_load_exponent_fitted_from_runs_reproduces_them():
    link = replace(GBE, load_exponent=0.25)
    runs = [(c, model.predict(c, RATE, link).efficiency, RATE) for c in
            (Case(79872, 192, 2, 2, 4, 1, 179.2), Case(112896, 192, 2, 4, 8, 1, 358.4))]
    assert model.fit_load_from_runs(runs, GBE) == pytest.approx(0.25, abs=0.01)
    assert model.fit_load_from_runs(runs[:0], GBE) is None


def test_a_measured_ranks_share_of_rpeak_carries_over_to_another_layout():
    measured = RankRate(4.0, "1 core of 5 Gflop/s", of_peak=0.8)
    eight_threads = Case(80000, 192, 2, 2, 4, 1, 4 * 44.8)  # one rank of 8 cores per node
    assert measured.for_case(eight_threads).gflops == pytest.approx(0.8 * 44.8)
    assert RATE.for_case(eight_threads) is RATE  # a given rate is per rank, as given


def test_every_fabric_class_has_a_load_default_with_its_basis():
    from scalebench.site.fabric import fabric_classes

    loads = model.fabric_loads()
    assert set(loads) == set(fabric_classes())
    assert all(load.basis for load in loads.values())
    assert loads["infiniband-hdr"].exponent == 0
    assert model.default_load(None)[0] == 0.0


def test_a_load_file_without_a_class_or_with_a_bad_exponent_is_named(tmp_path):
    path = tmp_path / "fabric_load.yaml"
    path.write_text(model.LOAD_FILE.read_text().replace("exponent: 0.25", "exponent: 7"))
    with pytest.raises(InputError, match="ethernet-tcp.exponent"):
        model.fabric_loads(path)
    path.write_text("ethernet-tcp: {exponent: 0.1, basis: x}\n")
    with pytest.raises(InputError, match="no load default for fabric class"):
        model.fabric_loads(path)


def test_summary_sentence():
    assert model.summary_sentence("a", {2: 0.84, 4: 0.72, 16: 0.66, 36: 0.62}) == \
        "a: 84% at 2 nodes, 62% at 36; holds >= 80% to 2 nodes, below 70% from 16 nodes"
    assert model.summary_sentence("b", {2: 0.89, 36: 0.86}) == "b: 89% at 2 nodes, 86% at 36; holds >= 85% to 36 nodes"
    assert model.summary_sentence("c", {1: 0.5}) == "c: 50% at 1 node"


def test_efficiency_counts_hpls_flops():
    case = Case(1000, 100, 1, 1, 1, 1, 10.0)
    prediction = model.predict(case, RankRate(10.0, "x"), None)
    assert prediction.time_s == pytest.approx(hpl_flops(1000) / 10e9)
    assert math.isclose(prediction.efficiency, 1.0)
