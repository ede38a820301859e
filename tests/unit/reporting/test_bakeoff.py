"""Bake-off: stacks or systems normalised to a baseline, geometric means, times summed before normalising."""
import math

import pytest

import reframe_reports as rr
from scalebench.analysis import comparison
from scalebench.cli import main
from scalebench.errors import InputError
from scalebench.reporting import bakeoff, series, store as results


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """Two runs with different stacks on one system."""
    root = tmp_path_factory.mktemp("results")
    for stack, cases in rr.two_stack_study().items():
        rr.write_run(root, f"run-{stack}", cases)
    return root


def _series(*paths):
    return series.build(results.load(paths, index=False).table)


def _group(c, benchmark):
    return next(g for g in c.groups if benchmark in g.key)


def _geomean(values):
    return math.exp(sum(map(math.log, values)) / len(values))


def test_stacks_normalised_to_the_baseline(study):
    c = bakeoff.compare(_series(study), "stack", "tcp")
    assert c.configs == ("tcp", "ucx") and c.baseline == "tcp"
    hpl = _group(c, "HPLCheck")
    assert hpl.ratios["ucx"] == pytest.approx({1: 910 / 900, 2: 1790 / 1700, 4: 3500 / 3100})  # rates: value/base
    openfoam = _group(c, "OpenFOAMCheck")  # time per step: base/value
    assert openfoam.ratios["ucx"] == pytest.approx({1: 8.0 / 7.9, 2: 4.2 / 4.0, 4: 2.4 / 2.05})
    latency = _group(c, "OSULatencyCheck")
    assert min(latency.ratios["ucx"]) == 4  # sizes below 4 bytes are timer noise: left out
    assert c.summary["tcp"].geomean == pytest.approx(1.0)


def test_overall_summary_is_the_geomean_of_series_geomeans(study):
    c = bakeoff.compare(_series(study), "stack", "tcp")
    per_series = [_geomean(list(g.ratios["ucx"].values())) for g in c.groups]
    assert c.summary["ucx"].count == len(c.groups) == 5
    assert c.summary["ucx"].geomean == pytest.approx(_geomean(per_series))
    assert c.summary["ucx"].minimum == pytest.approx(min(per_series))
    assert c.per_benchmark["LAMMPSCheck"]["ucx"].count == 5  # per benchmark: every point


def test_baseline_choice_inverts_the_ratios(study):
    tcp = bakeoff.compare(_series(study), "stack", "tcp")
    ucx = bakeoff.compare(_series(study), "stack", "ucx")
    assert ucx.summary["tcp"].geomean == pytest.approx(1 / tcp.summary["ucx"].geomean)


def test_run_times_are_summed_before_normalising(study):
    c = bakeoff.compare(_series(study), "stack", "tcp")
    t = c.totals
    # the registry's run times: LAMMPS loop time (1000 steps) at 5 counts, OpenFOAM wall time at 3
    assert t is not None and len(t.keys) == 8
    totals = {stack: sum(1000 / r for r in rr.LAMMPS_RATES[stack].values())
              + sum(100 * s + 2 for s in rr.OPENFOAM_STEP[stack].values()) for stack in ("tcp", "ucx")}
    assert t.totals == pytest.approx(totals)
    assert t.ratios["ucx"] == pytest.approx(totals["tcp"] / totals["ucx"])
    # not the mean of per-point ratios: the long 1-process runs weigh most
    per_point = [a / b for a, b in zip(rr.OPENFOAM_STEP["tcp"].values(), rr.OPENFOAM_STEP["ucx"].values())]
    assert t.ratios["ucx"] != pytest.approx(_geomean(per_point))


def test_systems_side_by_side_with_their_best_stack(tmp_path):
    rr.write_run(tmp_path, "a", [*rr.lammps("tcp", {1: 100.0, 2: 150.0}, system="vendorA"),
                                 *rr.lammps("ucx", {1: 110.0, 2: 140.0}, system="vendorA")])
    rr.write_run(tmp_path, "b", rr.lammps("cray-mpich", {1: 121.0, 2: 165.0}, system="vendorB"))
    c = bakeoff.compare(_series(tmp_path), "system", "vendorA:cpu")
    (group,) = c.groups
    assert group.values["vendorA:cpu"] == {1: 110.0, 2: 150.0}  # best stack at each point
    assert group.ratios["vendorB:cpu"] == pytest.approx({1: 1.1, 2: 1.1})
    assert c.summary["vendorB:cpu"].geomean == pytest.approx(1.1)


def test_unknown_baseline_and_empty_results_are_errors(study, tmp_path):
    with pytest.raises(InputError, match=r"--baseline: 'uxc' is not a stack .* \(did you mean 'ucx'\?\)"):
        bakeoff.compare(_series(study), "stack", "uxc")
    rr.write_run(tmp_path, "x", [rr.testcase("SiteMemoryCheck", {"triad": (1.0, "MB/s")}, params={})])
    with pytest.raises(InputError, match="no figure of merit"):
        bakeoff.compare(_series(tmp_path), "stack")


def test_series_the_baseline_did_not_run_are_listed(tmp_path):
    rr.write_run(tmp_path, "a", rr.lammps("tcp", {1: 100.0}))
    rr.write_run(tmp_path, "b", [*rr.lammps("ucx", {1: 110.0}), *rr.openfoam("ucx", {1: 50.0})])
    c = bakeoff.compare(_series(tmp_path), "stack", "tcp")
    assert c.without_baseline == ("cluster:cpu OpenFOAMCheck time_per_step case=cavity scaling=strong",)


def test_compare_cli(study, capsys):
    assert main(["compare", str(study), "--baseline", "tcp"]) == 0
    out = capsys.readouterr().out
    assert "Bake-off: stacks against tcp" in out and "Run times summed, then normalised" in out
    line = next(l for l in out.splitlines() if l.startswith("ucx") and "Series" not in l)
    assert line.split()[1] == "5"
    assert main(["compare", str(study), "--format", "md"]) == 0
    assert "| Configuration | Series | Min ratio | Geomean ratio | Max ratio |" in capsys.readouterr().out


def test_compare_json_is_the_text_in_fields(study, capsys):
    import json

    assert main(["compare", str(study), "--baseline", "tcp", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    compared = bakeoff.compare(_series(study), "stack", "tcp")
    assert found["baseline"] == "tcp" and [r["config"] for r in found["ranking"]] == [c for c, _ in compared.ranking()]
    assert found["summary"]["ucx"]["count"] == 5 and found["summary"]["tcp"]["geomean"] == 1.0
    assert found["totals"]["ratios"]["tcp"] == 1.0 and len(found["groups"]) == len(compared.groups)


def test_health_warnings_use_the_same_time_like_values():
    curves = {"a": {4: 1.0, 8: 1.0}, "b": {4: 20.0, 8: 1.5}}  # latencies
    warnings = comparison.health_warnings(bakeoff.time_like_curves(curves, higher_is_better=False))
    assert [(w.config, w.size) for w in warnings] == [("b", 4)]
    bandwidths = {"a": {4: 100.0, 8: 100.0}, "b": {4: 5.0, 8: 80.0}}
    warnings = comparison.health_warnings(bakeoff.time_like_curves(bandwidths, higher_is_better=True))
    assert [(w.config, w.size, w.times_best) for w in warnings] == [("b", 4, pytest.approx(20.0))]
