"""STREAMCheck for real on the embedded default: build/bin/stream on the whole machine (one rank, a
thread on every core) with small arrays, held to a theoretical bandwidth the site file gives; and a
theoretical bandwidth below what it measured fails its sanity, naming the caches."""
import json
import os

import pytest
import yaml

from conftest import LOCAL_SITE, REPO, local_partition, perflog_rows, require_tools, run_reframe, unavailable
from scalebench.benchmarks.stream.output import KERNELS

pytestmark = pytest.mark.integration

STREAM = REPO / "build" / "bin" / "stream"
ELEMENTS = 2_000_000  # 48 MB in all: a second or two of STREAM, the rest is ReFrame's


def _run(root, name, theoretical_gbs):
    site = yaml.safe_load(LOCAL_SITE.read_text())
    site["partitions"][0]["memory_bandwidth_gbs"] = theoretical_gbs
    path = root / f"{name}.yaml"
    path.write_text(yaml.safe_dump(site))
    run_dir = root / name
    proc = run_reframe(run_dir, "-r", "-p", "^openmpi-sm$", "-S", f"array_elements={ELEMENTS}",
                       env={**os.environ, "SCALEBENCH_SITE": str(path)}, checks="stream.py", timeout=300)
    report = json.loads((run_dir / "report.json").read_text())
    [case] = [tc for run in report["runs"] for tc in run["testcases"]]
    return proc, case, run_dir


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    require_tools("mpirun")
    if not STREAM.is_file():
        unavailable("needs build/bin/stream (built by scripts/install.sh)")
    root = tmp_path_factory.mktemp("stream")
    # 100 TB/s: far above any node, so the fraction is recorded and nothing fails; 0.5 GB/s: below any.
    return {"held": _run(root, "held", 100000), "below": _run(root, "below", 0.5)}


def _figures(case):
    return {key.split(":")[-1]: value[0] for key, value in case["perfvalues"].items()}


def test_stream_measures_every_kernel_per_node_on_all_cores(runs):
    proc, case, run_dir = runs["held"]
    assert proc.returncode == 0 and case["result"] == "pass", proc.stdout[-3000:]
    cores = local_partition().cores_per_node
    assert (case["num_nodes"], case["num_tasks"], case["num_cpus_per_task"]) == (1, 1, cores)
    assert case["array_elements"] == ELEMENTS and case["stream_rates"] == "GB/s per rank (hpcc form)"
    figures = _figures(case)
    assert set(figures) == {*KERNELS, "memory_bandwidth", "triad_fraction"}
    assert all(figures[k] > 0 for k in KERNELS)
    assert figures["triad_fraction"] == pytest.approx(100 * figures["triad"] / 100000, rel=1e-6)
    assert "OMP_PLACES=cores" in case["binding"]
    assert {row["perf_var"] for row in perflog_rows(run_dir)} == set(figures)


def test_a_rate_above_the_theoretical_bandwidth_fails_sanity_naming_the_caches(runs):
    proc, case, _ = runs["below"]
    assert proc.returncode != 0 and case["result"] == "fail" and case["fail_phase"] == "sanity"
    assert "above the node's theoretical 0.5 GB/s" in case["fail_reason"] and "caches" in case["fail_reason"]
