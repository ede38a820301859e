"""Expected against measured (scalebench.reporting.expected and the report's HPL section): the model
calibrated on a run's own results, beside every HPL row, flagging a configuration below it, drawing
its curve, and serving the of_model acceptance criterion."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import reframe_reports as rr
from scalebench.errors import InputError
from scalebench.hpl import model
from scalebench.reporting import acceptance, expected, series
from scalebench.reporting.document import Chart, Table
from scalebench.reporting.hpl_table import hpl_lines, hpl_terminal_table, model_expectations
from scalebench.report import build_document
from scalebench.reporting.store import load
from scalebench.reporting.table import figure_units

RATE = 40.0  # Gflop/s of one rank, one rank per node
RPEAK_NODE = 50.0
LINK = model.Link(20e-6, 100e6)  # 20 us, 100 MB/s; no fall under load (no fabric declared)
DECKS = {1: (20000, 1, 1), 2: (28224, 1, 2), 4: (40000, 2, 2), 8: (56448, 2, 4)}  # nodes -> N, P, Q
NB = 192


def _hpl_case(nodes: int, efficiency: float) -> dict:
    n, p, q = DECKS[nodes]
    rpeak = RPEAK_NODE * nodes
    deck = {"n": n, "nb": NB, "p": p, "q": q, "nodes": nodes, "ranks_per_node": 1, "threads_per_rank": 1}
    return rr.testcase("HPLCheck", {"rmax": (efficiency * rpeak, "Gflop/s"), "rpeak_gflops": (rpeak, "Gflop/s"),
                                    "efficiency": (100 * efficiency, "%")},
                       params={"scale": f"{nodes}_node" if nodes == 1 else f"{nodes}_nodes"}, system="cluster",
                       partition="cpu", stack="tcp", num_nodes=nodes, num_tasks=nodes,
                       nodelist=[f"n{i}" for i in range(nodes)], extra={"hpl_deck": deck})


def _netpipe() -> dict:
    sizes = [2 ** k for k in range(24)]
    figures = {f"bandwidth_{s}": (s / (LINK.latency_s * 1e6 + s / (LINK.bandwidth_bps / 1e6)), "MB/s") for s in sizes}
    figures.update({f"latency_{s}": (LINK.latency_s * 1e6 + s / (LINK.bandwidth_bps / 1e6), "us") for s in sizes},
                   min_latency=(LINK.latency_s * 1e6, "us"), peak_bandwidth=(max(v for v, _ in figures.values()), "MB/s"))
    return rr.testcase("NetPIPECheck", figures, params={"placement": "inter_node"}, system="cluster", partition="cpu",
                       stack="tcp", num_nodes=2, num_tasks=2, nodelist=["n0", "n1"])


def _table(*runs):
    return load(list(runs), index=False).table


def _predicted(nodes: int) -> float:
    n, p, q = DECKS[nodes]
    case = model.Case(n, NB, p, q, nodes, 1, RPEAK_NODE * nodes)
    return model.predict(case, model.RankRate(RATE, "test"), LINK).efficiency


@pytest.fixture()
def run(tmp_path):
    # 2 and 4 nodes a little below the model (within 10%), 8 nodes 20% below it: a bad switch port.
    measured = {1: RATE / RPEAK_NODE, 2: 0.97 * _predicted(2), 4: 0.95 * _predicted(4), 8: 0.80 * _predicted(8)}
    return rr.write_run(tmp_path / "results", "cluster-run", [*(_hpl_case(n, e) for n, e in measured.items()), _netpipe()])


def test_each_row_gets_the_models_expectation_and_the_slow_one_a_flag(run):
    table = _table(run)
    lines = {line.nodes: line for line in hpl_lines(table)}
    assert lines[1].expected.status == "calibration"
    for nodes in (2, 4, 8):
        assert lines[nodes].expected.efficiency == pytest.approx(100 * _predicted(nodes), rel=1e-3), nodes
    assert [lines[n].expected.status for n in (2, 4, 8)] == ["ok", "ok", "below"]
    text = hpl_terminal_table(table)
    assert text.count(expected.BELOW_MODEL) == 1 and "as expected" in text and "calibration" in text


def test_the_asymptotic_bandwidth_is_the_slope_of_the_largest_messages():
    """A shaper lets its burst through at full speed: the times of large messages are offset by it,
    their slope is the link's rate (here 12.5 MB/s behind a 64 KiB burst at 1 GB/s, after 20 us)."""
    times = {s: 20 + min(s, 65536) / 1000 + max(0, s - 65536) / 12.5 for s in (2 ** k for k in range(24))}
    assert expected._slope_bandwidth(times) == pytest.approx(12.5)
    bandwidth_at_largest = 2 ** 23 / times[2 ** 23]
    assert bandwidth_at_largest > 12.59  # the burst still shows at 8 MiB
    assert expected._slope_bandwidth({1024: 5.0}) is None and expected._slope_bandwidth({1: 5.0, 2: 4.0}) is None


