"""References learned from accepted runs: the median and its bound, what is left out, and the file."""
import statistics

import pytest
import yaml

import reframe_reports as rr
from scalebench.errors import InputError
from scalebench.reporting import references
from scalebench.reporting.references import MAD_TO_SIGMA, Method, case_name, derive, freeze, reference_for
from scalebench.reporting.store import ingest


def sessions(tmp_path, rmax_runs, latency_runs=(), system="cluster"):
    for index, rmax in enumerate(rmax_runs):
        cases = rr.hpl("ucx", {1: rmax}, system=system, rpeak_per_node=2000.0)
        if latency_runs:
            bandwidth, latency = rr.hockney(latency_runs[index], 12000.0)
            cases += rr.osu("ucx", bandwidth, latency, system=system)
        rr.write_run(tmp_path / "results", f"r{index}", cases, start=f"2026010{index + 1}T000000+0000")
    found, warnings = ingest([tmp_path / "results"])
    assert not warnings
    return found


def test_rates_get_a_lower_bound_and_latencies_an_upper_one(tmp_path):
    learned, notes = derive(sessions(tmp_path, [900, 910, 880, 905], [1.2, 1.25, 1.21, 1.3]), "cluster")
    (hpl,) = [figures for name, figures in learned["cpu:openmpi"].items() if name.startswith("HPLCheck")]
    assert hpl["rmax"].value == statistics.median([900, 910, 880, 905])
    assert hpl["rmax"].upper is None and hpl["rmax"].lower < 0
    (latency,) = [figures for name, figures in learned["cpu:openmpi"].items() if name.startswith("OSULatency")]
    assert latency["latency_0"].lower is None and latency["latency_0"].upper > 0
    assert "rpeak_gflops" not in hpl  # an input, not a measurement: no direction in the registry
    assert notes and all("bandwidth_0: median 0 is not a positive figure" in n for n in notes)  # 0 B: no rate


def test_the_bound_is_k_sigma_or_the_floor(tmp_path):
    runs = [1000, 900, 1100, 1000, 950, 1000, 1000, 990, 1005, 2000]  # one wild run among many
    learned, _ = derive(sessions(tmp_path, runs), "cluster", Method(k=3, floor=0.01))
    (hpl,) = learned["cpu:openmpi"].values()
    median = statistics.median(runs)
    sigma = max(MAD_TO_SIGMA * statistics.median(abs(r - median) for r in runs), statistics.stdev(runs))
    assert hpl["rmax"].lower == pytest.approx(-3 * sigma / median)
    learned, _ = derive(sessions(tmp_path / "b", [1000, 1001, 999]), "cluster", Method(floor=0.05))
    (hpl,) = learned["cpu:openmpi"].values()
    assert hpl["rmax"].lower == -0.05


def test_three_runs_with_a_zero_mad_still_get_their_spread(tmp_path):
    """38.35, 35.93, 38.03 Gflop/s, measured: the MAD (0.32) says 0.8%, the runs differ by 6%."""
    learned, _ = derive(sessions(tmp_path, [38.35, 35.93, 38.03]), "cluster")
    (hpl,) = learned["cpu:openmpi"].values()
    assert hpl["rmax"].lower == pytest.approx(-3 * statistics.stdev([38.35, 35.93, 38.03]) / 38.03)
    assert hpl["rmax"].lower < -0.09


def test_too_few_runs_and_other_systems_are_left_out_by_name(tmp_path):
    learned, notes = derive(sessions(tmp_path, [900, 910]), "cluster")
    assert learned == {} and any("2 run(s), fewer than 3" in n for n in notes)
    assert derive(sessions(tmp_path / "b", [900, 910, 920]), "other")[0] == {}


def test_generated_parameters_are_the_same_case():
    name = "HPLCheck %scale=1_node"
    assert case_name(f"{name} %.repeat_no=2") == name
    assert case_name(f"{name} %.part=c:cpu %.nid=n001") == name
    assert case_name(name) == name


def test_method_rejects_nonsense():
    for bad in ({"k": 0}, {"floor": 1.0}, {"floor": -0.1}, {"min_runs": 0}, {"k": float("nan")}):
        with pytest.raises(InputError):
            Method(**bad)


def test_freeze_writes_once_and_the_checks_read_it_back(tmp_path):
    found = sessions(tmp_path, [900, 910, 880])
    refs = tmp_path / "refs"
    path, learned, _ = freeze(found, "cluster", method=Method(), sources=["results"], accepted="PASSED", directory=refs)
    data = yaml.safe_load(path.read_text())
    assert data["provenance"]["sessions"] == sorted(s.start for s in found)
    (name,) = learned["cpu:openmpi"]
    assert reference_for("cluster", "cpu", "openmpi", f"{name} %.repeat_no=1", refs)["rmax"] == (
        900.0, learned["cpu:openmpi"][name]["rmax"].lower, None, "Gflop/s")
    assert reference_for("cluster", "gpu", "openmpi", name, refs) == {}
    assert reference_for("elsewhere", "cpu", "openmpi", name, refs) == {}
    with pytest.raises(InputError, match="references exist already"):
        freeze(found, "cluster", method=Method(), sources=["results"], accepted="PASSED", directory=refs)
    freeze(found, "cluster", method=Method(), sources=["results"], accepted="PASSED", directory=refs, force=True)
    assert len(list(refs.iterdir())) == 2  # the replaced file kept beside the new one


def test_freeze_with_nothing_to_learn_is_an_error(tmp_path):
    with pytest.raises(InputError, match="is the system name right"):
        freeze(sessions(tmp_path, [900, 910, 880]), "nosuch", method=Method(), sources=[], accepted="PASSED",
               directory=tmp_path / "refs")
    assert not (tmp_path / "refs").exists()


@pytest.mark.parametrize("entry, problem", [
    ({"value": "fast"}, "value: not a positive number"),
    ({"value": -1.0}, "value: not a positive number"),
    ({"value": 1.0, "lower": 0.1}, "lower must be <= 0"),
    ({"value": 1.0, "upper": "x"}, "upper: not a share"),
    ([1, 2], "expected value, lower, upper and unit"),
])
def test_a_broken_reference_file_is_named(tmp_path, entry, problem):
    (tmp_path / "cluster.yaml").write_text(yaml.safe_dump({"references": {"cpu:ucx": {"C": {"rmax": entry}}}}))
    references._cached.cache_clear()
    with pytest.raises(InputError, match=problem):
        reference_for("cluster", "cpu", "ucx", "C", tmp_path)
