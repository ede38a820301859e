"""Energy figures in the report, `accept` and `compare`: the HPL table's Gflop/s/W column, the energy
subsection and its plot, a floor on Gflop/s per watt, stacks ranked by it, and "no energy source"."""
import pytest

import reframe_reports as rr
from scalebench.cli import main
from scalebench import report
from scalebench.reporting import acceptance, bakeoff, document, hpl_table, series, store as results
from scalebench.reporting.hpl_table import hpl_terminal_table
from scalebench.reporting.table import figure_units

# Gflop/s per watt of the core phase per node count: ucx solves faster at the same power.
POWER_KW = {1: 0.5, 2: 1.0, 4: 2.0}


def _energy_cases(stack, rmax_by_nodes, core=True):
    cases = rr.hpl(stack, rmax_by_nodes)
    for case, (nodes, rmax) in zip(cases, rmax_by_nodes.items()):
        figures = {"job_energy": (60 * POWER_KW[nodes] * 0.9, "kJ"), "job_power": (POWER_KW[nodes] * 0.9, "kW"),
                   "job_gflops_per_watt": (rmax / (POWER_KW[nodes] * 900), "Gflop/s/W")}
        if core:
            figures.update(energy=(40 * POWER_KW[nodes], "kJ"), power=(POWER_KW[nodes], "kW"),
                           gflops_per_watt=(rmax / (POWER_KW[nodes] * 1000), "Gflop/s/W"))
        case["perfvalues"].update({f"cluster:cpu:{name}": [value, 0, None, None, unit, "pass"]
                                   for name, (value, unit) in figures.items()})
        case["energy_source"] = "core phase: node sampler (pm_counters) every 1 s, whole node"
    return cases


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = tmp_path_factory.mktemp("results")
    rr.write_run(root, "run-tcp", _energy_cases("tcp", rr.HPL_RMAX["tcp"]))
    rr.write_run(root, "run-ucx", _energy_cases("ucx", rr.HPL_RMAX["ucx"]))
    return root


def _table(root):
    return results.load([root], index=False).table


def _document(root):
    loaded = results.load([root], index=False)
    return report.build_document(loaded.table, loaded.warnings), loaded.table


def test_hpl_table_has_the_column_and_the_energy_subsection_its_table_and_plot(study):
    blocks, table = _document(study)
    terminal = hpl_terminal_table(table)
    assert "Gflop/s/W" in terminal.splitlines()[0]
    expected = rr.HPL_RMAX["ucx"][4] / 2000
    assert f"{expected:.3g}" in terminal
    heading = next(i for i, b in enumerate(blocks) if isinstance(b, document.Heading) and b.text == "Energy to solution")
    table = next(b for b in blocks[heading:] if isinstance(b, document.Table))
    assert table.header[7] == "Gflop/s/W" and len(table.rows) == 6
    chart = next(c for c in document.charts_of(blocks) if c.name == "energy-cluster-cpu")
    core, job = chart.panels
    assert core.xlabel == "Nodes" and {line.label for line in core.lines} == {"tcp", "ucx"}
    ucx = next(line for line in core.lines if line.label == "ucx")
    assert ucx.xs == (1, 2, 4) and ucx.ys[-1] == pytest.approx(expected)
    assert "job total" in job.title


def test_only_a_job_total_is_marked_so_in_the_column(tmp_path):
    rr.write_run(tmp_path, "run", _energy_cases("tcp", {1: 900.0}, core=False))
    terminal = hpl_terminal_table(_table(tmp_path))
    assert f"{900.0 / 450:.3g} (job total)" in terminal


def test_a_run_without_energy_says_no_energy_source(tmp_path):
    rr.write_run(tmp_path, "run", rr.hpl("tcp", {1: 900.0}))
    blocks, table = _document(tmp_path)
    text = document.render_text(blocks)
    assert "Not measured:" in text and "no energy source" in text
    (line,) = hpl_table.hpl_lines(table)
    assert dict(zip(hpl_table.HPL_HEADER, hpl_table.hpl_cells(line)))["Gflop/s/W"] == "-"  # no zero


def test_accept_holds_a_floor_on_gflops_per_watt(study, tmp_path):
    thresholds = tmp_path / "t.yaml"
    thresholds.write_text("criteria:\n  - {benchmark: HPLCheck, figure: gflops_per_watt, min: 1.7}\n")
    rows = _table(study)
    verdicts = acceptance.evaluate(acceptance.load(thresholds, figure_units(rows)), series.build(rows))
    by_stack = {(v.stack, v.at): v.status for v in verdicts}
    assert by_stack[("ucx", "4 node(s)")] == acceptance.PASS  # 3500 Gflop/s / 2 kW
    assert by_stack[("tcp", "4 node(s)")] == acceptance.FAIL  # 3100 / 2000
    assert main(["accept", str(study), "--thresholds", str(thresholds)]) == 1


def test_compare_ranks_stacks_by_gflops_per_watt(study, capsys):
    c = bakeoff.compare(series.build(_table(study)), "stack", "tcp", figure="gflops_per_watt")
    assert [config for config, _ in c.ranking()] == ["ucx", "tcp"]
    assert [g.key[2] for g in c.groups] == ["gflops_per_watt"]
    assert main(["compare", str(study), "--figure", "gflops_per_watt", "--baseline", "tcp"]) == 0
    out = capsys.readouterr().out
    assert "by gflops_per_watt" in out and "Ranked by geometric-mean ratio: ucx" in out


def test_compare_on_a_figure_no_result_reports_is_one_line(study, capsys):
    assert main(["compare", str(study), "--figure", "gflops_per_wat"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--figure" in err[0] and "did you mean 'gflops_per_watt'" in err[0]