def test_the_calibration_takes_the_smallest_run_and_the_ping_pong(run):
    table = _table(run)
    points = [line.point() for line in hpl_lines(table)]
    calibration = expected.calibrations(expected.link_cases(table), points)[("cluster:cpu", "tcp")]
    assert calibration.rate.gflops == pytest.approx(RATE)
    assert calibration.inter.latency_s == pytest.approx(LINK.latency_s)
    assert calibration.inter.bandwidth_bps == pytest.approx(LINK.bandwidth_bps, rel=0.01)  # the largest message's
    assert calibration.inter.load_exponent == 0 and "no fabric class declared" in calibration.inter.source


def test_the_report_flags_it_and_draws_the_models_curve(run):
    loaded = load([run], index=False)
    blocks = build_document(loaded.table, loaded.warnings)
    charts = [b.chart for b in blocks if hasattr(b, "chart") and isinstance(b.chart, Chart)]
    efficiency = next(panel for chart in charts for panel in chart.panels if panel.title.startswith("Efficiency"))
    model_line = next(line for line in efficiency.lines if line.style == "model")
    assert model_line.label == "tcp (model)" and model_line.xs == (1, 2, 4, 8)
    assert model_line.ys[1:] == pytest.approx([100 * _predicted(n) for n in (2, 4, 8)], rel=1e-3)
    text = "\n".join(str(b) for b in blocks)
    assert "cluster:cpu tcp 8_nodes: below model: look at the fabric or the nodes" in text
    hpl_table = next(b for b in blocks if isinstance(b, Table) and "Expected" in b.header)
    assert hpl_table.header.index("Expected") == hpl_table.header.index("Efficiency") + 1


def test_of_model_acceptance_fails_the_slow_scale_only(run, tmp_path):
    table = _table(run)
    path = tmp_path / "acceptance.yaml"
    path.write_text("criteria:\n  - {benchmark: HPLCheck, figure: efficiency, metric: of_model, min: 90%}\n")
    criteria = acceptance.load(path, figure_units(table))
    verdicts = acceptance.evaluate(criteria, series.build(table), model_expectations(table))
    assert {v.at: v.status for v in verdicts} == {"2 node(s)": "PASS", "4 node(s)": "PASS", "8 node(s)": "FAIL"}
    assert acceptance.evaluate(criteria, series.build(table))[0].status == "NO DATA"  # nothing computed


def test_of_model_is_for_hpl_efficiency_only(run, tmp_path):
    table = _table(run)
    path = tmp_path / "acceptance.yaml"
    path.write_text("criteria:\n  - {benchmark: HPLCheck, figure: dgemm_ceiling, metric: of_model, min: 90%}\n")
    with pytest.raises(InputError, match="of_model compares with HPL's scalability model"):
        acceptance.load(path, figure_units(table))


def test_without_a_ping_pong_nothing_is_expected_and_the_reason_is_given(tmp_path):
    run = rr.write_run(tmp_path / "results", "no-link", [_hpl_case(1, 0.8), _hpl_case(2, 0.7)])
    lines = {line.nodes: line for line in hpl_lines(_table(run))}
    assert lines[2].expected.status == "none" and "no inter-node latency and bandwidth" in lines[2].expected.note


def test_a_load_fitted_to_rings_thins_the_expectation(run, tmp_path):
    rings = [rr.testcase("HPCCNetworkCheck", {"random_ring_bandwidth": (b, "GB/s"), "random_ring_latency": (30.0, "us")},
                         params={}, system="cluster", partition="cpu", stack="tcp", num_nodes=n, num_tasks=n)
             for n, b in ((2, 0.05), (8, 0.025))]
    loaded = rr.write_run(tmp_path / "more", "rings", rings)
    lines = {line.nodes: line for line in hpl_lines(_table(run, loaded))}
    k = 0.5  # the ring's per-node bandwidth halves from 2 to 8 nodes
    n, p, q = DECKS[8]
    slower = model.predict(model.Case(n, NB, p, q, 8, 1, RPEAK_NODE * 8), model.RankRate(RATE, "t"),
                           replace(LINK, load_exponent=k)).efficiency
    assert lines[8].expected.efficiency == pytest.approx(100 * slower, rel=1e-3)
    assert lines[8].expected.status == "ok"  # the slow 8-node run is what a loaded network gives



def test_a_ring_on_two_one_rank_nodes_gives_the_exchange_share(run, tmp_path):
    """hpcc's ring on 2 one-rank nodes is an exchange: each rank sends to the other while receiving.
    60 MB/s each way on a 100 MB/s pair is a share of 0.6, and the 4-node (2 x 2) expectation moves
    with it; a ring of 4 ranks on 2 nodes is not such an exchange and is not read as one."""
    def ring(nodes: int, tasks: int, gbs: float) -> dict:
        figures = {"random_ring_bandwidth": (gbs, "GB/s"), "random_ring_latency": (30.0, "us")}
        return rr.testcase("HPCCNetworkCheck", figures, params={}, system="cluster", partition="cpu", stack="tcp",
                           num_nodes=nodes, num_tasks=tasks)

    assert expected.exchange_ring([]) is None
    exchange = rr.write_run(tmp_path / "exchange", "exchange", [ring(2, 2, 0.06)])
    lines = {line.nodes: line for line in hpl_lines(_table(run, exchange))}
    n, p, q = DECKS[4]
    by_hand = model.predict(model.Case(n, NB, p, q, 4, 1, RPEAK_NODE * 4), model.RankRate(RATE, "t"),
                            replace(LINK, exchange_share=0.6)).efficiency
    assert lines[4].expected.efficiency == pytest.approx(100 * by_hand, rel=1e-3)
    plain = {line.nodes: line for line in hpl_lines(_table(run))}
    assert lines[4].expected.efficiency > plain[4].expected.efficiency  # 0.6 each way beats one way at a time
    assert lines[2].expected.efficiency == pytest.approx(plain[2].expected.efficiency)  # 1 x 2: no exchange
    many = rr.write_run(tmp_path / "many", "many", [ring(2, 4, 0.03)])
    assert expected.exchange_ring(expected.link_cases(_table(many))) is None
    assert expected.with_exchange(LINK, 150e6, "faster than the pair").exchange_share == 1.0  # noise: full duplex
    assert expected.with_exchange(LINK, None, "none") is LINK


def test_predict_from_the_results_uses_the_same_calibration(run, capsys):
    from scalebench.cli import main

    site = Path(__file__).resolve().parents[3] / "site_configs" / "sites" / "archetypes" / "seed-10gbe.yaml"
    assert main(["predict", str(site), "--from", str(run), "-p", "tcp"]) == 2  # the seed has no stack tcp
    assert "no case matches the filters" in capsys.readouterr().err


RECORDED = Path(__file__).resolve().parents[2] / "data" / "reframe" / "local_hpl_netpipe_run_report.json"


def test_the_embedded_defaults_run_gets_its_expectation_from_its_own_figures():
    """A real `make run`-like run (HPL at 1 core and the whole node, NetPIPE and hpcc within the node):
    the whole node is expected at the 1-core rank rate scaled by the two jobs' DGEMM ceilings, plus
    the 1 x 2 grid's panel broadcast over shared memory as the stack's NetPIPE measured it."""
    loaded = load([RECORDED], index=False)
    assert loaded.warnings == []
    lines = {line.scale: line for line in hpl_lines(loaded.table)}
    core, node = lines["1_core"], lines["1_node"]
    netpipe = next(c for c in expected.link_cases(loaded.table) if c.benchmark == "NetPIPECheck"
                   and c.stack == "openmpi-sm")
    shm = model.Link(netpipe.figure("min_latency") * 1e-6, expected.asymptotic_bandwidth([netpipe], "intra_node") * 1e6)
    rate = core.rmax * (node.dgemm / 2) / core.dgemm  # the 1-core rate, as fast as this job's DGEMM
    n, p, q = node.n, *(int(v) for v in node.grid.split(" x "))
    by_hand = model.predict(model.Case(n, node.nb, p, q, 1, 2, node.rpeak), model.RankRate(rate, "by hand"), shm)
    assert core.expected.status == "calibration"
    assert node.expected.efficiency == pytest.approx(100 * by_hand.efficiency, rel=1e-6)
    assert node.expected.status == "ok"  # measured 86.1%, expected 87.6%
    blocks = build_document(loaded.table, [])
    efficiency = next(panel for b in blocks if hasattr(b, "chart") for panel in b.chart.panels
                      if panel.title.startswith("Efficiency"))
    model_line = next(line for line in efficiency.lines if line.style == "model")
    assert model_line.xs == (1, 2) and model_line.ys[1] == pytest.approx(node.expected.efficiency)  # over cores
